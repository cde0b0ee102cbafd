"""Prepare what the collector runs: its working directory, setup and job files, environment.

Everything here removes a way for the counts to depend on where or how benchkit is installed
or called: a working directory whose path always has the same length, the server script and
a `benchkit` link inside it (so code-object file names do not depend on the install path),
only the import-path entries the collector needs, and a small fixed environment.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import secrets
import sys
import tempfile
from pathlib import Path
from typing import Any, Sequence

import benchkit
from benchkit.core.callgrind.requests import CollectorControls, CountRequest
from benchkit.engines import transfer
from benchkit.engines.callgrind.command import child_failure
from benchkit.system import machine
from benchkit.system.processes import last_lines, owned_prefix, run_command

DEFAULT_CONTROLS = CollectorControls()

PACKAGE_DIR = Path(benchkit.__file__).resolve().parent
# glibc malloc without trimming, with a fixed mmap threshold and a large top pad: the measured
# loop's allocator paths then do not depend on the heap history before it. Enough arenas that
# every task's measuring thread gets a fresh one of its own.
MALLOC_TUNABLES = ("glibc.malloc.trim_threshold=4294967296:glibc.malloc.top_pad=1048576:"
                   "glibc.malloc.mmap_threshold=33554432:glibc.malloc.arena_max=1024")
# Layout k > 0 moves the stack by k * STACK_STEP bytes of environment and puts k * HEAP_STEP
# bytes and 97k small strings (of 64 sizes, so every small-object size class shifts) on the heap
# before the snippet's objects.
STACK_STEP = 4096 + 48
STACK_POSITIONS = 16
HEAP_STEP = 4099
# The benchkit files that shape a counted process, relative to the package: a change to any
# of them can move counts a little with no change to the code measured. Python snippets run
# in the collector server and its forks; C++ snippets in a program built by engines/cpp.
PYTHON_COLLECTOR_SOURCES = (
    "__init__.py", "errors.py", "core/__init__.py", "core/measure/__init__.py",
    "core/measure/task.py", "core/measure/snippets.py",
    "core/callgrind/__init__.py", "core/callgrind/requests.py", "engines/__init__.py",
    "engines/transfer.py", "engines/wall/__init__.py", "engines/wall/loop.py",
    "engines/wall/threads.py", "engines/callgrind/__init__.py", "engines/callgrind/server.py",
    "engines/callgrind/fork_loop.c", "engines/callgrind/client.c",
    "engines/callgrind/workdir.py", "engines/callgrind/command.py",
    "engines/callgrind/toolchain.py", "engines/callgrind/collector.py",
    "engines/callgrind/servers.py")
CPP_COLLECTOR_SOURCES = (
    "core/callgrind/requests.py", "engines/cpp/__init__.py", "engines/cpp/driver.c",
    "engines/cpp/source.py", "engines/cpp/toolchain.py", "engines/callgrind/workdir.py",
    "engines/callgrind/command.py", "engines/callgrind/toolchain.py")


@functools.lru_cache(maxsize=None)
def collector_revision(sources: tuple[str, ...] = PYTHON_COLLECTOR_SOURCES) -> str:
    """A short digest of the files that shape a counted process: results files record it, and
    `compare` warns when two sides' counts come from different revisions."""
    digest = hashlib.sha256()
    for relative in sources:
        digest.update(relative.encode() + b"\0" + (PACKAGE_DIR / relative).read_bytes() + b"\0")
    return digest.hexdigest()[:12]


def make_workdir() -> Path:
    """A fresh working directory whose path has the same length in every call."""
    name = f"{owned_prefix('cg')}{secrets.token_hex(4)}"
    path = Path(tempfile.gettempdir()) / name
    path.mkdir(mode=0o700)
    return path


@functools.lru_cache(maxsize=None)
def _default_sys_path(executable: str) -> tuple[str, ...]:
    """sys.path of a fresh child of this interpreter in the normalised environment."""
    out = run_command([executable, "-c", "import json, sys; print(json.dumps(sys.path))"],
                      env=child_environment(), timeout=60)
    return tuple(json.loads(out.stdout)) if out.returncode == 0 else ()


