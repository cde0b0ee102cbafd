"""`benchkit scaling FILE`: how each parameter grid's cost grows (complexity fits)."""
from __future__ import annotations

import json
import math

from benchkit.cli.exit_codes import Outcome
from benchkit.core.text import one_line
from benchkit.errors import BenchkitError


def add_parsers(sub) -> None:
    """The `scaling` subcommand."""
    scaling = sub.add_parser(
        "scaling", help="fit each parameter grid's cost to O(1) ... O(n^3)",
        description="For each benchmark function run over a grid with a numeric parameter "
                    "(@benchmark(params=...)), fit cost(n) = coefficient * f(n) for "
                    "O(1), O(log n), O(n), O(n log n), O(n^2), O(n^3) by least squares, print "
                    "the best fit, how clearly it beats the runner-up, and the sizes between "
                    "which the cost per unit of the fit jumps.")
    scaling.add_argument("file", metavar="FILE", help="a results file of `benchkit run`")
    scaling.add_argument("--param", metavar="NAME",
                         help="the parameter to fit over (default: each function's only "
                              "numeric parameter)")
    scaling.add_argument("--metric", choices=("time", "instructions"),
                         help="what to fit: median wall time or instructions per run "
                              "(default: time where the file has wall times, else "
                              "instructions)")
    scaling.add_argument("--raw", action="store_true",
                         help="with time: fit the raw medians; by default each run's time is "
                              "taken relative to the speed probe before it (as the history "
                              "does), so a machine that slows down for a while bends no curve")
    scaling.add_argument("--json", action="store_true",
                         help="print a JSON list, one entry per fitted benchmark")
    scaling.add_argument("--plot", metavar="PNG",
                         help="also write a log-log plot of the points and fitted curves")
    scaling.add_argument("--fail-on", action="append", default=[], metavar="GATE",
                         help="exit 1 where a best fit is above a class, e.g. "
                              "'complexity>O(n log n)' (repeatable)")


def _items(results, metric: str, raw: bool):
    import numpy as np
    from benchkit.core.measure.measurement import probe_relative_times
    from benchkit.core.records.records import Benchmark, benchmark_name
    from benchkit.core.measure.scaling import Point
    if metric == "time":
        relative = {id(m): probe_relative_times(m) for m in results.measurements}
        probes = [p for m in results.measurements for s in m.processes or () for p in s.probes]
        if raw or not probes or any(r is None for r in relative.values()):
            for m in results.measurements:
                low, high = np.percentile(m.times, [25, 75])
                yield benchmark_name(m), Benchmark.of(m).params, Point(0, m.median, low, high)
            return
        # Back in seconds at the file's typical speed: the median probe.
        scale = float(np.median(probes))
        for m in results.measurements:
            times = scale * np.array([t for process in relative[id(m)] for t in process])
            low, median, high = np.percentile(times, [25, 50, 75])
            yield (benchmark_name(m), Benchmark.of(m).params,
                   Point(0, float(median), float(low), float(high)))
    else:
        for c in results.callgrind:
            yield benchmark_name(c), Benchmark.of(c).params, Point(0, c.per_run())


def cmd_scaling(args) -> Outcome | tuple[Outcome, ...]:
    """`benchkit scaling`."""
    import benchkit
    from benchkit.core.measure.scaling import ComplexityGate, fit, series_of
    gates = [ComplexityGate.parse(g) for g in args.fail_on]
    results = benchkit.load(args.file)
    metric = args.metric or ("time" if results.measurements else "instructions")
    if metric == "instructions" and not results.callgrind:
        raise BenchkitError(f"{args.file} has no instruction counts; run with --callgrind "
                            "or fit --metric time")
    found = series_of(list(_items(results, metric, args.raw)), args.param)
    fits, skipped = [], []
    for series in found:
        try:
            fits.append(fit(series.benchmark, series.param, series.points))
        except ValueError as error:
            skipped.append(str(error))
    if not fits:
        why = "; ".join(skipped) or (
            f"no benchmark in {args.file} has a numeric grid parameter"
            + (f" named {args.param!r}" if args.param else "")
            + " (declare one with @benchmark(params={'n': [...]}))")
        raise BenchkitError(f"nothing to fit: {why}")
    broken = {f.benchmark: [str(g) for g in gates if g.breaks(f)] for f in fits}
    if args.json:
        print(json.dumps([{**f.to_json(), "metric": metric, "failures": broken[f.benchmark]}
                          for f in fits], indent=2))
    else:
        print(format_fits(fits, metric, broken, gated=bool(gates)))
        for note in skipped:
            print(f"not fitted: {one_line(note)}")
    if args.plot:
        from benchkit.api.plot import render_scaling_png
        from benchkit.system.files import atomic_write_bytes
        atomic_write_bytes(args.plot, render_scaling_png(fits, metric))
        if not args.json:
            print(f"wrote {one_line(args.plot)}")
    return Outcome.REGRESSION if any(broken.values()) else Outcome.OK


def format_fits(fits, metric: str, broken: dict[str, list[str]], gated: bool) -> str:
    """The table of best fits (a gate column where gates were given), and the jumps."""
    from tabulate import tabulate
    unit = "seconds" if metric == "time" else "instructions"
    rows = []
    for f in fits:
        margin = ("exact" if math.isinf(f.margin) else f"{f.margin:.3g}x" if f.margin >= 1
                  else "as close")
        row = [one_line(f.benchmark), f.param, len(f.points), f.best.complexity.value,
               f"{f.best.coefficient:.4g}", f"{f.best.rms:.2%}",
               f"{f.candidates[1].complexity.value} {margin}"]
        if gated:
            row.append("FAIL: " + ", ".join(broken[f.benchmark]) if broken[f.benchmark]
                       else "pass")
        rows.append(row)
    headers = ["benchmark", "param", "sizes", "fit", "coefficient", "rms",
               "runner-up, rms x"] + (["gate"] if gated else [])
    out = [tabulate(rows, headers=headers, disable_numparse=True),
           f"cost = coefficient * f(n), {unit} per run; rms: of the residuals, over the mean "
           "cost\nrunner-up: the next class and its rms over the fit's"]
    for f in fits:
        for j in f.jumps:
            out.append(f"{one_line(f.benchmark)}: cost per unit of {f.best.complexity.value} "
                       f"changes {j.change:+.0%} between {f.param}={j.after:g} and "
                       f"{f.param}={j.before:g}")
    return "\n".join(out)


COMMANDS = {"scaling": cmd_scaling}
