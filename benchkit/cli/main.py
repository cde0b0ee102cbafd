"""`benchkit` command line: the only place that prints and picks exit codes.

Exit codes: 0 fine, 1 a gate caught a regression, 2 a usage or input error.
"""
from __future__ import annotations

import argparse
import dataclasses
import datetime
import sys
from pathlib import Path

from benchkit.errors import BenchkitError

EXIT_OK, EXIT_REGRESSION, EXIT_USAGE = 0, 1, 2


def _gate(text: str):
    from benchkit.suite import parse_gate
    try:
        return parse_gate(text)
    except BenchkitError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _percent(text: str) -> float:
    try:
        return float(text.rstrip("%")) / 100
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a percentage like 2%") from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="benchkit", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser("run", help="run benchmark suites and write a results file")
    run.add_argument("paths", nargs="+", metavar="PATH", help="suite files or directories")
    run.add_argument("-k", dest="keyword", metavar="EXPR",
                     help="only benchmarks whose name matches (words, and/or/not)")
    run.add_argument("--callgrind", action="store_true", help="also count instructions")
    run.add_argument("--cache-sim", action="store_true",
                     help="with --callgrind: simulate caches (misses, estimated cycles)")
    run.add_argument("--min-run-time", type=float, default=0.2, metavar="S",
                     help="seconds of blocked_autorange per benchmark (default 0.2)")
    run.add_argument("--num-threads", type=int, metavar="N",
                     help="override every benchmark's num_threads")
    run.add_argument("-o", "--output", metavar="FILE",
                     help="results file (.json or .json.gz); default results/run-<time>.json")
    run.add_argument("--no-wall-time", action="store_true",
                     help="with --callgrind: skip wall-time measurement")

    show = sub.add_parser("show", help="print the tables of a results file")
    show.add_argument("file")
    show.add_argument("--markdown", action="store_true")

    comp = sub.add_parser("compare", help="A/B verdicts between two results files")
    comp.add_argument("base")
    comp.add_argument("new")
    comp.add_argument("--fail-on", type=_gate, action="append", default=[], metavar="GATE",
                      help="exit 1 when a benchmark breaks GATE, e.g. 'slower>5%%' or "
                           "'instructions>1%%' (repeatable; suite gates take precedence)")
    comp.add_argument("--noise", type=_percent, default=0.02, metavar="PCT",
                      help="changes inside +-PCT count as noise (default 2%%)")
    comp.add_argument("--alpha", type=float, default=0.01,
                      help="significance level of the Mann-Whitney U test (default 0.01)")
    comp.add_argument("--markdown", action="store_true")

    diff = sub.add_parser("diff", help="per-function instruction-count diff")
    diff.add_argument("base")
    diff.add_argument("new")
    diff.add_argument("--benchmark", metavar="NAME", help="only this benchmark")
    diff.add_argument("--top", type=int, default=20, metavar="N", help="rows per benchmark")
    diff.add_argument("--inclusive", action="store_true", help="inclusive instead of self counts")

    plot = sub.add_parser("plot", help="PNG of distributions (and an A/B comparison)")
    plot.add_argument("files", nargs="+", metavar="FILE")
    plot.add_argument("-o", "--output", default="benchkit.png", metavar="PNG")

    merge = sub.add_parser("merge", help="merge results files into one")
    merge.add_argument("output")
    merge.add_argument("files", nargs="+", metavar="FILE")

    from benchkit.cli import profile_commands
    profile_commands.add_parsers(sub)
    return parser


def cmd_run(args) -> int:
    import benchkit
    from benchkit.compare import Compare
    from benchkit.report import format_callgrind
    from benchkit.suite import discover, keyword_filter
    from tqdm import tqdm

    selected = [b for b in discover(args.paths) if keyword_filter(args.keyword)(b.name)]
    if not selected:
        raise BenchkitError(f"no benchmarks in {' '.join(args.paths)}"
                            + (f" match -k {args.keyword!r}" if args.keyword else ""))
    if args.num_threads is not None:
        for b in selected:
            b.timer._task_spec = dataclasses.replace(b.timer.task_spec,
                                                     num_threads=args.num_threads)
    measurements, callgrind = [], []
    if not args.no_wall_time:
        for b in tqdm(selected, desc="wall time", unit="benchmark", file=sys.stderr):
            m = b.timer.blocked_autorange(min_run_time=args.min_run_time)
            m.metadata = {"benchmark": b.name, "gates": [str(g) for g in b.gates]}
            measurements.append(m)
    if args.callgrind:
        print(f"counting instructions of {len(selected)} benchmarks in one valgrind process...",
              file=sys.stderr)
        stats = benchkit.collect_callgrind_many([b.timer for b in selected],
                                                cache_sim=args.cache_sim)
        for b, s in zip(selected, stats):
            s.metadata.update({"benchmark": b.name, "gates": [str(g) for g in b.gates]})
            callgrind.append(s)
    if measurements:
        print(Compare(measurements))
    if callgrind:
        print(format_callgrind(callgrind))
    output = Path(args.output or f"results/run-{datetime.datetime.now():%Y%m%d-%H%M%S}.json")
    benchkit.save(output, [*measurements, *callgrind])
    print(f"wrote {output}")
    return EXIT_OK


