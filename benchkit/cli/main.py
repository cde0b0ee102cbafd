"""`benchkit` command line: the only place that prints and picks exit codes.

Exit codes: 0 fine, 1 a gate caught a regression, 2 a usage or input error.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from benchkit.cli import args as types
from benchkit.errors import BenchkitError

EXIT_OK, EXIT_REGRESSION, EXIT_USAGE = 0, 1, 2


class OneLineErrors(argparse.ArgumentParser):
    """Usage errors as one line that names the argument and points to --help."""

    def error(self, message: str):
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineErrors(prog="benchkit", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    from benchkit.cli import measure_commands, profile_commands
    measure_commands.add_parsers(sub)

    show = sub.add_parser("show", help="print the tables of a results file")
    show.add_argument("file")
    show.add_argument("--markdown", action="store_true")

    comp = sub.add_parser("compare", help="A/B verdicts between two results files (or of "
                                          "one `benchkit ab` file)")
    comp.add_argument("base")
    comp.add_argument("new", nargs="?", help="omit when BASE is a `benchkit ab` results file")
    comp.add_argument("--fail-on", type=types.gate, action="append", default=[],
                      metavar="GATE",
                      help="exit 1 when a benchmark breaks GATE, e.g. 'slower>5%%' or "
                           "'instructions>1%%' (repeatable; suite gates take precedence)")
    comp.add_argument("--noise", type=types.percent, default=None, metavar="PCT",
                      help="changes inside +-PCT count as noise (default 5%% for separate "
                           "runs, 2%% for an A/B file)")
    comp.add_argument("--alpha", type=types.probability, default=0.01,
                      help="significance level (default 0.01)")
    comp.add_argument("--markdown", action="store_true")
    comp.add_argument("--json", action="store_true", help="print the verdicts as JSON")

    diff = sub.add_parser("diff", help="per-function instruction-count diff")
    diff.add_argument("base")
    diff.add_argument("new")
    diff.add_argument("--benchmark", metavar="NAME", help="only this benchmark")
    diff.add_argument("--top", type=types.non_negative_int, default=20, metavar="N",
                      help="rows per benchmark (0 = all)")
    diff.add_argument("--inclusive", action="store_true", help="inclusive instead of self counts")

    plot = sub.add_parser("plot", help="PNG of distributions (and an A/B comparison)")
    plot.add_argument("files", nargs="+", metavar="FILE")
    plot.add_argument("-o", "--output", default="benchkit.png", metavar="PNG")

    imp = sub.add_parser("import-torch", help="convert pickled torch.utils.benchmark "
                                              "Measurements/CallgrindStats (unpickles: "
                                              "trusted files only)")
    imp.add_argument("files", nargs="+", metavar="PICKLE")
    imp.add_argument("-o", "--output", required=True, metavar="FILE",
                     help="benchkit results file to write (.json or .json.gz)")

    merge = sub.add_parser("merge", help="merge results files into one")
    merge.add_argument("output")
    merge.add_argument("files", nargs="+", metavar="FILE")

    profile_commands.add_parsers(sub)
    return parser


def cmd_show(args) -> int:
    import benchkit
    from benchkit.api.compare import Compare
    from benchkit.core.report import format_callgrind, format_environment
    results = benchkit.load(args.file)
    print(format_environment(results.environment))
    print()
    if results.ab:
        from benchkit.core import comparison as ab
        from benchkit.core.report import format_comparison
        sides = results.ab["sides"]
        for side in ("base", "new"):
            info = sides[side]
            what = info.get("rev") or info.get("python")
            print(f"{side.upper()}: {what} {info.get('env') or ''}".rstrip())
        print(format_comparison(ab.compare_ab(results), markdown=args.markdown))
    elif results.measurements:
        print(Compare(results.measurements))
    if results.callgrind:
        print(format_callgrind(results.callgrind, markdown=args.markdown))
    if not results.measurements and not results.callgrind:
        print(f"{args.file} holds no results")
    return EXIT_OK


def cmd_compare(args) -> int:
    import benchkit
    from benchkit.core import comparison as ab
    from benchkit.core.report import comparison_to_json, format_comparison
    base = benchkit.load(args.base)
    if args.new is None:
        if not base.ab:
            raise BenchkitError(f"{args.base} is not a `benchkit ab` results file; pass two "
                                "results files: compare BASE NEW")
        comparison = ab.compare_ab(base, args.fail_on, noise=args.noise, alpha=args.alpha)
    else:
        new = benchkit.load(args.new)
        for path, r in ((args.base, base), (args.new, new)):
            if r.ab:
                raise BenchkitError(f"{path} holds both sides of an A/B; compare it alone: "
                                    f"benchkit compare {path}")
        comparison = ab.compare(base, new, args.fail_on, noise=args.noise, alpha=args.alpha)
        if not comparison.rows:
            raise BenchkitError(f"{args.base} and {args.new} have no benchmark in common")
    if args.json:
        print(json.dumps(comparison_to_json(comparison), indent=1))
    else:
        print(format_comparison(comparison, markdown=args.markdown))
    return EXIT_REGRESSION if comparison.regressions else EXIT_OK


def cmd_diff(args) -> int:
    import benchkit
    from benchkit.core.comparison import Band, benchmark_name, instruction_change
    from benchkit.core.callgrind.counts import diff_counts
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
        band_a, band_b = Band.of(base_by[name]), Band.of(new_by[name])
        if band_a.layouts > 1 or band_b.layouts > 1:
            change = instruction_change(band_a, band_b)
            verdict = (f"a change of {change:+.2%} beyond both bands" if change else
                       "the bands overlap: no change claimed; the rows below are layout "
                       "noise as much as anything")
            print(f"   layout bands (per run): {band_a} -> {band_b}: {verdict}")
        print(diff_counts(a, b).format(top=args.top or None))
        print()
    return EXIT_OK


def cmd_plot(args) -> int:
    import benchkit
    from benchkit.core import comparison as ab
    from benchkit.api.plot import render_png
    from benchkit.system.results_files import atomic_write_bytes
    loaded = [(Path(f).name, benchkit.load(f)) for f in args.files]
    comparison = ab.compare(loaded[0][1], loaded[1][1]) if len(loaded) == 2 else None
    atomic_write_bytes(args.output, render_png(loaded, comparison))
    print(f"wrote {args.output}")
    return EXIT_OK


def cmd_merge(args) -> int:
    import benchkit
    from benchkit.system.results_files import check_writable, save_with_fallback
    output = check_writable(args.output)
    merged = benchkit.merge([benchkit.load(f) for f in args.files])
    written, problem = save_with_fallback(output, merged)
    if problem:
        print(f"could not write {problem}; saved the merged results to {written} instead",
              file=sys.stderr)
    print(f"wrote {written}: {len(merged.measurements)} measurements, "
          f"{len(merged.callgrind)} callgrind stats from {len(args.files)} files")
    return EXIT_OK


def cmd_import_torch(args) -> int:
    import benchkit
    from benchkit.system.results_files import check_writable
    from benchkit.api.torch_compat import load_torch_pickle
    output = check_writable(args.output)
    items = [item for path in args.files for item in load_torch_pickle(path)]
    benchkit.save(output, items)
    kinds = {}
    for item in items:
        kinds[type(item).__name__] = kinds.get(type(item).__name__, 0) + 1
    print(f"wrote {output}: " + ", ".join(f"{n} {k}" for k, n in kinds.items()) +
          f" from {len(args.files)} torch.utils.benchmark pickle(s)")
    return EXIT_OK


COMMANDS = {"import-torch": cmd_import_torch, "show": cmd_show, "compare": cmd_compare,
            "diff": cmd_diff, "plot": cmd_plot, "merge": cmd_merge}


def main(argv: list[str] | None = None) -> int:
    from benchkit.cli import measure_commands, profile_commands
    args = build_parser().parse_args(argv)
    handler = (COMMANDS.get(args.command) or measure_commands.COMMANDS.get(args.command)
               or profile_commands.COMMANDS[args.command])
    try:
        return handler(args)
    except BenchkitError as error:
        print(f"benchkit {args.command}: error: {error}", file=sys.stderr)
        theirs = getattr(error, "user_traceback", "")
        if theirs:
            print("-- where it happened in your code:\n" + theirs.rstrip(), file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
