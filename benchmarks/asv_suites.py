"""Real asv suites run as they are: what asv's own discovery finds beside what
`benchkit run SUITE_DIR` reports, suite by suite.

    .venv/bin/python benchmarks/asv_suites.py SUITE_DIR [SUITE_DIR ...] \\
        [-o results/asv_suites.json]      (suites already in the file are kept)
    .venv/bin/python benchmarks/asv_suites.py SUITE_DIR --time-ratios 100 -o ...

SUITE_DIR is a project's asv benchmark directory, unchanged (e.g. `benchmarks/benchmarks`
of PyWavelets' source archive on PyPI; the project itself must be importable). For each
suite: asv's (benchmark, parameters) pairs by type, found by asv_runner in a process of its
own as `asv run` finds them; and benchkit's run of the same directory (one process, 0.01 s
per benchmark: a check of what is found and run, not of the figures): pairs
measured (time_ timed, timeraw_ timed in fresh interpreters; track_, mem_ and peakmem_ as
values), skipped (asv's NotImplementedError rule) and failed. Reported: the share of asv's
pairs benchkit reported (measured, skipped or failed), and the pairs of types benchkit does
not measure (none now).

With --time-ratios N: N time_ pairs drawn at random are measured by benchkit with its
defaults and by asv_runner in fresh processes as `asv run` takes them, settled (2 processes,
the benchmark's own attributes) and --quick (1 process, one sample of one call): the share
of pairs whose benchkit time is within a factor of 3 of asv's, and the ratios' spread.
"""
from __future__ import annotations

import argparse
import collections
import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TIMED = ("TimeBenchmark", "TimerawBenchmark")     # a Measurement each; the others are values
ASV_LIST = """
import json, sys
from asv_runner.discovery import disc_benchmarks
print(); print(json.dumps([[b.name, type(b).__name__, b.params, b.param_names]
                  for b in disc_benchmarks(sys.argv[1], ignore_import_errors=True)]))
"""


def asv_pairs(suite: Path, ids: dict[str, tuple[str, str]] | None = None) -> dict[str, str]:
    """{benchmark[params]: asv type} as asv's discovery finds them (and, into `ids`, the
    name asv_runner gives each: `name-INDEX` on a grid)."""
    listed = subprocess.run([sys.executable, "-c", ASV_LIST, str(suite.resolve())],
                            capture_output=True, text=True, check=True, cwd=suite.parent)
    out = {}
    for name, kind, params, names in json.loads(listed.stdout.strip().splitlines()[-1]):
        points: list[list[str]] = [[]]
        for values in params:
            points = [p + [v] for p in points for v in values]
        for index, point in enumerate(points):
            shown = ",".join(f"{k}={v}" for k, v in zip(names, point))
            pair = f"{name}[{shown}]" if params else name
            out[pair] = kind
            if ids is not None:     # asv_runner's id, and -k's word for the pair
                ids[pair] = ((f"{name}-{index}", f"{name}({', '.join(point)})") if params
                             else (name, name))
    return out


# asv_runner's timing of one benchmark in a fresh process, as `asv run` takes it in each of
# its benchmark processes (setup_cache, setup, run with the benchmark's own attributes or
# --quick's, teardown): the samples (seconds per call)
ASV_TIMING = """
import json, sys
from asv_runner.discovery import get_benchmark_from_name
extra = json.loads(sys.argv[3])
bench = get_benchmark_from_name(sys.argv[1], sys.argv[2], extra_params=extra)
cache = bench.do_setup_cache()
if cache is not None:
    bench.set_cache(cache)
if bench.do_setup():
    print(json.dumps(None))
else:
    try:
        print(json.dumps(bench.run(*bench._build_params())["samples"]))
    finally:
        bench.do_teardown()
"""
LAUNCHER = "import subprocess, sys; sys.exit(subprocess.call(sys.argv[1:]))"
QUICK = {"number": 1, "repeat": 1, "warmup_time": 0}      # what `asv run --quick` sets


def asv_samples(suite: Path, asv_id: str, extra: dict, processes: int) -> list[float]:
    """asv's samples of one pair over `processes` fresh processes (asv's default: 2)."""
    out: list[float] = []
    for _ in range(processes):
        done = subprocess.run([sys.executable, "-c", LAUNCHER, sys.executable, "-c",
                               ASV_TIMING, str(suite.resolve()), asv_id, json.dumps(extra)],
                              capture_output=True, text=True, cwd=suite.parent, timeout=600)
        lines = done.stdout.strip().splitlines()
        got = json.loads(lines[-1]) if done.returncode == 0 and lines else None
        if not got:
            return []
        out += got
    return out


