"""Find valgrind and build the client-request library (client requests and the collector's
fork loop) with the system C compiler, cached."""
from __future__ import annotations

import functools
import os
import shutil
import sys
from pathlib import Path

from benchkit.errors import ValgrindNotFoundError
from benchkit.engines.native import build_cached
from benchkit.system.processes import run_command

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
    out = run_command([valgrind, "--version"], timeout=30)
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
    header = Path(includes[0]) / "valgrind" / "callgrind.h"
    return build_cached("benchkit_callgrind", SOURCES, includes[0], header.read_bytes(),
                        "the callgrind helper of collect_callgrind", ValgrindNotFoundError)
