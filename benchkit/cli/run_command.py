"""`benchkit run`: suites measured across worker processes (and counted under callgrind). A
benchmark that fails is recorded and the others go on; a run stopped by Ctrl-C, SIGTERM or an
error saves what it measured, marked partial."""
from __future__ import annotations

import contextlib
import dataclasses
import sys
from pathlib import Path

from benchkit.cli import args as types
from benchkit.cli import shared_options as shared
from benchkit.cli import saving
from benchkit.cli.history import commands as history_commands
from benchkit.cli.history import options as history_options
from benchkit.cli.exit_codes import Outcome
from benchkit.core.records.records import Benchmark, Failure, Phase
from benchkit.errors import BenchkitError

DEFAULT_TIMEOUT = 600.0


def add_parsers(sub) -> None:
    """The `run` subcommand."""
    run = sub.add_parser("run", help="run benchmark suites and write a results file")
    run.add_argument("paths", nargs="*", metavar="PATH",
                     help="suite files or directories (an asv benchmark directory runs as it "
                          "is; none: the benchmark_dir of ./asv.conf.json)")
    shared.KEYWORD.add(run)
    shared.PROCESSES.add(run, default=shared.RUN_PROCESSES)
    shared.MIN_RUN_TIME.add(run, default=shared.RUN_MIN_RUN_TIME)
    shared.FAST.add(run)
    run.add_argument("--in-process", action="store_true",
                     help="measure in this process with blocked_autorange, as "
                          "torch.utils.benchmark (no between-process evidence)")
    run.add_argument("--seed", type=int, metavar="N", help="seed of the measuring order")
    run.add_argument("--timeout", type=types.positive_float, default=DEFAULT_TIMEOUT,
                     metavar="S", help="seconds a benchmark may take in one process (wall "
                                       "time) or one collection (--callgrind) before it is "
                                       f"recorded as failed (default {DEFAULT_TIMEOUT:g})")
    shared.CALLGRIND.add(run)
    run.add_argument("--cache-sim", action="store_true",
                     help="with --callgrind: simulate caches (misses, estimated cycles)")
    run.add_argument("--layouts", type=types.positive_int, default=1, metavar="K",
                     help="with --callgrind: collect under K memory layouts and keep the "
                          "band (default 1)")
    run.add_argument("-j", "--jobs", type=types.positive_int, default=None, metavar="N",
                     help="with --callgrind: N collections at once (default: the CPUs)")
    run.add_argument("--scheduler", metavar="ADDRESS",
                     help="with --callgrind: collect on the workers of a dask.distributed "
                          "scheduler (tcp://HOST:PORT; needs benchkit-perf[distributed])")
    shared.NUM_THREADS.add(run)
    run.add_argument("-o", "--output", metavar="FILE",
                     help="results file (.json or .json.gz); default results/run-<time>.json")
    shared.MEMORY.add(run)
    run.add_argument("--memory-sites", action="store_true",
                     help="with --memory (implied): also find each benchmark's top allocation "
                          "sites, Python lines and native functions (needs memray)")
    shared.NO_WALL_TIME.add(run)
    history_options.history_option(run)
    run.add_argument("--format", choices=("benchkit", "asv"), default="benchkit",
                     help="asv: also write the results into asv's results directory, as "
                          "`asv run` would (for `asv publish`; `history import-asv` reads "
                          "them back)")
    run.add_argument("--asv-results", metavar="DIR",
                     help="with --format asv: asv's results directory (default: "
                          "asv.conf.json's results_dir, else .asv/results)")
    run.add_argument("--asv-machine", metavar="NAME",
                     help="with --format asv: asv's machine name (default: this host's)")


@dataclasses.dataclass
class _Run:
    """What a run has measured so far, so a run that stops early can save it."""

    phase: str = "loading"
    measurements: list = dataclasses.field(default_factory=list)
    counts: dict = dataclasses.field(default_factory=dict)     # benchmark index -> stats
    memory: list = dataclasses.field(default_factory=list)     # MemoryStats
    values: list = dataclasses.field(default_factory=list)     # ValueStats (asv suites)
    timeraw: list = dataclasses.field(default_factory=list)    # Measurements (asv timeraw_)
    failures: list[Failure] = dataclasses.field(default_factory=list)
    sampled: object = None
    executor: object = None     # a connected distributed.Client for --scheduler

    def results(self, partial: str | None = None):
        from benchkit.core.records.schema import Results
        from benchkit.system.machine import collect
        measurements = (list(self.measurements) or (
            self.sampled.measurements() if self.sampled is not None else [])
        ) + list(self.timeraw)
        failures = saving.first_failure_per_benchmark(
            self.failures + list(getattr(self.sampled, "failures", [])))
        counts = [self.counts[i] for i in sorted(self.counts)]
        return Results(measurements, counts, collect(), failures=failures, partial=partial,
                       memory=list(self.memory), values=list(self.values))

    def anything(self) -> bool:
        return bool(self.measurements or self.counts or self.memory or self.values
                    or self.timeraw
                    or self.failures or (
            self.sampled is not None and (self.sampled.series or self.sampled.failures)))


