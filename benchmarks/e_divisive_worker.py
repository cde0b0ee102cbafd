"""E-divisive means, in an interpreter of its own, for perf_history_detection.py.

The E-divisive method (Matteson and James, 2014) is what MongoDB's performance CI and
Otava (Apache, formerly DataStax's hunter) find change points with; its maintained
implementation is the `signal-processing-algorithms` package, which pins numpy below 2,
so it runs here, in its own environment, not in benchkit's:

    python3 -m venv .bench-data/edivisive-venv
    .bench-data/edivisive-venv/bin/pip install signal-processing-algorithms==2.1.6
    .venv/bin/python benchmarks/perf_history_detection.py DIR \
        --e-divisive .bench-data/edivisive-venv/bin/python

Protocol: `e_divisive_worker.py [P]` (P: the permutation test's p, default 0.05, the
library's); one JSON array of numbers a line on stdin (a series' log values), one JSON array
of change points a line on stdout (each the index of the first value after a change),
in the order given. Each series is judged with the library's 100 permutations, seeded
alike for every series, so a run repeats exactly. Imports nothing of benchkit's.
"""
import json
import sys

import numpy as np
from signal_processing_algorithms.energy_statistics.energy_statistics import e_divisive

SEED = 1


def main() -> None:
    pvalue = float(sys.argv[1]) if len(sys.argv) > 1 else 0.05
    for line in sys.stdin:
        values = json.loads(line)
        np.random.seed(SEED)
        found = e_divisive(values, pvalue=pvalue, permutations=100) if len(values) > 2 else []
        print(json.dumps(sorted(int(c) for c in found)), flush=True)


if __name__ == "__main__":
    main()
