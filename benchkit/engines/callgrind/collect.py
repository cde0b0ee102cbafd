"""Instruction counts: the valgrind command line, C++ snippet programs under valgrind, and
CallgrindStats from the dumps (Python snippets go through the forking collector)."""
from __future__ import annotations

import concurrent.futures
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Sequence

from benchkit.errors import CallgrindError
from benchkit.system import machine as fingerprint
from benchkit.system.processes import die_with_parent, kill_group, last_lines
from benchkit.engines.callgrind.collector import Collector, active_collector
from benchkit.engines.callgrind.command import valgrind_command
from benchkit.engines.callgrind import toolchain as helper
from benchkit.core.callgrind import parser
from benchkit.core.callgrind.callgrind_stats import CallgrindStats
from benchkit.core.callgrind.counts import FunctionCounts
from benchkit.engines.callgrind import workdir as _job
from benchkit.engines.callgrind.workdir import (HEAP_STEP, MALLOC_TUNABLES, STACK_STEP, CallgrindTask,
                                   make_workdir)

# Fixed cache geometry, so cache-simulation results do not depend on the host CPU.
_live: set[subprocess.Popen] = set()


def _run_child(cmd: list[str], workdir: Path, env: dict[str, str],
               timeout: float | None) -> subprocess.CompletedProcess:
    process = subprocess.Popen(cmd, cwd=workdir, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True,
                               preexec_fn=die_with_parent)
    _live.add(process)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except BaseException as error:  # timeout, Ctrl-C, anything: the child must not outlive us
        kill_group(process)
        if isinstance(error, subprocess.TimeoutExpired):
            raise CallgrindError(f"valgrind did not finish within timeout={timeout} s; "
                                 "lower `number` or raise `timeout`.") from None
        raise
    finally:
        _live.discard(process)
    return subprocess.CompletedProcess(cmd, process.returncode, stdout, stderr)


def _each_layout(collect_one, layouts: int) -> list:
    """collect_one(k) for every layout, in parallel up to the number of CPUs. If this thread
    is interrupted, every child is killed before the error goes on."""
    if layouts == 1:
        return [collect_one(0)]
    pool = concurrent.futures.ThreadPoolExecutor(min(layouts, os.cpu_count() or 1))
    try:
        return list(pool.map(collect_one, range(layouts)))
    except BaseException:
        for process in list(_live):
            kill_group(process)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _debug_symbols(counts: FunctionCounts) -> bool:
    torch_rows = [fn for _, fn in counts if "libtorch" in fn]
    if not torch_rows:
        return True
    return sum(fn.startswith("???:") for fn in torch_rows) <= len(torch_rows) / 2


def _function_counts(profile: parser.Profile, inclusive: bool) -> FunctionCounts:
    table = profile.inclusive if inclusive else profile.exclusive
    return FunctionCounts.from_dict({fn: c[0] for fn, c in table.items()}, inclusive)


def _collect_layout(valgrind: str, program: list[str], workdir: Path, layout: int,
                    cache_sim: bool, timeout: float | None, tasks: Sequence[CallgrindTask]
                    ) -> dict[str, tuple[parser.Profile, Path]]:
    """One valgrind run of a compiled C++ snippet `program` (which ends with the layout's
    number) under memory layout `layout`: its profiles by name."""
    cmd = valgrind_command(valgrind, f"callgrind.L{layout}.out", cache_sim) + program
    result = _run_child(cmd, workdir, _job.child_environment(layout), timeout)
    if result.returncode != 0:
        return_code = result.returncode
        how = (f"was killed by signal {-return_code}" if return_code < 0
               else f"exited with status {return_code}")
        raise CallgrindError(f"the C++ snippet program {how} under valgrind. Last lines of "
                             f"its output:\n{last_lines(result.stdout + result.stderr)}")
    profiles: dict[str, tuple[parser.Profile, Path]] = {}
    for out_file in sorted(workdir.glob(f"callgrind.L{layout}.out*")):
        for profile in parser.parse(out_file.read_text(encoding="utf-8", errors="replace"),
                                    source=str(out_file)):
            if profile.trigger and "benchkit:" in profile.trigger:
                name = profile.trigger[profile.trigger.index("benchkit:"):]
                profiles[name] = (profile, out_file)
    for task in tasks:
        for r in range(task.repeats):
            if f"benchkit:0:stmt:{r}" not in profiles:
                raise CallgrindError(f"valgrind wrote no profile for repeat {r}; its "
                                     f"output:\n{last_lines(result.stderr)}")
    return profiles


def _stats(task: CallgrindTask, i: int, r: int, profiles: dict, metadata_common: dict,
           kept: Path | None) -> CallgrindStats:
    base = profiles.get("benchkit:0:baseline:0")
    stmt, stmt_file = profiles[f"benchkit:0:stmt:{r}"]
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
    return CallgrindStats(
        task_spec=task.task_spec, number_per_run=task.number,
        built_with_debug_symbols=_debug_symbols(exclusive),
        baseline_inclusive_stats=_function_counts(base[0], True) if base else empty_in,
        baseline_exclusive_stats=_function_counts(base[0], False) if base else empty_ex,
        stmt_inclusive_stats=_function_counts(stmt, True),
        stmt_exclusive_stats=exclusive, stmt_callgrind_out=kept_path, metadata=metadata)


