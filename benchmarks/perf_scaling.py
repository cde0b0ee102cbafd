"""Complexity fits on wall time, repeated: how often `benchkit scaling` names the right class
on this machine (times relative to the speed probe, the default; and `--raw` medians),
beside Google Benchmark's own rule (coefficient * f(n), lowest RMS, no tolerance) and a
variant with a constant term (constant + coefficient * f(n), both >= 0), both applied to
the very same raw medians.

Each trial is what a user runs: `benchkit run bench_scaling.py` (default settings: 10 fresh
processes of 0.1 s per grid point; `--fast` for 3 of 0.05 s) and `benchkit scaling FILE
--json`. The suite has an O(n) grid (sum(range(n))), an O(n^2) grid (a double loop over
range(n)) and, for contrast, an O(n log n) one (sorted()).

    .venv/bin/python benchmarks/perf_scaling.py [--trials 10] [--fast]

Writes results/perf_scaling.json; the README quotes it.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchkit.core.measure.scaling import Complexity
from benchkit.system import machine
from benchkit.system.files import atomic_write_bytes

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "results" / "perf_scaling.json"

SUITE = '''
from benchkit import Timer, benchmark

@benchmark(params={"n": [1000, 4000, 16000, 64000, 256000]})
def linear(n):
    return Timer("sum(range(n))", setup=f"n = {n}", elements=n)

@benchmark(params={"n": [16, 32, 64, 128, 256]})
def quadratic(n):
    return Timer("for i in r:\\n    for j in r:\\n        pass", setup=f"r = range({n})")

@benchmark(params={"n": [1000, 4000, 16000, 64000, 256000]})
def n_log_n(n):
    return Timer("sorted(x)", setup="import random; random.seed(0); "
                 f"x = [random.random() for _ in range({n})]")
'''
EXPECTED = {"bench_scaling::linear": Complexity.LINEAR,
            "bench_scaling::quadratic": Complexity.QUADRATIC,
            "bench_scaling::n_log_n": Complexity.N_LOG_N}


def google_benchmark_fit(points: list[dict]) -> Complexity:
    """Google Benchmark's MinimalLeastSq: cost = coefficient * f(n), lowest RMS."""
    n = np.array([p["n"] for p in points])
    cost = np.array([p["cost"] for p in points])
    best, best_rms = None, np.inf
    for c in Complexity:
        f = c.of(n)
        coefficient = float(f @ cost / (f @ f))
        rms = float(np.sqrt(np.mean((cost - coefficient * f) ** 2)) / np.mean(cost))
        if rms < best_rms:
            best, best_rms = c, rms
    return best


def constant_term_fit(points: list[dict]) -> Complexity:
    """constant + coefficient * f(n), both non-negative (scipy's nnls), lowest RMS."""
    from scipy.optimize import nnls
    n = np.array([p["n"] for p in points])
    cost = np.array([p["cost"] for p in points])
    best, best_rms = None, np.inf
    for c in Complexity:
        design = np.column_stack([np.ones_like(n), c.of(n)])
        scale = design.max(axis=0)
        solution, _ = nnls(design / scale, cost)
        rms = float(np.sqrt(np.mean((cost - (design / scale) @ solution) ** 2)) / np.mean(cost))
        if rms < best_rms - 1e-12:
            best, best_rms = c, rms
    return best


def trial(directory: Path, k: int, fast: bool) -> dict:
    run = subprocess.run([sys.executable, "-m", "benchkit", "run", "bench_scaling.py",
                          *(["--fast"] if fast else []), "-o", f"r{k}.json"], cwd=directory,
                         capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(run.stderr[-2000:])
    def scaling(*extra: str) -> dict:
        fits = subprocess.run([sys.executable, "-m", "benchkit", "scaling", f"r{k}.json",
                               "--json", *extra], cwd=directory, capture_output=True,
                              text=True, check=True)
        return {e["benchmark"]: e for e in json.loads(fits.stdout)}
    relative, raw = scaling(), scaling("--raw")
    out = {}
    for name, entry in relative.items():
        medians = raw[name]["points"]
        out[name] = {"benchkit": entry["fit"], "rms": entry["rms"],
                     "runner_up": entry["runner_up"], "benchkit_raw": raw[name]["fit"],
                     "google_benchmark": google_benchmark_fit(medians).value,
                     "constant_term": constant_term_fit(medians).value,
                     "points": entry["points"], "raw_points": medians, "jumps": entry["jumps"]}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--fast", action="store_true", help="benchkit run --fast")
    args = parser.parse_args()
    started = time.perf_counter()
    trials = []
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch)
        (directory / "bench_scaling.py").write_text(SUITE)
        for k in range(args.trials):
            trials.append(trial(directory, k, args.fast))
            print(f"trial {k + 1}: " + ", ".join(
                f"{name.split('::')[1]} {r['benchkit']} (GB {r['google_benchmark']})"
                for name, r in trials[-1].items()), flush=True)
    summary = {}
    for name, expected in EXPECTED.items():
        summary[name] = {
            "expected": expected.value,
            "benchkit_right": sum(t[name]["benchkit"] == expected.value for t in trials),
            "benchkit_raw_right": sum(t[name]["benchkit_raw"] == expected.value
                                      for t in trials),
            "google_benchmark_right": sum(t[name]["google_benchmark"] == expected.value
                                          for t in trials),
            "constant_term_right": sum(t[name]["constant_term"] == expected.value
                                       for t in trials),
            "trials": len(trials)}
    doc = {"machine": machine.collect(), "settings": "--fast" if args.fast else "default",
           "seconds": time.perf_counter() - started,
           "summary": summary, "trials": trials}
    atomic_write_bytes(OUT, (json.dumps(doc, indent=1) + "\n").encode())
    for name, s in summary.items():
        print(f"{name}: {s['expected']} right {s['benchkit_right']}/{s['trials']} (benchkit), "
              f"{s['benchkit_raw_right']}/{s['trials']} (benchkit --raw), "
              f"{s['google_benchmark_right']}/{s['trials']} (Google Benchmark's rule), "
              f"{s['constant_term_right']}/{s['trials']} (with a constant term)")


if __name__ == "__main__":
    main()
