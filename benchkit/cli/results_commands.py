"""Commands over results files: show, compare, diff, plot, merge, import-torch."""
from __future__ import annotations

import json
from pathlib import Path

from benchkit.cli import args as types
from benchkit.cli import shared_options as shared
from benchkit.cli.exit_codes import Outcome, comparison_outcome
from benchkit.core.text import one_line
from benchkit.errors import BenchkitError


def add_parsers(sub) -> None:
    """The subcommands of this module."""
    show = sub.add_parser("show", help="print the tables of a results file")
    show.add_argument("file")
    show.add_argument("--markdown", action="store_true", help="print tables as markdown")
    types.add_wide(show)

    comp = sub.add_parser("compare", help="A/B verdicts between two results files (or of "
                                          "one `benchkit ab` file)")
    comp.add_argument("base")
    comp.add_argument("new", nargs="?", help="omit when BASE is a `benchkit ab` results file")
    shared.add_verdict_options(comp, "5%% for separate runs, 2%% for an A/B file")

    diff = sub.add_parser("diff", help="per-function instruction-count diff")
    diff.add_argument("base")
    diff.add_argument("new")
    diff.add_argument("--benchmark", metavar="NAME", help="only this benchmark")
    diff.add_argument("--top", type=types.non_negative_int, default=20, metavar="N",
                      help="rows per benchmark (0 = all)")
    diff.add_argument("--inclusive", action="store_true", help="inclusive instead of self counts")

    plot = sub.add_parser("plot", help="PNG of distributions, an A/B comparison (two files, or one "
                               "ab file) and memory per run")
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


def cmd_show(args) -> Outcome | tuple[Outcome, ...]:
    """`benchkit show`: the tables of a results file."""
    import benchkit
    from benchkit.api.compare import Compare
    from benchkit.core.compare.table import by_suite_file
    from benchkit.core.compare.report import (format_callgrind, format_environment, format_memory,
                                      format_sites)
    results = benchkit.load(args.file)
    print(format_environment(results.environment))
    print()
    if results.ab:
        from benchkit.core.compare import comparison
        from benchkit.core.records.records import Side
        from benchkit.core.compare.report import format_comparison
        for side in Side:
            info = results.ab.sides[side]
            what = info.rev or info.python
            print(one_line(f"{side.value.upper()}: {what} {dict(info.env) or ''}".rstrip()))
        print(format_comparison(comparison.of_ab(results), markdown=args.markdown,
                                width=types.table_width(args)))
    elif results.measurements:
        tables = Compare(by_suite_file(results.measurements))
        print(tables.markdown() if args.markdown else tables)
    if results.callgrind:
        print(format_callgrind(results.callgrind, markdown=args.markdown))
    if results.memory:
        print(format_memory(results.memory, markdown=args.markdown))
        sites = format_sites(results.memory, markdown=args.markdown)
        if sites:
            print("\n" + sites)
    if results.values:
        from benchkit.core.records.values import format_values
        print(format_values(results.values))
    if not results.ab:      # an A/B's comparison above lists its failures already
        for failure in results.failures:
            print(f"FAILED {one_line(failure.summary())}")
        if results.partial:
            print(f"PARTIAL: this run stopped early: {one_line(results.partial)}")
    if not (results.measurements or results.callgrind or results.memory or results.values
            or results.failures):
        print(f"{one_line(args.file)} holds no results")
    return Outcome.OK


def cmd_compare(args) -> Outcome | tuple[Outcome, ...]:
    """`benchkit compare`: verdicts between two results files (or of one ab file), gates."""
    import benchkit
    from benchkit.core.compare import comparison
    from benchkit.core.compare.report import comparison_to_json, format_comparison
    base = benchkit.load(args.base)
    if args.new is None:
        if not base.ab:
            raise BenchkitError(f"{args.base} is not a `benchkit ab` results file; pass two "
                                "results files: compare BASE NEW")
        compared = comparison.of_ab(base, args.fail_on, noise=args.noise, alpha=args.alpha,
                                    allow_missing=args.allow_missing, strict=args.strict)
    else:
        new = benchkit.load(args.new)
        for path, r in ((args.base, base), (args.new, new)):
            if r.ab:
                raise BenchkitError(f"{path} holds both sides of an A/B; compare it alone: "
                                    f"benchkit compare {path}")
        compared = comparison.of_runs(base, new, args.fail_on, noise=args.noise,
                                      alpha=args.alpha, allow_missing=args.allow_missing,
                                      strict=args.strict)
    from benchkit.core.records.values import compare_values, format_value_changes
    values = compare_values(base.values, new.values) if args.new is not None else []
    if args.new is not None and not (compared.rows or values or compared.failed_base
                                     or compared.failed_new):
        raise BenchkitError(f"{args.base} and {args.new} have no benchmark in common")
    if args.json:
        document = comparison_to_json(compared)
        if values:
            document["values"] = [v.to_json() for v in values]
        print(json.dumps(document, indent=1))
    else:
        if compared.rows or compared.failed_base or compared.failed_new or not values:
            print(format_comparison(compared, markdown=args.markdown,
                                    width=types.table_width(args)))
        if values:
            print(format_value_changes(values))
    return comparison_outcome(compared, allow_missing=args.allow_missing)


