"""Find valgrind and build the client-request library (client requests and the collector's
fork loop) with the system C compiler, cached."""
from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from benchkit.errors import ValgrindNotFoundError
from benchkit.system.files import cache_dir

# Client requests, and the collector server's fork loop: one library, loaded with ctypes.
SOURCES = [Path(__file__).with_name("client.c"), Path(__file__).with_name("fork_loop.c")]
INSTALL_HINT = ("Install valgrind and its headers (Debian/Ubuntu: `apt-get install valgrind`; "
                "Fedora: `dnf install valgrind valgrind-devel`; conda: "
                "`conda install -c conda-forge valgrind`).")


def find_valgrind() -> str:
    """valgrind's path, or ValgrindNotFoundError saying how to install it."""
    path = shutil.which("valgrind")
    if path is None:
        raise ValgrindNotFoundError(
            "collect_callgrind needs valgrind, which is not on PATH. " + INSTALL_HINT)
    return path


@functools.lru_cache(maxsize=None)
def valgrind_version(valgrind: str) -> str:
    """`valgrind --version` (recorded with every collection)."""
    out = subprocess.run([valgrind, "--version"], capture_output=True, text=True, timeout=30)
    return out.stdout.strip()


def header_dirs() -> list[str]:
    """Include directories that hold valgrind/callgrind.h."""
    dirs = [os.environ.get("BENCHKIT_VALGRIND_INCLUDE", "")]
    prefix = Path(sys.prefix)
    dirs += [str(prefix / "include"), "/usr/include", "/usr/local/include"]
    return [d for d in dirs if d and (Path(d) / "valgrind" / "callgrind.h").is_file()]


def required_header_dirs() -> list[str]:
    """header_dirs(), or a clear error when valgrind/callgrind.h is nowhere."""
    includes = header_dirs()
    if not includes:
        raise ValgrindNotFoundError(
            "collect_callgrind needs valgrind's header valgrind/callgrind.h, which was not found "
            "in /usr/include, /usr/local/include or the environment's include directory (set "
            "BENCHKIT_VALGRIND_INCLUDE to the directory that holds valgrind/). " + INSTALL_HINT)
    return includes


def build_client_library() -> Path:
    """Compile SOURCES into a shared library once per (sources, headers, platform); cached."""
    includes = required_header_dirs()
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise ValgrindNotFoundError(
            "collect_callgrind compiles a tiny helper with a C compiler, and none was found "
            "(no `cc` or `gcc` on PATH, CC unset). Install gcc (`apt-get install gcc`).")
    header = Path(includes[0]) / "valgrind" / "callgrind.h"
    digest = hashlib.sha256(b"".join(s.read_bytes() for s in SOURCES) + header.read_bytes() +
                            sysconfig.get_platform().encode()).hexdigest()[:16]
    target = cache_dir() / f"libbenchkit_callgrind-{digest}.so"
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(f".{os.getpid()}.tmp")
    cmd = [compiler, "-O2", "-shared", "-fPIC", f"-I{includes[0]}", *map(str, SOURCES),
           "-o", str(tmp)]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise ValgrindNotFoundError(
            f"building the callgrind helper failed ({' '.join(cmd)}):\n{result.stderr[-2000:]}")
    os.replace(tmp, target)
    return target
