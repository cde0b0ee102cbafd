"""The six micro-benchmarks of the decision-quality experiment (benchmarks/perf_decisions.py).

Each runs its operation BENCH_WORK times per run (default 100): BENCH_WORK=105 is exactly
5 % more work, 102 is 2 % more, 101 is 1 % more. Not named bench_*.py, so `benchkit run benchmarks/` skips it.
"""
import os

from benchkit import Timer

WORK = int(os.environ.get("BENCH_WORK", "100"))
LOOP = f"R = range({WORK})\n"

bench_sum = Timer("for _ in R: sum(L)", LOOP + "L = list(range(100))", label="sum")
bench_sorted = Timer("for _ in R: sorted(D)",
                     LOOP + "import random\nrandom.seed(0)\n"
                            "D = [random.random() for _ in range(100)]", label="sorted")
bench_dict = Timer("for _ in R: d['key']; d['other']; d['key']",
                   LOOP + "d = {'key': 1, 'other': 2}", label="dict lookups")
bench_join = Timer("for _ in R: ','.join(W)", LOOP + "W = [str(i) for i in range(100)]",
                   label="str.join")
bench_numpy = Timer("for _ in R: a.sum()", LOOP + "import numpy as np\na = np.ones(200000)",
                    label="np.ones(200000).sum()")
bench_listcomp = Timer("for _ in R: [i * i for i in L]", LOOP + "L = list(range(100))",
                       label="list comprehension")