def _wall_in_process(selected: list[Benchmark], min_run_time: float, timeout: float,
                     state: _Run) -> None:
    from benchkit.api.timer import Timer
    from benchkit.core.records.records import FailureKind
    from benchkit.errors import BenchmarkTimedOut, SnippetError
    from benchkit.system.processes import time_limit
    bar = saving.progress("wall time (in process)")
    bar.total = len(selected)
    for b in selected:
        bar.update()
        try:
            with time_limit(timeout):
                m = Timer.from_task(b.task).blocked_autorange(min_run_time=min_run_time)
        except (SnippetError, BenchmarkTimedOut) as error:
            timed_out = isinstance(error, BenchmarkTimedOut) or isinstance(
                getattr(error, "error", None), BenchmarkTimedOut)
            kind = FailureKind.TIMED_OUT if timed_out else FailureKind.RAISED
            state.failures.append(Failure(b.name, Phase.WALL_TIME, kind, str(error), b.file))
            continue
        m.metadata = b.metadata()
        state.measurements.append(m)
    bar.close()


def _counts(selected: list[Benchmark], args, state: _Run) -> None:
    from benchkit.core.callgrind.requests import CountRequest
    from benchkit.engines.callgrind.collector import JobFailure
    from benchkit.orchestration import counting
    failed = {f.benchmark for f in state.failures} | {
        f.benchmark for f in getattr(state.sampled, "failures", [])}
    todo = [b for b in selected if b.name not in failed]
    executor = state.executor
    where = f" on the workers of {args.scheduler}" if executor is not None else ""
    bar = saving.progress("instruction counts" + where)
    bar.total = len(todo) * (1 if executor else args.layouts)

    def done(i: int, outcome) -> None:
        if isinstance(outcome, JobFailure):
            state.failures.append(Failure(todo[i].name, Phase.INSTRUCTIONS, outcome.kind,
                                          str(outcome.error), todo[i].file))
        else:
            outcome.metadata.update(todo[i].metadata())
            state.counts[i] = outcome
    try:
        options = counting.build_options("benchkit run", cache_sim=args.cache_sim,
                                         timeout=args.timeout, layouts=args.layouts,
                                         jobs=args.jobs, progress=bar)
        outcomes = counting.collect_many([CountRequest(b.task) for b in todo], options,
                                         executor, keep_going=True, on_result=done)
        if executor is not None:    # remote results come back at the end
            for i, outcome in enumerate(outcomes):
                done(i, outcome)
    finally:
        bar.close()


def _asv_values(args, settings, state: _Run) -> bool:
    """Measure the selected track_, mem_, peakmem_ and timeraw_ benchmarks of asv suites
    (and name any of a type benchkit does not measure, in one line); whether timed
    benchmarks are selected too (asv suites only: other suites always are)."""
    from benchkit.core.records.keywords import keyword_filter
    from benchkit.orchestration.asv_suite import asv_benchmarks, looks_like_asv
    from benchkit.orchestration.asv_values import measure_values
    asv_dirs = [p for p in map(Path, args.paths) if p.is_dir() and looks_like_asv(p)]
    if not asv_dirs:
        return True
    wanted = keyword_filter(args.keyword)
    items: list = []
    skipped: list[str] = []
    timed = len(asv_dirs) < len(args.paths)
    try:
        for path in asv_dirs:       # one discovery: the timed benchmarks, and the values
            timed = bool(asv_benchmarks(path, lambda failure, error: None, wanted,
                                        skipped, items)) or timed
    except BenchkitError:
        return True     # the suite's own error comes from measuring it
    if skipped:
        print(f"note: {len(skipped)} asv benchmarks of a type benchkit does not measure, "
              f"e.g. {skipped[0]}", file=sys.stderr)
    if items:
        state.phase = "asv values"
        bar = saving.progress("asv values")
        bar.total = len(items)
        try:
            # asv's processes for a value: 2 by default (each value is exact or nearly so)
            measure_values(items, processes=min(settings.processes, 2), timeout=args.timeout,
                           values=state.values, failures=state.failures, on_done=bar.update,
                           times=state.timeraw, samples=settings.processes)
        finally:
            bar.close()
    return timed or not items


def _measure(args, settings, state: _Run) -> None:
    from benchkit.orchestration.sampling import runs
    selected: list[Benchmark] = []
    if args.callgrind or args.in_process:
        from benchkit.orchestration.suite import select
        selected = select(args.paths, args.keyword, state.failures)
        if args.num_threads is not None:
            selected = [b.with_threads(args.num_threads) for b in selected]
    timed = _asv_values(args, settings, state)
    if not args.no_wall_time and timed:
        state.phase = "wall time"
        if args.in_process:
            _wall_in_process(selected, args.min_run_time, args.timeout, state)
        else:
            state.sampled = runs.Sampled()
            bar = saving.progress(f"wall time ({settings.processes} processes)")
            try:
                runs.sample_suite(args.paths, keyword=args.keyword,
                                  num_threads=args.num_threads, settings=settings,
                                  progress=bar, into=state.sampled)
            finally:
                bar.close()
            state.measurements = state.sampled.measurements()
    if args.callgrind:
        state.phase = "instruction counts"
        _counts(selected, args, state)
    if args.memory:
        state.phase = "memory"
        _memory(args, state)