def _assemble(tasks: Sequence[CallgrindTask], per_task: list[list[dict]], controls: dict,
              valgrind: str, retain_out_file: bool) -> list[tuple[CallgrindStats, ...]]:
    """CallgrindStats per task and repeat from `per_task[i][layout]` = profiles by name
    (benchkit:0:<kind>:<repeat>): layout 0's counts, every layout's per-run counts."""
    metadata_common = {"valgrind": helper.valgrind_version(valgrind),
                       "python": sys.version.split()[0], "controls": controls}
    kept = Path(tempfile.mkdtemp(prefix="benchkit-callgrind-")) if retain_out_file else None
    out: list[tuple[CallgrindStats, ...]] = []
    for i, (task, layouts) in enumerate(zip(tasks, per_task)):
        results = []
        for r in range(task.repeats):
            main = _stats(task, i, r, layouts[0], metadata_common, kept)
            if len(layouts) > 1:
                per_run = [main.per_run()] + [
                    _stats(task, i, r, p, metadata_common, None).per_run()
                    for p in layouts[1:]]
                main.metadata["layouts"] = {
                    "per_run": per_run, "stack_step": STACK_STEP, "heap_step": HEAP_STEP}
            results.append(main)
        out.append(tuple(results))
    return out


def _controls(cache_sim: bool) -> dict:
    return {"PYTHONHASHSEED": "0", "aslr_disabled": bool(helper.aslr_prefix()),
            "environment": "normalized", "GLIBC_TUNABLES": MALLOC_TUNABLES,
            "caller_sys_path": "only entries the child needs and lacks",
            "fixed_paths": _job.FIXED_PATHS, "bytecode_prewarmed": _job.PREWARM,
            "own_thread_and_malloc_arena": _job.OWN_THREAD,
            "random_seeds": "random, numpy.random and torch seeded with 0 before each snippet",
            "forked_from": "a collector that imported only the snippet's modules",
            "instr_atstart": False, "collection": "toggled around the measured loop only",
            "cache_sim": cache_sim, "collector_revision": _job.collector_revision(),
            "site_packages": fingerprint.site_packages_digest()}


def collect(tasks: Sequence[CallgrindTask], *, cache_sim: bool = False,
            timeout: float | None = None, retain_out_file: bool = False, layouts: int = 1,
            jobs: int = 1, progress: Any = None) -> list[tuple[CallgrindStats, ...]]:
    """Collect every task through the forking collector (the active callgrind_session's, or
    a fresh one): per task one CallgrindStats per repeat, with the per-run counts of every
    layout in metadata["layouts"] when layouts > 1."""
    collector = active_collector(cache_sim)
    own = collector is None
    if own:
        collector = Collector(cache_sim)
    try:
        per_task = collector.collect(tasks, layouts=layouts, jobs=jobs, timeout=timeout,
                                     progress=progress)
        stats = _assemble(tasks, per_task, _controls(cache_sim), collector.valgrind,
                          retain_out_file)
        for layouts_of_task in per_task:
            for profiles in layouts_of_task:
                collector.forget(profiles)
        return stats
    except BaseException:
        collector.kill()
        raise
    finally:
        if own:
            collector.close()


def collect_cpp(task: CallgrindTask, driver: Path, library: Path, *, cache_sim: bool = False,
                timeout: float | None = None, retain_out_file: bool = False,
                layouts: int = 1) -> tuple[CallgrindStats, ...]:
    """Run a compiled C++ snippet (benchkit.engines.cpp's driver loading the snippet's library) under
    valgrind: no interpreter, instrumentation on only around the measured loop. One
    CallgrindStats per repeat."""
    valgrind = helper.find_valgrind()
    workdir = make_workdir()
    try:
        # Both through links at fixed-length paths: the library's path is copied onto the
        # heap when it is loaded, so its length (the cache's, HOME's) would move the counts.
        program = [workdir / "driver", workdir / "snippet.so"]
        for link, target in zip(program, (driver, library)):
            link.symlink_to(target)

        def command(k: int) -> list[str]:
            return [*map(str, program), str(task.number), str(task.repeats),
                    str(int(task.collect_baseline)), str(task.task_spec.num_threads), str(k)]
        by_layout = _each_layout(
            lambda k: _collect_layout(valgrind, command(k), workdir, k, cache_sim, timeout,
                                      [task]), layouts)
        controls = {"aslr_disabled": bool(helper.aslr_prefix()), "environment": "normalized",
                    "GLIBC_TUNABLES": MALLOC_TUNABLES, "instr_atstart": False,
                    "collection": "toggled around the measured loop only",
                    "cache_sim": cache_sim, "language": "cpp",
                    "collector_revision": _job.collector_revision(_job.CPP_COLLECTOR_SOURCES)}
        return _assemble([task], [by_layout], controls, valgrind, retain_out_file)[0]
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