def time_ratios(suite: Path, pairs: int, seed: int) -> dict:
    """benchkit's wall time beside asv_runner's settled (2 processes, the benchmark's own
    attributes) and --quick values on `pairs` time_ pairs drawn at random: the share within
    a factor of 3, and the ratios' quantiles."""
    import random
    import statistics
    ids: dict[str, tuple[str, str]] = {}
    asv = asv_pairs(suite, ids)
    eligible = sorted(n for n, kind in asv.items() if kind == "TimeBenchmark")
    chosen = random.Random(seed).sample(eligible, min(pairs, len(eligible)))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run.json"
        began = time.perf_counter()
        subprocess.run([sys.executable, "-m", "benchkit", "run", suite.name, "-k",
                        " or ".join(ids[n][1] for n in chosen), "-o", str(out)], capture_output=True, text=True,
                       cwd=suite.parent)
        benchkit_seconds = time.perf_counter() - began
        doc = json.loads(out.read_text()) if out.is_file() else {"measurements": []}
    ours = {}
    for m in doc["measurements"]:
        times = [t / m["number_per_run"] for t in m["raw_times"]]
        ours[m["metadata"]["benchmark"]] = statistics.median(times)
    ratios: dict[str, list[float]] = {"settled": [], "quick": []}
    farthest: list[tuple[float, str, float, float]] = []
    began = time.perf_counter()
    for name in chosen:
        if name not in ours:
            continue
        for kind, extra, processes in (("settled", {}, 2), ("quick", QUICK, 1)):
            samples = asv_samples(suite, ids[name][0], extra, processes)
            if samples:
                ratios[kind].append(ours[name] / statistics.median(samples))
                if kind == "settled":
                    farthest.append((abs(math.log(ratios[kind][-1])), name, ours[name],
                                     statistics.median(samples)))
    asv_seconds = time.perf_counter() - began

    def summary(values: list[float]) -> dict:
        if not values:
            return {"pairs": 0}
        q = statistics.quantiles(values, n=20) if len(values) > 1 else values * 19
        return {"pairs": len(values),
                "within_3x_percent": round(100 * sum(1 / 3 <= r <= 3 for r in values)
                                           / len(values), 1),
                "within_1_5x_percent": round(100 * sum(1 / 1.5 <= r <= 1.5 for r in values)
                                             / len(values), 1),
                "median_ratio": round(statistics.median(values), 3),
                "ratio_5th_95th_percentile": [round(q[0], 3), round(q[-1], 3)]}
    return {"pairs_drawn": len(chosen), "seed": seed, "benchkit_measured": len(ours),
            "benchkit_settings": "defaults (10 processes, 0.1 s each)",
            "benchkit_over_asv_settled": summary(ratios["settled"]),
            "benchkit_over_asv_quick": summary(ratios["quick"]),
            "farthest_from_asv_settled": [
                {"pair": name, "benchkit_s": float(f"{ours_s:.4g}"),
                 "asv_settled_s": float(f"{asv_s:.4g}")}
                for _, name, ours_s, asv_s in sorted(farthest, reverse=True)[:8]],
            "not_measured_by_benchkit": sorted(set(chosen) - set(ours)),
            "benchkit_seconds": round(benchkit_seconds, 1),
            "asv_seconds_settled_and_quick": round(asv_seconds, 1)}


BENCHKIT_LIST = """
import json, sys
from pathlib import Path
from benchkit.orchestration.asv_suite import asv_benchmarks
from benchkit.orchestration.asv_values import value_benchmarks
failures, others = [], []
found = asv_benchmarks(Path(sys.argv[1]), lambda f, e: failures.append(f.benchmark), None,
                       others)
values = [v.name for v in value_benchmarks([sys.argv[1]], lambda name: True)]
print(json.dumps({"time": [b.name for b in found], "values": values, "others": others,
                  "failed": failures}))
"""


def benchkit_discovery(suite: Path) -> dict:
    """What benchkit's discovery finds in the suite, without measuring."""
    listed = subprocess.run([sys.executable, "-c", BENCHKIT_LIST, str(suite.resolve())],
                            capture_output=True, text=True, check=True, cwd=suite.parent)
    return json.loads(listed.stdout.strip().splitlines()[-1])


