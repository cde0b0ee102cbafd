"""Instruction counts in: Python snippets through the forking collector, C++ snippet programs
under valgrind, and the CallgrindStats built from their dumps (with the controls recorded)."""
from __future__ import annotations

import concurrent.futures
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Callable, Sequence, Union

from benchkit.core.callgrind import parser
from benchkit.core.callgrind.callgrind_stats import CallgrindStats
from benchkit.core.callgrind.counts import FunctionCounts
from benchkit.core.callgrind.requests import (BASELINE, CPP_TAG, STMT, CallgrindOptions,
                                              CountRequest)
from benchkit.engines.callgrind import toolchain, workdir
from benchkit.engines.callgrind.collector import Collector, Dumps, JobFailure, read_dumps
from benchkit.engines.callgrind.command import valgrind_command
from benchkit.errors import CallgrindError
from benchkit.system import machine
from benchkit.system.processes import aslr_prefix, kill_group, last_lines, start

Outcome = Union["tuple[CallgrindStats, ...]", JobFailure]


def collect(requests: Sequence[CountRequest], options: CallgrindOptions,
            collector: Collector | None = None, *, keep_going: bool = False,
            on_result: Callable[[int, Outcome], None] | None = None) -> list[Outcome]:
    """Count every request through the forking collector (`collector`, e.g. a session's,
    or a fresh one closed afterwards): per request one CallgrindStats per repeat, with the
    per-run counts of every layout in metadata["layouts"] when options.layouts > 1.

    A request that fails raises its error (after the others were collected); with
    `keep_going` its JobFailure stands in its place instead. `on_result(i, outcome)` is
    called as each request completes (from collector threads), so a caller interrupted
    half way keeps what finished."""
    own = collector is None
    if own:
        collector = Collector(options.cache_sim, options.controls)
    assemble = _Assembler(_controls(options), collector.valgrind, options.retain_out_file)
    outcomes: list[Outcome | None] = [None] * len(requests)

    def done(i: int, layouts: list) -> None:
        failure = next((o for o in layouts if isinstance(o, JobFailure)), None)
        outcome = failure or assemble(i, requests[i], layouts)
        for dumps in layouts:
            if not isinstance(dumps, JobFailure):
                collector.forget(dumps)
        outcomes[i] = outcome
        if on_result is not None:
            on_result(i, outcome)
    try:
        collector.collect(requests, options, on_request=done)
    except BaseException:
        collector.kill()
        raise
    finally:
        if own:
            collector.close()
    if not keep_going:
        for outcome in outcomes:
            if isinstance(outcome, JobFailure):
                raise outcome.error
    return outcomes


def collect_cpp(request: CountRequest, driver: Path, library: Path,
                options: CallgrindOptions) -> tuple[CallgrindStats, ...]:
    """Run a compiled C++ snippet (benchkit.engines.cpp's driver loading the snippet's
    library) under valgrind: no interpreter, instrumentation on only around the measured
    loop. One CallgrindStats per repeat."""
    valgrind = toolchain.find_valgrind()
    directory = workdir.make_workdir()
    try:
        # Both through links at fixed-length paths: the library's path is copied onto the
        # heap when it is loaded, so its length (the cache's, HOME's) would move the counts.
        program = [directory / "driver", directory / "snippet.so"]
        for link, target in zip(program, (driver, library)):
            link.symlink_to(target)
        children = _Children()

        def collect_layout(k: int) -> Dumps:
            command = [*map(str, program), str(request.number), str(request.repeats),
                       str(int(request.collect_baseline)), str(request.task.spec.num_threads),
                       str(k)]
            return _run_cpp_layout(valgrind, command, directory, k, options, request, children)
        by_layout = _each_layout(collect_layout, options.layouts, children)
        controls = {"aslr_disabled": bool(aslr_prefix()), "environment": "normalized",
                    "GLIBC_TUNABLES": workdir.MALLOC_TUNABLES, "instr_atstart": False,
                    "collection": "toggled around the measured loop only",
                    "cache_sim": options.cache_sim, "language": "cpp",
                    "collector_revision": workdir.collector_revision(
                        workdir.CPP_COLLECTOR_SOURCES)}
        return _Assembler(controls, valgrind, options.retain_out_file)(0, request, by_layout)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


# ----------------------------------------------------------------------------- C++ programs


class _Children:
    """The valgrind processes of one C++ collection, so an interrupt kills all of them."""

    def __init__(self) -> None:
        self._live: set[subprocess.Popen] = set()
        self._lock = threading.Lock()

    def run(self, cmd: list[str], cwd: Path, env: dict[str, str],
            timeout: float | None) -> subprocess.CompletedProcess:
        process = start(cmd, cwd=cwd, env=env, text=True)
        with self._lock:
            self._live.add(process)
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except BaseException as error:  # timeout, Ctrl-C: the child must not outlive us
            kill_group(process)
            if isinstance(error, subprocess.TimeoutExpired):
                raise CallgrindError(f"valgrind did not finish within timeout={timeout} s; "
                                     "lower `number` or raise `timeout`.") from None
            raise
        finally:
            with self._lock:
                self._live.discard(process)
        return subprocess.CompletedProcess(cmd, process.returncode, stdout, stderr)

    def kill_all(self) -> None:
        with self._lock:
            live = list(self._live)
        for process in live:
            kill_group(process)


