"""benchkit vs torch.utils.benchmark instruction counting, side by side in one run.

Prints ratios and writes results/perf_callgrind.json. Needs valgrind and `callgrind_annotate`.
Takes ~15 minutes: torch.utils.benchmark needs ~50 s per collection on a 2-core machine.

    .venv/bin/python benchmarks/perf_callgrind.py [--quick]
"""
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import benchkit
from benchkit.system import machine
from benchkit.system.files import atomic_write_bytes
from benchkit.core.callgrind import parser
ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "results" / "perf_callgrind.json"
# torch.utils.benchmark runs `python` from PATH for its child: make that this interpreter.
os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]

SEED = ("x * y", "x = torch.ones((128,))\ny = torch.ones((128,))")
SUITE = [
    ("x * y", "x = torch.ones((128,)); y = torch.ones((128,))"),
    ("x * y", "x = torch.ones((128,)); y = torch.ones((1,))"),
    ("x + y", "x = torch.ones((128,)); y = torch.ones((128,))"),
    ("x.sum()", "x = torch.ones((128,))"),
    ("torch.relu(x)", "x = torch.randn((128,))"),
    ("x @ w", "x = torch.randn((8, 16)); w = torch.randn((16, 4))"),
    ("x.view(-1)", "x = torch.ones((4, 32))"),
    ("torch.cat([x, x])", "x = torch.ones((64,))"),
    ("x[1:10]", "x = torch.arange(128)"),
    ("torch.empty(())", "pass"),
]


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def torch_collect(stmt, setup):
    from torch.utils.benchmark import Timer
    return Timer(stmt, setup).collect_callgrind(number=100)


def bk_collect(stmt, setup):
    return benchkit.Timer(stmt, setup).collect_callgrind(number=100)


def main(quick=False):
    figures = {"environment": machine.collect(str(ROOT))}
    # 1. seed snippet wall time
    bk, bk_wall = timed(lambda: bk_collect(*SEED))
    tu, tu_wall = timed(lambda: torch_collect(*SEED))
    figures["seed_snippet"] = {"benchkit_s": bk_wall, "torch_utils_benchmark_s": tu_wall,
                               "ratio": bk_wall / tu_wall}
    print(f"seed x * y, number=100: benchkit {bk_wall:.1f} s, torch.utils.benchmark "
          f"{tu_wall:.1f} s, ratio {bk_wall / tu_wall:.3f}")
    # 2. determinism: totals of three fresh collections
    bk_totals = [bk.counts()] + [bk_collect(*SEED).counts() for _ in range(2)]
    tu_totals = [tu.counts()] + [torch_collect(*SEED).counts() for _ in range(2)]
    figures["determinism"] = {"benchkit_totals": bk_totals, "torch_utils_benchmark_totals":
                              tu_totals, "benchkit_identical": len(set(bk_totals)) == 1}
    print(f"three fresh collections: benchkit {bk_totals}, torch.utils.benchmark {tu_totals}")
    # 3. pure-Python snippet
    _, py_wall = timed(lambda: benchkit.Timer("sum(range(10))").collect_callgrind(number=100))
    figures["pure_python_snippet_s"] = py_wall
    print(f"pure-Python snippet: benchkit {py_wall:.2f} s")
    # 4. suite of 10 snippets
    timers = [benchkit.Timer(s, p) for s, p in SUITE]
    _, bk_suite = timed(lambda: benchkit.collect_callgrind_many(timers, number=100))
    if quick:
        tu_suite = tu_wall * len(SUITE)  # estimate from the seed collection
    else:
        _, tu_suite = timed(lambda: [torch_collect(s, p) for s, p in SUITE])
    figures["suite_of_10"] = {"benchkit_s": bk_suite, "torch_utils_benchmark_s": tu_suite,
                              "ratio": bk_suite / tu_suite, "torch_estimated": quick}
    print(f"suite of 10: benchkit {bk_suite:.1f} s, torch.utils.benchmark {tu_suite:.1f} s, "
          f"ratio {bk_suite / tu_suite:.3f}")
    # 5. parsing a ~20 MB callgrind.out (import torch, full collection)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                        sys.executable, "-c", "import torch"], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        size_mb = out.stat().st_size / 1e6

        def annotate():
            for inclusive in ("no", "yes"):
                subprocess.run(["callgrind_annotate", f"--inclusive={inclusive}",
                                "--threshold=100", str(out)], check=True,
                               stdout=subprocess.DEVNULL)

        def ours():
            return parser.parse(out.read_text(encoding="utf-8", errors="replace"), str(out))
        _, annotate_s = timed(annotate)
        profiles, parse_s = timed(ours)
    figures["parse"] = {"file_mb": size_mb, "callgrind_annotate_two_passes_s": annotate_s,
                        "benchkit_one_pass_s": parse_s, "speedup": annotate_s / parse_s,
                        "functions": len(profiles[0].exclusive)}
    print(f"parse {size_mb:.1f} MB callgrind.out (exclusive + inclusive): benchkit {parse_s:.2f} s, "
          f"callgrind_annotate x2 {annotate_s:.2f} s, speedup {annotate_s / parse_s:.1f}x")
    atomic_write_bytes(OUT, json.dumps(figures, indent=1).encode())
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
