"""Compile C++ snippets against the installed torch with the system compiler (an edge).

Artifacts are cached by content in ~/.cache/benchkit/cpp: the source, torch's version and
install, the compiler's identity and the flags make the key, so a second Timer with the same
snippet compiles nothing, in this process or any later one. With BENCHKIT_CPP_PCH=1,
`torch/torch.h` is also precompiled once per (torch, compiler, flags): a new snippet then
compiles about twice as fast, at the cost of a ~0.7 GB precompiled header on disk.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import importlib.util
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from benchkit.engines.callgrind.toolchain import header_dirs
from benchkit.engines.cpp.source import PCH_HEADER, Source, map_diagnostics
from benchkit.errors import CppCompileError, CppToolchainError
from benchkit.system.files import cache_dir
from benchkit.system.processes import last_lines, owned_prefix, run_command

PCH_NAME = "benchkit_torch.h"
DRIVER = Path(__file__).with_name("driver.c")
# The snippet's directory in its debug info: absolute, so debug readers take it as it is.
SNIPPET_DIR = "/benchkit-snippet"



@functools.lru_cache(maxsize=None)
def compiler() -> str:
    """The C++ compiler: $CXX, else c++, g++ or clang++ on PATH."""
    for candidate in (os.environ.get("CXX"), "c++", "g++", "clang++"):
        if candidate and shutil.which(candidate):
            return shutil.which(candidate)
    raise CppToolchainError(
        "C++ snippets need a C++ compiler, and none was found (CXX unset; no c++, g++ or "
        "clang++ on PATH). Install one: `apt-get install g++` (Debian/Ubuntu), "
        "`dnf install gcc-c++` (Fedora) or `conda install -c conda-forge cxx-compiler`.")


@functools.lru_cache(maxsize=None)
def compiler_identity(cxx: str) -> str:
    """The compiler's version line (part of every cache key)."""
    out = run_command([cxx, "--version"], timeout=60)
    return (out.stdout.splitlines() or ["unknown"])[0]


