"""Real asv suites run as they are: what asv's own discovery finds beside what
`benchkit run SUITE_DIR` reports, suite by suite.

    .venv/bin/python benchmarks/asv_suites.py SUITE_DIR [SUITE_DIR ...] \\
        [-o results/asv_suites.json]      (suites already in the file are kept)

SUITE_DIR is a project's asv benchmark directory, unchanged (e.g. `benchmarks/benchmarks`
of PyWavelets' source archive on PyPI; the project itself must be importable). For each
suite: asv's (benchmark, parameters) pairs by type, found by asv_runner in a process of its
own as `asv run` finds them; and benchkit's run of the same directory (one process, 0.01 s
per benchmark: a check of what is found and run, not of the figures): pairs
measured (time_ timed, timeraw_ timed in fresh interpreters; track_, mem_ and peakmem_ as
values), skipped (asv's NotImplementedError rule) and failed. Reported: the share of asv's
pairs benchkit reported (measured, skipped or failed), and the pairs of types benchkit does
not measure (none now).
"""
from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TIMED = ("TimeBenchmark", "TimerawBenchmark")     # a Measurement each; the others are values
ASV_LIST = """
import json, sys
from asv_runner.discovery import disc_benchmarks
print(json.dumps([[b.name, type(b).__name__, b.params, b.param_names]
                  for b in disc_benchmarks(sys.argv[1], ignore_import_errors=True)]))
"""


def asv_pairs(suite: Path) -> dict[str, str]:
    """{benchmark[params]: asv type} as asv's discovery finds them."""
    listed = subprocess.run([sys.executable, "-c", ASV_LIST, str(suite.resolve())],
                            capture_output=True, text=True, check=True, cwd=suite.parent)
    out = {}
    for name, kind, params, names in json.loads(listed.stdout):
        points: list[list[str]] = [[]]
        for values in params:
            points = [p + [v] for p in points for v in values]
        for point in points:
            shown = ",".join(f"{k}={v}" for k, v in zip(names, point))
            out[f"{name}[{shown}]" if params else name] = kind
    return out


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
    return json.loads(listed.stdout)


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
    parser.add_argument("--discover-only", action="store_true",
                        help="compare what is found, measure nothing (suites whose setups "
                             "take minutes)")
    args = parser.parse_args()
    rows = {}
    for suite in args.suites:
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
