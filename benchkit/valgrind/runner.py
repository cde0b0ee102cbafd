"""Run snippets under valgrind in one child process and parse what it dumps (the edge)."""
from __future__ import annotations

import dataclasses
import functools
import importlib.util
import json
import os
import pickle
import pickletools
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import types
from pathlib import Path
from typing import Any, Callable, Sequence

from benchkit.errors import (CallgrindError, GlobalNotTransferableError, SnippetError)
from benchkit.task import TaskSpec
from benchkit.valgrind import helper, parser
from benchkit.valgrind.callgrind_stats import CallgrindStats
from benchkit.valgrind.counts import FunctionCounts

CHILD = Path(__file__).with_name("child.py")
TEMP_PREFIX = "benchkit-cg-"
# Fixed cache geometry, so cache-simulation results do not depend on the host CPU.
# glibc malloc without trimming, with a fixed mmap threshold and a large top pad: the measured
# loop's allocator paths then do not depend on the heap history before it.
MALLOC_TUNABLES = ("glibc.malloc.trim_threshold=4294967296:glibc.malloc.top_pad=1048576:"
                   "glibc.malloc.mmap_threshold=33554432")
CACHE_SIM_ARGS = ["--cache-sim=yes", "--I1=32768,8,64", "--D1=32768,8,64", "--LL=8388608,16,64"]


@dataclasses.dataclass
class CallgrindTask:
    task_spec: TaskSpec
    stmt: str | Callable[[], object]
    setup: str | Callable[[], object]
    globals: dict[str, Any]
    number: int
    repeats: int = 1
    collect_baseline: bool = True


def _sweep_stale_dirs() -> None:
    """Remove temp dirs left by benchkit processes that were killed (SIGKILL, OOM)."""
    base = Path(tempfile.gettempdir())
    for path in base.glob(TEMP_PREFIX + "*"):
        match = re.match(re.escape(TEMP_PREFIX) + r"(\d+)-", path.name)
        if not match:
            continue
        try:
            os.kill(int(match.group(1)), 0)
        except ProcessLookupError:
            shutil.rmtree(path, ignore_errors=True)
        except PermissionError:
            pass