def extra_sys_path(workdir: Path, needed: set[str] | None = None) -> list[str]:
    """Caller sys.path entries that provide modules the child needs (the modules the pickled
    globals refer to) and that its default sys.path lacks; usually none."""
    needed = transfer.needed_modules(workdir) if needed is None else needed
    defaults = set(_default_sys_path(sys.executable))
    entries = [(entry, os.path.realpath(entry)) for entry in set(sys.path) | defaults
               if entry and os.path.isdir(entry)]
    extra: list[str] = []
    for name in sorted(needed):
        module = sys.modules.get(name)
        origin = getattr(module, "__file__", None) if module else None
        if origin is None and name not in sys.builtin_module_names:
            try:
                spec = importlib.util.find_spec(name)
            except (ImportError, ValueError):   # e.g. a __main__ without a spec (xdist)
                spec = None
            origin = spec.origin if spec else None
            if origin in ("built-in", "frozen"):
                origin = None
        if origin is None:
            continue
        origin = os.path.realpath(origin)
        # The innermost entry holding the module is the one it comes from: a checkout on
        # sys.path (`python -m pytest` adds the working directory) also holds a .venv inside
        # it, whose site-packages is a default entry.
        holders = [(len(real), entry) for entry, real in entries
                   if origin.startswith(real + os.sep)]
        if holders:
            entry = max(holders)[1]
            if entry not in defaults and entry not in extra:
                extra.append(entry)
    return extra


def _mirror_lib(real: Path, mirror: Path) -> None:
    """`mirror` as links to `real`'s entries, except that each site-packages is a directory
    of links without benchkit's own install hooks: an editable install's finder holds the
    checkout's path (whose length moved the tour's x * y from 976,594 to 978,094), and the
    collector imports benchkit through its link in the working directory anyway."""
    mirror.mkdir()
    for entry in sorted(real.iterdir()):
        site_dir = entry / "site-packages"
        if not site_dir.is_dir():
            (mirror / entry.name).symlink_to(entry)
            continue
        (mirror / entry.name / "site-packages").mkdir(parents=True)
        for inner in sorted(entry.iterdir()):
            if inner.name != "site-packages":
                (mirror / entry.name / inner.name).symlink_to(inner)
        for package in sorted(site_dir.iterdir()):
            if not machine.OWN_INSTALL_HOOKS.fullmatch(package.name):
                (mirror / entry.name / "site-packages" / package.name).symlink_to(package)


def interpreter(workdir: Path, controls: CollectorControls = DEFAULT_CONTROLS) -> str:
    """The interpreter the collector runs. For a virtualenv: a mirror of it at a fixed-length
    path in the working directory (its pyvenv.cfg, a link to its bin/python, its lib as
    links without benchkit's own install hooks), so the strings Python builds from its own
    location (sys.executable, sys.prefix, the site-packages entries) have the same length
    wherever the virtualenv lives, and nothing in it depends on where benchkit lives."""
    config = Path(sys.prefix) / "pyvenv.cfg"
    if not controls.fixed_paths or sys.prefix == sys.base_prefix or not config.is_file():
        return sys.executable
    mirror = workdir / "venv"
    if not mirror.exists():
        (mirror / "bin").mkdir(parents=True)
        lines = config.read_text(encoding="utf-8").splitlines(keepends=True)
        (mirror / "pyvenv.cfg").write_text(   # without `command`, which names the venv's path
            "".join(line for line in lines if not line.startswith("command")), encoding="utf-8")
        for name in dict.fromkeys(["lib", sys.platlibdir]):
            real = Path(sys.prefix) / name
            if (mirror / name).exists() or not real.is_dir():
                continue
            if name != "lib" and real.resolve() == (Path(sys.prefix) / "lib").resolve():
                (mirror / name).symlink_to("lib")   # lib64 -> lib
            else:
                _mirror_lib(real, mirror / name)
        # to the binary itself: the length of a chain of links would show through again
        (mirror / "bin" / "python").symlink_to(os.path.realpath(sys.executable))
    return str(mirror / "bin" / "python")


def child_environment(layout: int = 0,
                      controls: CollectorControls = DEFAULT_CONTROLS) -> dict[str, str]:
    """A small fixed environment: same counts whatever the caller's shell holds."""
    env = {"PATH": "/usr/bin:/bin", "PYTHONHASHSEED": "0", "LC_ALL": "C", "LANG": "C",
           "HOME": os.path.expanduser("~"), "GLIBC_TUNABLES": MALLOC_TUNABLES}
    for name in ("LD_LIBRARY_PATH", "VALGRIND_LIB"):
        if name in os.environ:
            env[name] = os.environ[name]
    if layout:   # stack positions cycle: one environment string may not exceed 128 KiB
        env["BENCHKIT_LAYOUT_PAD"] = "." * (layout % STACK_POSITIONS * STACK_STEP)
    env.update(controls.child_environment)
    return env


