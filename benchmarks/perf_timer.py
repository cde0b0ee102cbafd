"""Wall-time harness overhead: benchkit vs torch.utils.benchmark vs timeit, side by side.

The loop overhead floor (`pass`) and a seed snippet, medians of interleaved repetitions;
prints ratios and writes results/perf_timer.json.

    .venv/bin/python benchmarks/perf_timer.py
"""
import json
import statistics
import timeit
from pathlib import Path

import torch
import torch.utils.benchmark as tub

import benchkit
from benchkit.system import machine
from benchkit.system.files import atomic_write_bytes

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "results" / "perf_timer.json"
CASES = {"pass": ("pass", "pass"),
         "x * y": ("x * y", "x = torch.ones((128,)); y = torch.ones((128,))")}
ROUNDS = 5


def main():
    figures = {"environment": machine.collect(str(ROOT)), "cases": {}}
    for name, (stmt, setup) in CASES.items():
        per = {"benchkit": [], "torch.utils.benchmark": [], "timeit": []}
        for _ in range(ROUNDS):  # interleaved, so drift hits all three alike
            per["benchkit"].append(benchkit.Timer(stmt, setup).blocked_autorange(
                min_run_time=0.3).median)
            per["torch.utils.benchmark"].append(tub.Timer(stmt, setup).blocked_autorange(
                min_run_time=0.3).median)
            t = timeit.Timer(stmt, setup, globals={"torch": torch})
            number, _ = t.autorange()
            per["timeit"].append(min(t.repeat(5, number)) / number)
        medians = {k: statistics.median(v) for k, v in per.items()}
        figures["cases"][name] = {
            "median_s": medians,
            "benchkit_over_torch": medians["benchkit"] / medians["torch.utils.benchmark"],
            "benchkit_over_timeit": medians["benchkit"] / medians["timeit"]}
        print(f"{name:>6}: benchkit {medians['benchkit'] * 1e9:.2f} ns, torch.utils.benchmark "
              f"{medians['torch.utils.benchmark'] * 1e9:.2f} ns, timeit (best of 5) "
              f"{medians['timeit'] * 1e9:.2f} ns; benchkit/torch "
              f"{figures['cases'][name]['benchkit_over_torch']:.3f}, benchkit/timeit "
              f"{figures['cases'][name]['benchkit_over_timeit']:.3f}")
    atomic_write_bytes(OUT, json.dumps(figures, indent=1).encode())
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