def cmd_show(args) -> int:
    import benchkit
    from benchkit.compare import Compare
    from benchkit.report import format_callgrind, format_environment
    results = benchkit.load(args.file)
    print(format_environment(results.environment))
    print()
    if results.measurements:
        print(Compare(results.measurements))
    if results.callgrind:
        print(format_callgrind(results.callgrind, markdown=args.markdown))
    if not results.measurements and not results.callgrind:
        print(f"{args.file} holds no results")
    return EXIT_OK


def cmd_compare(args) -> int:
    import benchkit
    from benchkit import ab
    from benchkit.report import format_comparison
    comparison = ab.compare(benchkit.load(args.base), benchkit.load(args.new), args.fail_on,
                            noise=args.noise, alpha=args.alpha)
    if not comparison.rows:
        raise BenchkitError(f"{args.base} and {args.new} have no benchmark in common")
    print(format_comparison(comparison, markdown=args.markdown))
    return EXIT_REGRESSION if comparison.regressions else EXIT_OK


def cmd_diff(args) -> int:
    import benchkit
    from benchkit.ab import benchmark_name
    from benchkit.valgrind.counts import diff_counts
    base, new = benchkit.load(args.base), benchkit.load(args.new)
    for label, r in ((args.base, base), (args.new, new)):
        if not r.callgrind:
            raise BenchkitError(f"{label} holds no instruction counts; run with --callgrind")
    base_by = {benchmark_name(s): s for s in base.callgrind}
    new_by = {benchmark_name(s): s for s in new.callgrind}
    names = [n for n in new_by if n in base_by]
    if args.benchmark:
        if args.benchmark not in names:
            raise BenchkitError(f"no benchmark {args.benchmark!r} in both files; "
                                f"choose from {names}")
        names = [args.benchmark]
    for name in names:
        a = base_by[name].as_standardized().stats(args.inclusive, subtract_baseline=True)
        b = new_by[name].as_standardized().stats(args.inclusive, subtract_baseline=True)
        print(f"== {name}: {base_by[name].per_run():,.1f} -> {new_by[name].per_run():,.1f} "
              f"instructions/run (counts below are of {new_by[name].number_per_run} runs, "
              "baseline subtracted, paths standardised)")
        print(diff_counts(a, b).format(top=args.top))
        print()
    return EXIT_OK


def cmd_plot(args) -> int:
    import benchkit
    from benchkit import ab
    from benchkit.plot import render_png
    from benchkit.results.store import atomic_write_bytes
    loaded = [(Path(f).name, benchkit.load(f)) for f in args.files]
    comparison = ab.compare(loaded[0][1], loaded[1][1]) if len(loaded) == 2 else None
    atomic_write_bytes(args.output, render_png(loaded, comparison))
    print(f"wrote {args.output}")
    return EXIT_OK


def cmd_merge(args) -> int:
    import benchkit
    merged = benchkit.merge([benchkit.load(f) for f in args.files])
    benchkit.save(args.output, merged)
    print(f"wrote {args.output}: {len(merged.measurements)} measurements, "
          f"{len(merged.callgrind)} callgrind stats from {len(args.files)} files")
    return EXIT_OK


COMMANDS = {"run": cmd_run, "show": cmd_show, "compare": cmd_compare, "diff": cmd_diff,
            "plot": cmd_plot, "merge": cmd_merge}


def main(argv: list[str] | None = None) -> int:
    from benchkit.cli import profile_commands
    args = build_parser().parse_args(argv)
    handler = COMMANDS.get(args.command) or profile_commands.COMMANDS[args.command]
    try:
        return handler(args)
    except BenchkitError as error:
        print(f"benchkit {args.command}: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