def write_setup(workdir: Path, name: str, library: Path, modules: Sequence[str],
                controls: CollectorControls = DEFAULT_CONTROLS) -> None:
    """A collector server's setup: the client library, the import path it needs, the modules
    to import before forking, the layout parameters."""
    setup: dict[str, Any] = {"library": str(library), "modules": list(modules),
                             "heap_step": HEAP_STEP, "own_thread": controls.own_thread}
    if controls.fixed_paths:
        # benchkit through a link in the working directory: the same file names for its code
        # objects wherever it is installed.
        link = workdir / "path" / "benchkit"
        if not link.exists():
            link.parent.mkdir(exist_ok=True)
            link.symlink_to(PACKAGE_DIR, target_is_directory=True)
        setup["path_first"] = [str(workdir / "path")]
        setup["extra_sys_path"] = extra_sys_path(workdir, set(modules) - {"benchkit"})
    else:
        setup["path_first"] = []
        setup["extra_sys_path"] = extra_sys_path(workdir, set(modules) | {"benchkit"})
    (workdir / name).write_text(json.dumps(setup), encoding="utf-8")


def _task_fields(tag: str, request: CountRequest, workdir: Path) -> dict[str, Any]:
    return {"id": 0, "number": request.number, "repeats": request.repeats,
            "baseline": request.collect_baseline,
            **transfer.write_task(tag, request.task, workdir)}


def write_task_job(workdir: Path, tag: str, request: CountRequest) -> list[Path]:
    """job-<tag>.json for one task (and its globals' files); returns the files written for
    the globals."""
    before = set(workdir.iterdir())
    fields = _task_fields(tag, request, workdir)
    written = sorted(set(workdir.iterdir()) - before)
    needed = set()
    for path in written:
        try:
            needed |= transfer.pickled_modules(path.read_bytes())
        except Exception:
            continue
    job = {"tag": tag, "tasks": [fields],
           "extra_sys_path": extra_sys_path(workdir, needed - {"benchkit"})}
    (workdir / f"job-{tag}.json").write_text(json.dumps(job), encoding="utf-8")
    return written


def prewarm(workdir: Path, setup_name: str, tags: Sequence[str],
            requests: Sequence[CountRequest],
            controls: CollectorControls = DEFAULT_CONTROLS) -> tuple[int, Exception] | None:
    """Run the jobs natively up to their loops, once, in one process: bytecode caches are
    written before any counted run (and a broken snippet or global fails fast). Returns
    None, or the position of the first job that failed and its error (the jobs after it
    were not prewarmed)."""
    if not controls.prewarm:
        return None
    jobs = [json.loads((workdir / f"job-{tag}.json").read_text(encoding="utf-8"))
            for tag in tags]
    combined = {"tag": "prewarm",
                "tasks": [{**t, "id": n} for n, t in enumerate(t for j in jobs
                                                               for t in j["tasks"])],
                "extra_sys_path": sorted({p for j in jobs for p in j["extra_sys_path"]})}
    name = f"job-prewarm-{tags[0]}.json"
    (workdir / name).write_text(json.dumps(combined), encoding="utf-8")
    # killed and reaped on any way out (Ctrl-C included): a child still dying while the
    # working directory is removed would leave both behind
    done = run_command([interpreter(workdir, controls), str(workdir / "server.py"),
                        setup_name, "--prewarm", name], cwd=workdir,
                       env=child_environment(0, controls), timeout=600)
    stderr = done.stderr
    if done.returncode == 0:
        return None
    failed = workdir / "error-prewarm.json"
    index = 0
    if failed.is_file():
        info = json.loads(failed.read_text(encoding="utf-8"))
        index = min(int(info.get("task", 0) or 0), len(tags) - 1)
        failed.rename(workdir / f"error-{tags[index]}.json")
    return index, child_failure(workdir, tags[index], requests[index].task.spec.title,
                                done.returncode, last_lines(stderr))