def _memory(args, state: _Run) -> None:
    from benchkit.orchestration.memory import MemorySettings, counted
    from benchkit.orchestration.sampling.workers import SuiteLoad
    failed = {f.benchmark for f in state.failures} | {
        f.benchmark for f in getattr(state.sampled, "failures", [])}
    bar = saving.progress("memory")
    try:
        load = SuiteLoad(tuple(args.paths), args.keyword, args.num_threads)
        settings = MemorySettings(timeout=args.timeout, sites=args.memory_sites)
        for benchmark, outcome in counted(load, settings):
            bar.update()
            if benchmark.name in failed:
                continue
            if isinstance(outcome, Failure):
                state.failures.append(outcome)
            else:
                state.memory.append(outcome)
    finally:
        bar.close()


def cmd_run(args) -> Outcome | tuple[Outcome, ...]:
    """`benchkit run`: measure suites across worker processes (and count instructions)."""
    from benchkit.system.results_files import check_writable

    args.memory = args.memory or args.memory_sites
    if args.memory_sites:
        from benchkit.engines.memory.sites import require_memray
        require_memray()
    if args.no_wall_time and not (args.callgrind or args.memory):
        raise BenchkitError("--no-wall-time without --callgrind or --memory measures nothing; "
                            "drop it or add --callgrind or --memory")
    if (args.jobs or args.scheduler) and not args.callgrind:
        raise BenchkitError("-j/--scheduler apply to --callgrind collections; add --callgrind")
    if not args.paths:
        from benchkit.orchestration.asv_config import read_asv_config
        found = read_asv_config(Path.cwd())
        if found is None:
            raise BenchkitError("benchkit run: no PATH given and no asv.conf.json here; pass "
                                "suite files or directories")
        args.paths = [str(found.benchmark_dir)]
    for path in args.paths:
        if not Path(path).exists():
            raise BenchkitError(f"{path}: no such file or directory")
    if args.format == "asv":
        from benchkit.orchestration.asv_export import check_asv_export
        check_asv_export(Path.cwd(), args.asv_machine)
    elif args.asv_results or args.asv_machine:
        raise BenchkitError("--asv-results and --asv-machine apply to --format asv; add it")
    output = check_writable(args.output or saving.default_output("run"))
    with saving.output_lock(output) if args.output else contextlib.nullcontext():
        return _run_into(args, output)


def _run_into(args, output: Path) -> tuple[Outcome, Outcome]:
    """cmd_run once its output is checked (and, for -o, held)."""
    from benchkit.api.compare import Compare
    from benchkit.core.compare.table import by_suite_file
    from benchkit.core.compare.report import format_callgrind, format_memory, format_sites
    from benchkit.orchestration.sampling import runs
    settings = runs.Settings(
        processes=shared.FAST_PROCESSES if args.fast else args.processes,
        min_run_time=shared.FAST_MIN_RUN_TIME if args.fast else args.min_run_time, seed=args.seed,
        timeout=args.timeout)
    state = _Run()
    if args.scheduler:      # connected before any work: a wrong address costs nothing
        from benchkit.orchestration.distributed import client
        state.executor = client(args.scheduler)
    try:
        _measure(args, settings, state)
    except (KeyboardInterrupt, BenchkitError) as stop:
        if state.anything():
            saving.save(saving.partial_path(output),
                        state.results(saving.why_stopped(stop, state.phase)),
                        "partial results")
        raise
    finally:
        if state.executor is not None:
            state.executor.close()
    results = state.results()
    if results.measurements:
        print(Compare(by_suite_file(results.measurements)))
        if state.sampled is not None and state.sampled.series:
            print(f"each benchmark measured in {settings.processes} fresh "
                  f"process{'es' if settings.processes != 1 else ''}, "
                  f"{settings.min_run_time:g} s each")
        if state.timeraw:
            print(f"timeraw_: each sample timed in a fresh interpreter, "
                  f"{settings.processes} samples")
    if results.callgrind:
        print(format_callgrind(results.callgrind))
    if results.values:
        from benchkit.core.records.values import format_values
        print(format_values(results.values))
    if results.memory:
        print(format_memory(results.memory))
        sites = format_sites(results.memory)
        if sites:
            print("\n" + sites)
    saving.report_failures(results.failures)
    stored = saving.save(output, results, "results", exclusive=args.output is None)
    if args.history:
        history_commands.add_to_history(args, stored.path)
    if args.format == "asv":
        from benchkit.orchestration.asv_export import default_results_dir, write_asv_results
        written = write_asv_results(
            results, Path(args.asv_results) if args.asv_results else default_results_dir(
                Path.cwd()), cwd=Path.cwd(), machine=args.asv_machine)
        print(f"asv results: {written}")
    return (Outcome.MEASUREMENT_FAILED if saving.real_failures(results.failures)
            else Outcome.OK, saving.outcome(stored))


COMMANDS = {"run": cmd_run}