def benchkit_run(suite: Path, output: Path) -> tuple[dict, float, str]:
    began = time.perf_counter()
    # one process, 0.01 s per benchmark: this checks what is found and run, not the figures
    done = subprocess.run([sys.executable, "-m", "benchkit", "run", suite.name,
                           "--processes", "1", "--min-run-time", "0.01", "--timeout", "120",
                           "-o", str(output)], capture_output=True, text=True,
                          cwd=suite.parent)
    seconds = time.perf_counter() - began
    if not output.is_file():
        sys.exit(f"benchkit run {suite} wrote nothing:\n{done.stderr[-3000:]}")
    return json.loads(output.read_text()), seconds, done.stderr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suites", nargs="+", type=Path)
    parser.add_argument("-o", "--output", type=Path)
    parser.add_argument("--time-ratios", type=int, metavar="N",
                        help="instead: benchkit's time beside asv_runner's settled and "
                             "--quick values on N time_ pairs drawn at random")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--discover-only", action="store_true",
                        help="compare what is found, measure nothing (suites whose setups "
                             "take minutes)")
    args = parser.parse_args()
    rows = {}
    for suite in args.suites:
        if args.time_ratios:
            rows[f"{suite} (time ratios)"] = row = time_ratios(suite, args.time_ratios,
                                                               args.seed)
            print(f"{suite}: {json.dumps(row)}")
            continue
        asv = asv_pairs(suite)
        if args.discover_only:
            found = benchkit_discovery(suite)
            timed = {n for n, kind in asv.items() if kind in TIMED}
            named = set(found["time"]) | set(found["values"]) | set(found["others"])
            rows[str(suite)] = {
                "asv_pairs_by_type": dict(collections.Counter(asv.values())),
                "benchkit_time_benchmarks": len(found["time"]),
                "benchkit_value_benchmarks": len(found["values"]),
                "benchkit_named_not_measured": len(found["others"]),
                "same_names_percent": round(100 * len(named & set(asv)) / max(len(asv), 1),
                                            1),
                "time_pairs_found_percent": round(
                    100 * len(timed & set(found["time"])) / max(len(timed), 1), 1),
                "benchkit_only": sorted(named - set(asv))[:10],
                "load_failures": found["failed"],
                "discover_only": True}
            print(f"{suite}: asv finds {len(asv)} pairs; benchkit finds the same "
                  f"{rows[str(suite)]['same_names_percent']} % (time_ "
                  f"{rows[str(suite)]['time_pairs_found_percent']} %), load failures "
                  f"{found['failed']}")
            continue
        with tempfile.TemporaryDirectory() as tmp:
            doc, seconds, _ = benchkit_run(suite, Path(tmp) / "run.json")
        measured = {m["metadata"]["benchmark"] for m in doc["measurements"]}
        valued = {v["metadata"]["benchmark"] for v in doc.get("values", [])}
        skipped = {f["benchmark"] for f in doc["failures"] if f["kind"] == "skipped"}
        failed = {f["benchmark"] for f in doc["failures"] if f["kind"] != "skipped"}
        timed = {n for n, kind in asv.items() if kind in TIMED}
        reported = timed & (measured | skipped | failed)
        others = {n for n, kind in asv.items() if kind not in TIMED}
        rows[str(suite)] = {
            "asv_pairs_by_type": dict(collections.Counter(asv.values())),
            "asv_time_pairs": len(timed),
            "benchkit_measured": len(measured & timed),
            "benchkit_values": len(valued & others),
            "all_pairs_reported_percent": round(
                100 * len(set(asv) & (measured | valued | skipped | failed))
                / max(len(asv), 1), 1),
            "benchkit_skipped": len(skipped & timed),
            "benchkit_failed": len(failed & timed),
            "benchkit_unknown_names": sorted((measured | valued | skipped) - set(asv))[:10],
            "time_pairs_reported_percent": round(100 * len(reported) / max(len(timed), 1), 1),
            "not_measured_other_types": len(others - valued - skipped - failed),
            "benchkit_seconds": round(seconds, 1),
        }
        row = rows[str(suite)]
        print(f"{suite}: asv finds {len(asv)} pairs ({row['asv_pairs_by_type']}); benchkit "
              f"measured {row['benchkit_measured']}, skipped {row['benchkit_skipped']}, "
              f"failed {row['benchkit_failed']} of the {len(timed)} time_ pairs "
              f"({row['time_pairs_reported_percent']} % reported), values of "
              f"{row['benchkit_values']} of the {len(others)} other pairs; "
              f"{row['all_pairs_reported_percent']} % of all pairs reported in {seconds:.0f} s; "
              f"{row['not_measured_other_types']} pairs of other types not measured yet")
    if args.output:
        # suites measured by earlier runs into the same file are kept
        kept = json.loads(args.output.read_text()) if args.output.is_file() else {}
        args.output.write_text(json.dumps({**kept, **rows}, indent=1) + "\n")
        print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
