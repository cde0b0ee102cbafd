"""Commands that measure: `run` (a suite, across worker processes) and `ab` (interleaved A/B)."""
from __future__ import annotations

import datetime
import json
import sys
from pathlib import Path

from benchkit.cli import args as types
from benchkit.cli.exit_codes import ExitCode
from benchkit.errors import BenchkitError

FAST = {"processes": 3, "min_run_time": 0.05}


def add_parsers(sub) -> None:
    """The subcommands of this module."""
    run = sub.add_parser("run", help="run benchmark suites and write a results file")
    run.add_argument("paths", nargs="+", metavar="PATH", help="suite files or directories")
    run.add_argument("-k", dest="keyword", metavar="EXPR",
                     type=types.keyword_expression,
                     help="only benchmarks whose name matches (words, and/or/not)")
    run.add_argument("--processes", type=types.positive_int, default=10, metavar="N",
                     help="fresh worker processes that each measure every benchmark "
                          "(default 10)")
    run.add_argument("--min-run-time", type=types.positive_float, default=0.1, metavar="S",
                     help="seconds each process measures each benchmark (default 0.1)")
    run.add_argument("--fast", action="store_true",
                     help=f"quick look: {FAST['processes']} processes of "
                          f"{FAST['min_run_time']} s (weaker verdicts)")
    run.add_argument("--in-process", action="store_true",
                     help="measure in this process with blocked_autorange, as "
                          "torch.utils.benchmark (no between-process evidence)")
    run.add_argument("--seed", type=int, metavar="N", help="seed of the measuring order")
    run.add_argument("--callgrind", action="store_true", help="also count instructions")
    run.add_argument("--cache-sim", action="store_true",
                     help="with --callgrind: simulate caches (misses, estimated cycles)")
    run.add_argument("--layouts", type=types.positive_int, default=1, metavar="K",
                     help="with --callgrind: collect under K memory layouts and keep the "
                          "band (default 1)")
    run.add_argument("-j", "--jobs", type=types.positive_int, default=None, metavar="N",
                     help="with --callgrind: N collections at once (default: the CPUs)")
    run.add_argument("--scheduler", metavar="ADDRESS",
                     help="with --callgrind: collect on the workers of a dask.distributed "
                          "scheduler (tcp://HOST:PORT; needs benchkit[distributed])")
    run.add_argument("--num-threads", type=types.positive_int, metavar="N",
                     help="override every benchmark's num_threads")
    run.add_argument("-o", "--output", metavar="FILE",
                     help="results file (.json or .json.gz); default results/run-<time>.json")
    run.add_argument("--no-wall-time", action="store_true",
                     help="with --callgrind: skip wall-time measurement")

    ab = sub.add_parser("ab", help="interleaved A/B of two environments on the same suites")
    ab.add_argument("paths", nargs="+", metavar="PATH", help="suite files or directories")
    ab.add_argument("-k", dest="keyword", metavar="EXPR",
                    type=types.keyword_expression)
    for side in ("base", "new"):
        ab.add_argument(f"--{side}-python", metavar="PYTHON",
                        help=f"interpreter of {side.upper()} (default: this one)")
        ab.add_argument(f"--{side}-env", action="append", metavar="NAME=VALUE",
                        help=f"environment variable for {side.upper()} (repeatable)")
        ab.add_argument(f"--{side}-rev", metavar="REV",
                        help=f"git revision of --repo installed as {side.upper()}")
    ab.add_argument("--repo", metavar="DIR", help="git repository of the revisions (default .)")
    ab.add_argument("--install", metavar="CMD",
                    help="shell command installing a revision: {src} is its checkout, {env} "
                         "the virtual environment to create, {python} this interpreter "
                         "(default: a venv seeing this one's packages + pip install {src})")
    ab.add_argument("--rounds", type=types.positive_int, default=8, metavar="R",
                    help="rounds, each with a fresh process per side (default 8)")
    ab.add_argument("--trials", type=types.positive_int, default=20, metavar="T",
                    help="back-to-back BASE/NEW trial pairs per benchmark per round (default 20)")
    ab.add_argument("--trial-time", type=types.positive_float, default=0.025, metavar="S",
                    help="seconds of one trial (default 0.025)")
    ab.add_argument("--num-threads", type=types.positive_int, metavar="N")
    ab.add_argument("--seed", type=int, metavar="N")
    ab.add_argument("--fail-on", type=types.gate, action="append", default=[], metavar="GATE")
    ab.add_argument("--noise", type=types.percent, default=None, metavar="PCT",
                    help="changes inside +-PCT count as noise (default 2%%)")
    ab.add_argument("--alpha", type=types.probability, default=0.01)
    ab.add_argument("-o", "--output", metavar="FILE",
                    help="results file holding both sides; default results/ab-<time>.json")
    ab.add_argument("--save-sides", action="store_true",
                    help="also write FILE.base.json and FILE.new.json")
    ab.add_argument("--json", action="store_true", help="print the verdicts as JSON")
    ab.add_argument("--markdown", action="store_true")


def _now() -> str:
    return f"{datetime.datetime.now():%Y%m%d-%H%M%S}"


def _save(path: Path, results, what: str) -> None:
    from benchkit.system.results_files import save_with_fallback
    written, problem = save_with_fallback(path, results)
    if problem:
        print(f"could not write {problem}; saved {what} to {written} instead", file=sys.stderr)
    else:
        print(f"wrote {written}", file=sys.stderr)


def _progress(desc: str):
    from tqdm import tqdm
    return tqdm(desc=desc, total=0, unit="step", file=sys.stderr, leave=False)