def _is_torch_script(value: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(
        value, (torch.jit.ScriptModule, torch.jit.ScriptFunction))


def _write_globals(task_id: int, values: dict[str, Any], workdir: Path) -> dict[str, Any]:
    specs: dict[str, Any] = {}
    for name, value in values.items():
        if isinstance(value, types.ModuleType):
            specs[name] = {"how": "module", "module": value.__name__}
            continue
        file = f"global-{task_id}-{len(specs)}"
        if _is_torch_script(value):
            import torch
            torch.jit.save(value, str(workdir / file))
            specs[name] = {"how": "jit", "file": file}
            continue
        try:
            data = pickle.dumps(value)
        except Exception as error:
            raise GlobalNotTransferableError(
                f"global {name!r} ({type(value).__name__}) cannot be sent to the callgrind "
                f"child process: {type(error).__name__}: {error}. Pass picklable values, "
                "tensors, nn.Modules or scripted (torch.jit.script) functions, or build the "
                "object in `setup`.") from None
        (workdir / file).write_bytes(data)
        specs[name] = {"how": "pickle", "file": file}
    return specs


def _snippet_fields(task_id: int, name: str, snippet: Any, workdir: Path) -> dict[str, Any]:
    if isinstance(snippet, str):
        return {name: snippet}
    file = f"{name}-{task_id}.pkl"
    try:
        (workdir / file).write_bytes(pickle.dumps(snippet))
    except Exception as error:
        raise GlobalNotTransferableError(
            f"the callable {name} {snippet!r} cannot be sent to the callgrind child ({error}); "
            f"define it at module level in an importable module, or pass {name} as a string."
        ) from None
    return {name: "pass", f"{name}_pickle": file}


@functools.lru_cache(maxsize=None)
def _default_sys_path(executable: str) -> tuple[str, ...]:
    """sys.path of a fresh child of this interpreter in the normalised environment."""
    out = subprocess.run([executable, "-c", "import json, sys; print(json.dumps(sys.path))"],
                         capture_output=True, text=True, env=child_environment(), timeout=60)
    return tuple(json.loads(out.stdout)) if out.returncode == 0 else ()


def _pickled_modules(data: bytes) -> set[str]:
    """Top-level modules a pickle refers to (GLOBAL / STACK_GLOBAL opcodes)."""
    modules, strings, memo = set(), [], {}
    for op, arg, _ in pickletools.genops(data):
        if op.name in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE", "BINUNICODE8"):
            strings.append(arg)
        elif op.name == "MEMOIZE" and strings:
            memo[len(memo)] = strings[-1]
        elif op.name in ("BINGET", "LONG_BINGET", "GET") and arg in memo:
            strings.append(memo[arg])
        elif op.name == "GLOBAL":
            modules.add(arg.split(" ")[0].split(".")[0])
        elif op.name == "STACK_GLOBAL" and len(strings) >= 2:
            modules.add(strings[-2].split(".")[0])
    return modules


def extra_sys_path(workdir: Path) -> list[str]:
    """Caller sys.path entries that provide modules the child needs (benchkit, and modules
    the pickled globals refer to) and that its default sys.path lacks; usually none."""
    needed = {"benchkit"}
    for file in workdir.iterdir():
        if file.name.startswith(("global-", "stmt-", "setup-")):
            try:
                needed |= _pickled_modules(file.read_bytes())
            except Exception:  # a torch.jit archive, not a pickle
                continue
    defaults = set(_default_sys_path(sys.executable))
    extra: list[str] = []
    for name in sorted(needed):
        module = sys.modules.get(name)
        origin = getattr(module, "__file__", None) if module else None
        if origin is None:
            spec = importlib.util.find_spec(name) if name not in sys.builtin_module_names else None
            origin = spec.origin if spec else None
            if origin in ("built-in", "frozen"):
                origin = None
        if origin is None:
            continue
        origin = os.path.realpath(origin)
        for entry in sys.path:
            if entry and os.path.isdir(entry) and origin.startswith(
                    os.path.realpath(entry) + os.sep):
                if entry not in defaults and entry not in extra:
                    extra.append(entry)
                break
    return extra


def child_environment() -> dict[str, str]:
    """A small fixed environment: same counts whatever the caller's shell holds."""
    env = {"PATH": "/usr/bin:/bin", "PYTHONHASHSEED": "0", "LC_ALL": "C", "LANG": "C",
           "HOME": os.path.expanduser("~"), "GLIBC_TUNABLES": MALLOC_TUNABLES}
    for name in ("LD_LIBRARY_PATH", "VALGRIND_LIB"):
        if name in os.environ:
            env[name] = os.environ[name]
    return env


def _tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def _run_child(cmd: list[str], workdir: Path, env: dict[str, str],
               timeout: float | None) -> subprocess.CompletedProcess:
    process = subprocess.Popen(cmd, cwd=workdir, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except BaseException as error:  # timeout, Ctrl-C, anything: the child must not outlive us
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait()
        if isinstance(error, subprocess.TimeoutExpired):
            raise CallgrindError(f"valgrind did not finish within timeout={timeout} s; "
                                 "lower `number` or raise `timeout`.") from None
        raise
    return subprocess.CompletedProcess(cmd, process.returncode, stdout, stderr)


def _child_failure(result: subprocess.CompletedProcess, workdir: Path,
                   tasks: Sequence[CallgrindTask]) -> Exception:
    error_file = workdir / "error.json"
    if error_file.is_file():
        info = json.loads(error_file.read_text(encoding="utf-8"))
        if info["kind"] == "global":
            return GlobalNotTransferableError(
                f"global {info['name']!r} could not be rebuilt in the callgrind child: "
                f"{info['message']}. Classes must be importable by the child (defined in a "
                "module, not in __main__), or build the object in `setup`.")
        title = tasks[info["task"]].task_spec.title
        return CallgrindError(f"{title!r}: {info['message']} (under callgrind)\n"
                              f"{_tail(info.get('traceback', ''), 15)}")
    how = (f"was killed by signal {-result.returncode}" if result.returncode < 0
           else f"exited with status {result.returncode}")
    return CallgrindError(f"the valgrind child {how}. Last lines of its stderr:\n"
                          f"{_tail(result.stderr)}")


def _debug_symbols(counts: FunctionCounts) -> bool:
    torch_rows = [fn for _, fn in counts if "libtorch" in fn]
    if not torch_rows:
        return True
    return sum(fn.startswith("???:") for fn in torch_rows) <= len(torch_rows) / 2


def _function_counts(profile: parser.Profile, inclusive: bool) -> FunctionCounts:
    table = profile.inclusive if inclusive else profile.exclusive
    return FunctionCounts.from_dict({fn: c[0] for fn, c in table.items()}, inclusive)


def collect(tasks: Sequence[CallgrindTask], *, cache_sim: bool = False,
            timeout: float | None = None, retain_out_file: bool = False,
            ) -> list[tuple[CallgrindStats, ...]]:
    """Collect every task in one valgrind process. Returns per task one CallgrindStats per
    repeat."""
    valgrind = helper.find_valgrind()
    library = helper.build_client_library()
    _sweep_stale_dirs()
    workdir = Path(tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}{os.getpid()}-"))
    try:
        job = {"library": str(library), "tasks": []}
        for i, task in enumerate(tasks):
            job["tasks"].append({
                "id": i, "number": task.number, "repeats": task.repeats,
                "baseline": task.collect_baseline, "num_threads": task.task_spec.num_threads,
                "globals": _write_globals(i, task.globals, workdir),
                **_snippet_fields(i, "stmt", task.stmt, workdir),
                **_snippet_fields(i, "setup", task.setup, workdir)})
        job["extra_sys_path"] = extra_sys_path(workdir)
        (workdir / "job.json").write_text(json.dumps(job), encoding="utf-8")
        aslr = helper.aslr_prefix()
        cmd = aslr + [valgrind, "--tool=callgrind", "--callgrind-out-file=callgrind.out",
                      "--instr-atstart=no", "--collect-atstart=no", "--dump-line=yes",
                      # One name per function: no fn'2 recursion-level variants in diffs.
                      "--separate-recs=1",
                      # Faster translation; guest instruction counts are unaffected.
                      "--vex-iropt-level=1", "--vex-guest-chase=no"]
        if cache_sim:
            cmd += CACHE_SIM_ARGS
        cmd += [sys.executable, str(CHILD), "job.json"]
        result = _run_child(cmd, workdir, child_environment(), timeout)
        if result.returncode != 0:
            raise _child_failure(result, workdir, tasks)
        profiles: dict[str, tuple[parser.Profile, Path]] = {}
        for out_file in sorted(workdir.glob("callgrind.out*")):
            for profile in parser.parse(out_file.read_text(encoding="utf-8", errors="replace"),
                                        source=str(out_file)):
                if profile.trigger and "benchkit:" in profile.trigger:
                    name = profile.trigger[profile.trigger.index("benchkit:"):]
                    profiles[name] = (profile, out_file)
        metadata_common = {
            "valgrind": helper.valgrind_version(valgrind), "python": sys.version.split()[0],
            "controls": {"PYTHONHASHSEED": "0", "aslr_disabled": bool(aslr),
                         "environment": "normalized", "GLIBC_TUNABLES": MALLOC_TUNABLES,
                         "caller_sys_path": "only entries the child needs and lacks",
                         "instr_atstart": False,
                         "collection": "toggled around the measured loop only",
                         "cache_sim": cache_sim}}
        kept = Path(tempfile.mkdtemp(prefix="benchkit-callgrind-")) if retain_out_file else None
        out: list[tuple[CallgrindStats, ...]] = []
        for i, task in enumerate(tasks):
            base = profiles.get(f"benchkit:{i}:baseline:0")
            results = []
            for r in range(task.repeats):
                key = f"benchkit:{i}:stmt:{r}"
                if key not in profiles:
                    raise CallgrindError(f"valgrind wrote no profile for {key}; its stderr:\n"
                                         f"{_tail(result.stderr)}")
                stmt, stmt_file = profiles[key]
                kept_path = None
                if kept is not None:
                    kept_path = str(kept / f"callgrind.out.task{i}.repeat{r}")
                    shutil.copyfile(stmt_file, kept_path)
                exclusive = _function_counts(stmt, False)
                empty_ex, empty_in = FunctionCounts((), False), FunctionCounts((), True)
                metadata = dict(metadata_common)
                metadata["stmt_events"] = dict(zip(stmt.events, stmt.totals))
                if base is not None:
                    metadata["baseline_events"] = dict(zip(base[0].events, base[0].totals))
                results.append(CallgrindStats(
                    task_spec=task.task_spec, number_per_run=task.number,
                    built_with_debug_symbols=_debug_symbols(exclusive),
                    baseline_inclusive_stats=_function_counts(base[0], True) if base else empty_in,
                    baseline_exclusive_stats=_function_counts(base[0], False) if base else empty_ex,
                    stmt_inclusive_stats=_function_counts(stmt, True),
                    stmt_exclusive_stats=exclusive, stmt_callgrind_out=kept_path,
                    metadata=metadata))
            out.append(tuple(results))
        return out
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