@functools.lru_cache(maxsize=None)
def torch_install() -> dict:
    """torch's include and library directories, version and C++ ABI."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        raise CppToolchainError("C++ snippets are compiled against torch, which is not "
                                "installed: `pip install torch`.")
    root = Path(list(spec.submodule_search_locations)[0])
    include = [root / "include", root / "include" / "torch" / "csrc" / "api" / "include"]
    lib = root / "lib"
    if not (include[0] / "ATen").is_dir() or not (include[1] / "torch" / "torch.h").is_file():
        raise CppToolchainError(f"torch at {root} ships no C++ headers ({include[0]}); install "
                                "a torch wheel that includes them (the PyPI wheels do).")
    libraries = [name for name in ("c10", "torch_cpu", "torch") if
                 (lib / f"lib{name}.so").is_file()]
    if "torch_cpu" not in libraries:
        raise CppToolchainError(f"torch at {root} ships no libtorch_cpu.so in {lib}.")
    import torch
    return {"root": str(root), "include": [str(p) for p in include], "lib": str(lib),
            "libraries": libraries, "version": importlib.metadata.version("torch"),
            "abi": int(torch.compiled_with_cxx11_abi())}


def cxx_standard(torch_version: str) -> str:
    """The C++ standard torch's headers need: C++20 from torch 2.14 on (its headers stop with
    '#error C++20 or later compatible compiler is required'), C++17 before."""
    numbers = [int(n) for n in re.findall(r"\d+", torch_version)[:2]] + [0, 0]
    return "c++20" if tuple(numbers[:2]) >= (2, 14) else "c++17"


def _flags(install: dict) -> list[str]:
    flags = [f"-std={cxx_standard(install['version'])}", "-O2", "-fPIC",
             f"-D_GLIBCXX_USE_CXX11_ABI={install['abi']}"]
    for path in install["include"]:
        flags += ["-isystem", path]
    return flags


def _link_flags(install: dict) -> list[str]:
    return ([f"-L{install['lib']}", f"-Wl,-rpath,{install['lib']}"] +
            [f"-l{name}" for name in install["libraries"]])


def _key(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:24]


def _run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return run_command(cmd, cwd=cwd, timeout=1800)


def _precompiled_header(cxx: str, install: dict, flags: list[str]) -> Path | None:
    """A precompiled torch/torch.h for these flags (built once) when BENCHKIT_CPP_PCH=1;
    None otherwise or if it cannot be built: snippets then parse the header themselves."""
    if os.environ.get("BENCHKIT_CPP_PCH", "").lower() not in ("1", "true", "yes"):
        return None
    key = _key(cxx, compiler_identity(cxx), install["root"], install["version"], *flags)
    directory = cache_dir() / "cpp" / f"pch-{key}"
    header = directory / PCH_NAME
    if (directory / f"{PCH_NAME}.gch").is_file():
        return header
    directory.mkdir(parents=True, exist_ok=True)
    header.write_text(PCH_HEADER, encoding="utf-8")
    tmp = directory / f"{PCH_NAME}.gch.{os.getpid()}.tmp"
    done = _run([cxx, *flags, "-x", "c++-header", str(header), "-o", str(tmp)], directory)
    if done.returncode != 0:
        tmp.unlink(missing_ok=True)
        return None
    os.replace(tmp, directory / f"{PCH_NAME}.gch")
    return header


def _install_artifact(built: Path, target: Path) -> None:
    staged = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    shutil.copyfile(built, staged)
    os.chmod(staged, 0o755)
    os.replace(staged, target)


def build(source: Source) -> Path:
    """Compile a snippet's `source` into a shared library; returns the cached path."""
    cxx = compiler()
    install = torch_install()
    # -g1: file and line of the snippet's code in callgrind's output, as torch's -g gives,
    # for no measurable compile time (-g: +40 %); neither changes the generated code.
    # valgrind's headers, where installed, add bk_callgrind_main.
    flags = _flags(install) + ["-g1"] + [f"-I{d}" for d in header_dirs()[:1]]
    key = _key("snippet", SNIPPET_DIR, source.text, install["root"], install["version"], cxx,
               compiler_identity(cxx), *flags)
    target = cache_dir() / "cpp" / f"snippet-{key}.so"
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    pch = _precompiled_header(cxx, install, flags)
    with tempfile.TemporaryDirectory(prefix=owned_prefix("cpp")) as tmp:
        src = Path(tmp) / "snippet.cpp"
        src.write_text(source.text, encoding="utf-8")
        out = Path(tmp) / "snippet.so"
        # The snippet's file is named /benchkit-snippet/snippet.cpp in the debug info, and so
        # in the counts: not the temp dir's random name, which would differ on every compile.
        cmd = [cxx, *flags, f"-fdebug-prefix-map={tmp}={SNIPPET_DIR}",
               *(["-include", str(pch)] if pch else []), "-shared", src.name,
               "-o", str(out), *_link_flags(install)]
        done = _run(cmd, Path(tmp))
        if done.returncode != 0:
            errors = map_diagnostics(done.stderr, source, "snippet.cpp")
            shown = "\n".join(f"  {e}" for e in errors[:10]) or last_lines(done.stderr, 20)
            raise CppCompileError(errors, " ".join(cmd[:1] + ["..."] + cmd[-3:]), shown)
        _install_artifact(out, target)
    return target


def driver() -> Path:
    """The program that runs a snippet's library under valgrind (driver.c); built once."""
    cxx = compiler()
    code = DRIVER.read_bytes()
    key = _key("driver", code.decode(), cxx, compiler_identity(cxx))
    target = cache_dir() / "cpp" / f"driver-{key}"
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=owned_prefix("cpp")) as tmp:
        out = Path(tmp) / "driver"
        done = _run([cxx, "-x", "c", "-O2", str(DRIVER), "-o", str(out), "-ldl"], Path(tmp))
        if done.returncode != 0:
            raise CppToolchainError(f"building benchkit's C++ driver with {cxx} failed:\n"
                                    f"{last_lines(done.stderr, 20)}")
        _install_artifact(out, target)
    return target