def _each_layout(collect_one: Callable[[int], Dumps], layouts: int,
                 children: _Children) -> list[Dumps]:
    """collect_one(k) for every layout, in parallel up to the number of CPUs. If this thread
    is interrupted, every child is killed before the error goes on."""
    if layouts == 1:
        return [collect_one(0)]
    pool = concurrent.futures.ThreadPoolExecutor(min(layouts, os.cpu_count() or 1))
    try:
        return list(pool.map(collect_one, range(layouts)))
    except BaseException:
        children.kill_all()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _run_cpp_layout(valgrind: str, program: list[str], directory: Path, layout: int,
                    options: CallgrindOptions, request: CountRequest,
                    children: _Children) -> Dumps:
    """One valgrind run of a compiled C++ snippet `program` (which ends with the layout's
    number) under memory layout `layout`: its dumps by (kind, repeat)."""
    cmd = valgrind_command(valgrind, f"callgrind.L{layout}.out", options.cache_sim) + program
    result = children.run(cmd, directory, workdir.child_environment(layout, options.controls),
                          options.timeout)
    if result.returncode != 0:
        return_code = result.returncode
        how = (f"was killed by signal {-return_code}" if return_code < 0
               else f"exited with status {return_code}")
        raise CallgrindError(f"the C++ snippet program {how} under valgrind. Last lines of "
                             f"its output:\n{last_lines(result.stdout + result.stderr)}")
    return read_dumps(directory.glob(f"callgrind.L{layout}.out*"), CPP_TAG, request.repeats,
                      "", f"its output:\n{last_lines(result.stderr)}")


# ----------------------------------------------------------------------------- CallgrindStats


def _debug_symbols(counts: FunctionCounts) -> bool:
    torch_rows = [fn for _, fn in counts if "libtorch" in fn]
    if not torch_rows:
        return True
    return sum(fn.startswith("???:") for fn in torch_rows) <= len(torch_rows) / 2


def _function_counts(profile: parser.Profile, inclusive: bool) -> FunctionCounts:
    table = profile.inclusive if inclusive else profile.exclusive
    return FunctionCounts.from_dict({fn: c[0] for fn, c in table.items()}, inclusive)


def _stats(request: CountRequest, i: int, r: int, dumps: Dumps, metadata_common: dict,
           kept: Path | None) -> CallgrindStats:
    base = dumps.get((BASELINE, 0))
    stmt, stmt_file = dumps[(STMT, r)]
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
        task_spec=request.task.spec, number_per_run=request.number,
        built_with_debug_symbols=_debug_symbols(exclusive),
        baseline_inclusive_stats=_function_counts(base[0], True) if base else empty_in,
        baseline_exclusive_stats=_function_counts(base[0], False) if base else empty_ex,
        stmt_inclusive_stats=_function_counts(stmt, True),
        stmt_exclusive_stats=exclusive, stmt_callgrind_out=kept_path, metadata=metadata)


class _Assembler:
    """CallgrindStats of a request from its dumps per layout: layout 0's counts, and every
    layout's per-run counts in metadata["layouts"]."""

    def __init__(self, controls: dict, valgrind: str, retain_out_file: bool):
        self._common = {"valgrind": toolchain.valgrind_version(valgrind),
                        "python": sys.version.split()[0], "controls": controls}
        self._retain = retain_out_file
        self._kept: Path | None = None

    def __call__(self, i: int, request: CountRequest,
                 layouts: list[Dumps]) -> tuple[CallgrindStats, ...]:
        if self._retain and self._kept is None:
            self._kept = Path(tempfile.mkdtemp(prefix="benchkit-callgrind-"))
        results = []
        for r in range(request.repeats):
            main = _stats(request, i, r, layouts[0], self._common, self._kept)
            if len(layouts) > 1:
                per_run = [main.per_run()] + [
                    _stats(request, i, r, dumps, self._common, None).per_run()
                    for dumps in layouts[1:]]
                main.metadata["layouts"] = {"per_run": per_run, "stack_step": workdir.STACK_STEP,
                                            "heap_step": workdir.HEAP_STEP}
            results.append(main)
        return tuple(results)


def _controls(options: CallgrindOptions) -> dict:
    controls = options.controls
    return {"PYTHONHASHSEED": "0", "aslr_disabled": bool(aslr_prefix()),
            "environment": "normalized", "GLIBC_TUNABLES": workdir.MALLOC_TUNABLES,
            "caller_sys_path": "only entries the child needs and lacks",
            "fixed_paths": controls.fixed_paths, "bytecode_prewarmed": controls.prewarm,
            "own_thread_and_malloc_arena": controls.own_thread,
            "random_seeds": "random, numpy.random and torch seeded with 0 before each snippet",
            "forked_from": "a collector that imported only the snippet's modules",
            "instr_atstart": False, "collection": "toggled around the measured loop only",
            "cache_sim": options.cache_sim, "collector_revision": workdir.collector_revision(),
            "site_packages": machine.site_packages_digest()}