def cmd_diff(args) -> Outcome | tuple[Outcome, ...]:
    """`benchkit diff`: per-function instruction-count differences."""
    import benchkit
    from benchkit.core.callgrind.counts import diff_counts
    from benchkit.core.decisions.bands import Band, instruction_change
    from benchkit.core.records.records import benchmark_name
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
        a, b = (by[name].as_standardized(thorough=True).stats(args.inclusive,
                                                              subtract_baseline=True)
                for by in (base_by, new_by))
        print(f"== {one_line(name)}: {base_by[name].per_run():,.1f} -> "
              f"{new_by[name].per_run():,.1f} instructions/run (counts below are of "
              f"{new_by[name].number_per_run} runs, baseline subtracted, paths standardised)")
        band_a, band_b = Band.of(base_by[name]), Band.of(new_by[name])
        if band_a.layouts > 1 or band_b.layouts > 1:
            change = instruction_change(band_a, band_b)
            verdict = (f"a change of {change:+.2%} beyond both bands" if change else
                       "the bands overlap: no change claimed; the rows below are layout "
                       "noise as much as anything")
            print(f"   layout bands (per run): {band_a} -> {band_b}: {verdict}")
        print(diff_counts(a, b).format(top=args.top or None))
        print()
    return Outcome.OK


def cmd_plot(args) -> Outcome | tuple[Outcome, ...]:
    """`benchkit plot`: a PNG of the distributions (and of an A/B comparison)."""
    import benchkit
    from benchkit.api.plot import render_png
    from benchkit.core.compare import comparison
    from benchkit.system.files import atomic_write_bytes
    loaded = [(Path(f).name, benchkit.load(f)) for f in args.files]
    compared = comparison.of_runs(loaded[0][1], loaded[1][1]) if len(loaded) == 2 else None
    if len(loaded) == 1 and loaded[0][1].ab is not None:     # an `ab` file: both sides
        name, results = loaded[0]
        loaded = [(f"{name} {side}", part)
                  for side, part in zip(("BASE", "NEW"), comparison.split_ab(results))]
        compared = comparison.of_ab(results)
    atomic_write_bytes(args.output, render_png(loaded, compared))
    print(f"wrote {one_line(args.output)}")
    return Outcome.OK


def cmd_merge(args) -> Outcome | tuple[Outcome, ...]:
    """`benchkit merge`: several results files in one."""
    import benchkit
    from benchkit.cli import saving
    from benchkit.system.results_files import check_writable
    output = check_writable(args.output)
    merged = benchkit.merge([benchkit.load(f) for f in args.files])
    stored = saving.save(output, merged, "the merged results")
    print(f"{len(merged.measurements)} measurements, {len(merged.callgrind)} callgrind stats "
          f"from {len(args.files)} files")
    return Outcome.OK, saving.outcome(stored)


def cmd_import_torch(args) -> Outcome | tuple[Outcome, ...]:
    """`benchkit import-torch`: torch.utils.benchmark pickles as a benchkit results file."""
    import benchkit
    from benchkit.api.torch_compat import load_torch_pickle
    from benchkit.system.results_files import check_writable
    output = check_writable(args.output)
    items = [item for path in args.files for item in load_torch_pickle(path)]
    benchkit.save(output, items)
    kinds = {}
    for item in items:
        kinds[type(item).__name__] = kinds.get(type(item).__name__, 0) + 1
    print(f"wrote {one_line(output)}: " + ", ".join(f"{n} {k}" for k, n in kinds.items()) +
          f" from {len(args.files)} torch.utils.benchmark pickle(s)")
    return Outcome.OK


COMMANDS = {"import-torch": cmd_import_torch, "show": cmd_show, "compare": cmd_compare,
            "diff": cmd_diff, "plot": cmd_plot, "merge": cmd_merge}
