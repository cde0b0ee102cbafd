"""Instruction counts at scale, side by side in one run: 20 torch snippets with -j 1, -j 2 and
through a 2-worker dask LocalCluster, against torch.utils.benchmark collecting them one by one
(measured on a subset and extrapolated: ~50 s per collection here); and the second collection
of the seed `x * y` in a warm session vs a cold collection vs torch's; and -j 1 vs -j 2 on
100 snippets (the 20 at five tensor sizes), where start-up weighs less. Writes
results/perf_collector.json.

    .venv/bin/python benchmarks/perf_collector.py [--torch-subset 2]     (about 8 minutes)
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path

import benchkit
from benchkit.system import machine
from benchkit.system.files import atomic_write_bytes

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "results" / "perf_collector.json"
# torch.utils.benchmark runs `python` from PATH for its child: make that this interpreter.
os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]

SEED = ("x * y", "x = torch.ones((128,)); y = torch.ones((128,))")
SNIPPETS = [
    SEED, ("x * y", "x = torch.ones((128,)); y = torch.ones((1,))"),
    ("x + y", "x = torch.ones((128,)); y = torch.ones((128,))"),
    ("x.sum()", "x = torch.ones((128,))"),
    ("torch.relu(x)", "x = torch.randn((128,))"),
    ("x @ w", "x = torch.randn((8, 16)); w = torch.randn((16, 4))"),
    ("x.view(-1)", "x = torch.ones((4, 32))"), ("torch.cat([x, x])", "x = torch.ones((64,))"),
    ("x[1:10]", "x = torch.arange(128)"), ("torch.empty(())", "pass"),
    ("x.t().contiguous()", "x = torch.ones((16, 16))"), ("x.exp()", "x = torch.ones((128,))"),
    ("x.abs()", "x = torch.randn((128,))"), ("x.max()", "x = torch.randn((128,))"),
    ("x.mean()", "x = torch.randn((128,))"), ("torch.where(x > 0, x, y)",
                                              "x = torch.randn(64); y = torch.zeros(64)"),
    ("x.clone()", "x = torch.ones((128,))"), ("x.unsqueeze(0)", "x = torch.ones((128,))"),
    ("x.to(torch.float64)", "x = torch.ones((128,))"), ("torch.zeros(128)", "pass"),
]


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def main(torch_subset: int) -> None:
    import distributed
    figures: dict = {"environment": machine.collect(str(ROOT)), "snippets": len(SNIPPETS)}
    timers = [benchkit.Timer(s, u) for s, u in SNIPPETS]
    runs = {}
    for jobs in (1, 2):
        stats, wall = timed(lambda: benchkit.collect_callgrind_many(timers, jobs=jobs))
        runs[f"-j {jobs}"] = {"seconds": wall, "counts": [s.counts() for s in stats]}
        print(f"-j {jobs}: {wall:.1f} s", flush=True)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            stats, wall = timed(lambda: benchkit.collect_callgrind_many(
                timers, jobs=1, executor=client))
    runs["LocalCluster, 2 workers"] = {"seconds": wall, "counts": [s.counts() for s in stats]}
    print(f"LocalCluster: {wall:.1f} s", flush=True)
    singles, wall = timed(lambda: [t.collect_callgrind().counts() for t in timers[:3]])
    runs["single collections (first 3)"] = {"seconds": wall, "counts": singles}
    reference = runs["-j 1"]["counts"]
    figures["runs"] = {k: {"seconds": v["seconds"], "counts": v["counts"]}
                       for k, v in runs.items()}
    figures["counts_identical"] = all(v["counts"] == reference[:len(v["counts"])]
                                      for v in runs.values())
    figures["ratio_j2_to_j1"] = runs["-j 2"]["seconds"] / runs["-j 1"]["seconds"]

    # Where -j pays off: the serial start-up (valgrind importing torch) is paid once, so the
    # ratio falls as the batch grows. The 20 snippets at five tensor sizes.
    def sized(setup: str, k: int) -> str:
        return re.sub(r"\b(128|64|32|16|8|4)\b", lambda m: str(int(m.group()) * k), setup)
    wide = [benchkit.Timer(s, sized(u, k)) for k in range(1, 6) for s, u in SNIPPETS]
    figures["scaling_100_snippets"] = {}
    for jobs in (1, 2):
        stats, wall = timed(lambda: benchkit.collect_callgrind_many(wide, jobs=jobs))
        figures["scaling_100_snippets"][f"-j {jobs}"] = {
            "seconds": wall, "counts": [s.counts() for s in stats]}
        print(f"100 snippets -j {jobs}: {wall:.1f} s", flush=True)
    scaling = figures["scaling_100_snippets"]
    scaling["ratio_j2_to_j1"] = scaling["-j 2"]["seconds"] / scaling["-j 1"]["seconds"]
    scaling["counts_identical"] = scaling["-j 1"]["counts"] == scaling["-j 2"]["counts"]

    from torch.utils.benchmark import Timer as TorchTimer
    per, wall = timed(lambda: [TorchTimer(s, u).collect_callgrind(number=100)
                               for s, u in SNIPPETS[:torch_subset]])
    figures["torch_utils_benchmark"] = {
        "measured_snippets": torch_subset, "seconds_measured": wall,
        "seconds_per_snippet": wall / torch_subset,
        "extrapolated_seconds_for_all": wall / torch_subset * len(SNIPPETS)}
    print(f"torch.utils.benchmark: {wall / torch_subset:.1f} s per snippet", flush=True)

    seed = benchkit.Timer(*SEED)
    _, cold = timed(lambda: seed.collect_callgrind())
    with benchkit.callgrind_session() as session:
        _, first = timed(lambda: session.collect(seed))
        _, second = timed(lambda: session.collect(seed))
    figures["session"] = {"cold_collection_s": cold, "session_first_s": first,
                          "session_second_s": second,
                          "torch_utils_benchmark_s": figures["torch_utils_benchmark"][
                              "seconds_per_snippet"]}
    print(f"seed x * y: cold {cold:.1f} s, session first {first:.1f} s, second {second:.2f} s",
          flush=True)
    atomic_write_bytes(OUT, (json.dumps(figures, indent=1) + "\n").encode())
    print(f"wrote {OUT}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--torch-subset", type=int, default=2)
    main(parser.parse_args().torch_subset)