def _wall_in_process(selected, min_run_time: float):
    from tqdm import tqdm

    from benchkit.api.timer import Timer
    out = []
    for b in tqdm(selected, desc="wall time", unit="benchmark", file=sys.stderr):
        m = Timer.from_task(b.task).blocked_autorange(min_run_time=min_run_time)
        m.metadata = b.metadata()
        out.append(m)
    return out


def _callgrind(selected, args):
    from benchkit.core.callgrind.requests import CountRequest
    from benchkit.orchestration import counting
    executor = None
    where = ""
    if args.scheduler:
        from benchkit.orchestration.distributed import client
        executor = client(args.scheduler)
        where = f" on the workers of {args.scheduler}"
    progress = _progress("instruction counts" + where)
    progress.total = len(selected) * (1 if executor else args.layouts)
    try:
        options = counting.build_options("benchkit run", cache_sim=args.cache_sim,
                                         layouts=args.layouts, jobs=args.jobs,
                                         progress=progress)
        return counting.collect_many([CountRequest(b.task) for b in selected], options,
                                     executor)
    finally:
        progress.close()
        if executor is not None:
            executor.close()


def cmd_run(args) -> int:
    """`benchkit run`: measure suites across worker processes (and count instructions)."""
    from benchkit.api.compare import Compare
    from benchkit.core.report import format_callgrind
    from benchkit.orchestration.sampling import runs
    from benchkit.system.results_files import check_writable

    if args.no_wall_time and not args.callgrind:
        raise BenchkitError("--no-wall-time without --callgrind measures nothing; drop it or "
                            "add --callgrind")
    if (args.jobs or args.scheduler) and not args.callgrind:
        raise BenchkitError("-j/--scheduler apply to --callgrind collections; add --callgrind")
    output = check_writable(args.output or f"results/run-{_now()}.json")
    settings = runs.Settings(
        processes=FAST["processes"] if args.fast else args.processes,
        min_run_time=FAST["min_run_time"] if args.fast else args.min_run_time, seed=args.seed)
    selected = []
    if args.callgrind or args.in_process:
        from benchkit.orchestration.suite import select
        selected = select(args.paths, args.keyword)
        if args.num_threads is not None:
            selected = [b.with_threads(args.num_threads) for b in selected]
    measurements, callgrind, sampled = [], [], runs.Sampled()
    try:
        if not args.no_wall_time and args.in_process:
            measurements = _wall_in_process(selected, args.min_run_time)
        elif not args.no_wall_time:
            progress = _progress(f"wall time ({settings.processes} processes)")
            try:
                measurements = runs.sample_suite(
                    args.paths, keyword=args.keyword, num_threads=args.num_threads,
                    settings=settings, progress=progress, into=sampled)
            finally:
                progress.close()
    except (BenchkitError, KeyboardInterrupt):
        kept = sampled.measurements()
        if kept:
            _save(output.with_name(output.name.replace(".json", ".partial.json", 1)), kept,
                  f"partial results ({len(kept)} benchmarks)")
        raise
    if args.callgrind:
        stats = _callgrind(selected, args)
        for b, s in zip(selected, stats):
            s.metadata.update(b.metadata())
            callgrind.append(s)
    if measurements:
        print(Compare(measurements))
        if measurements[0].processes is not None:
            print(f"each benchmark measured in {settings.processes} fresh processes, "
                  f"{settings.min_run_time:g} s each")
    if callgrind:
        print(format_callgrind(callgrind))
    _save(output, [*measurements, *callgrind], "results")
    return ExitCode.OK


def cmd_ab(args) -> int:
    """`benchkit ab`: interleaved A/B of two environments, with verdicts and gates."""
    from benchkit.core import comparison
    from benchkit.core.records import Side
    from benchkit.core.report import comparison_to_json, format_comparison
    from benchkit.orchestration.sampling import interleaved, runs, sides
    from benchkit.system import machine
    from benchkit.system.results_files import check_writable

    output = check_writable(args.output or f"results/ab-{_now()}.json")
    settings = runs.Settings(chunk_time=args.trial_time, seed=args.seed)
    revisions = {Side.BASE: args.base_rev, Side.NEW: args.new_rev}
    with sides.sides(base_python=args.base_python, new_python=args.new_python,
                     base_env=args.base_env, new_env=args.new_env, base_rev=args.base_rev,
                     new_rev=args.new_rev, repo=args.repo, install=args.install,
                     log=lambda m: print(m, file=sys.stderr)) as (base, new):
        measured = interleaved.Interleaved()

        def results():
            return measured.results(base, new, revisions, args.trials, args.trial_time,
                                    args.seed, machine.collect())
        progress = _progress(f"A/B ({args.rounds} rounds)")
        try:
            interleaved.interleave(args.paths, base, new, rounds=args.rounds,
                                   trials=args.trials, keyword=args.keyword,
                                   num_threads=args.num_threads, settings=settings,
                                   progress=progress, into=measured)
        except (BenchkitError, KeyboardInterrupt):
            progress.close()
            if measured.rounds_done:
                path = output.with_name(output.name.replace(".json", ".partial.json", 1))
                _save(path, results(), f"partial results ({measured.rounds_done} complete "
                                       "rounds)")
            raise
        progress.close()
        saved = results()
    _save(output, saved, "results")
    if args.save_sides:
        for side, part in zip(Side, comparison.split_ab(saved)):
            _save(output.with_name(output.name.replace(".json", f".{side.value}.json", 1)),
                  part, "results")
    compared = comparison.of_ab(saved, args.fail_on, noise=args.noise, alpha=args.alpha)
    if args.json:
        print(json.dumps(comparison_to_json(compared), indent=1))
    else:
        print(format_comparison(compared, markdown=args.markdown))
    return ExitCode.FAILED if compared.regressions else ExitCode.OK


COMMANDS = {"run": cmd_run, "ab": cmd_ab}
