"""Record a real noise history on this machine, in asv's results format (version 2).

Each "commit" is one fresh interpreter that times a handful of small snippets the way asv
does (a number of runs per sample chosen to last ~10 ms, `repeat` samples, the median kept,
quartiles in the stats), so the values carry this machine's process-to-process and
minute-to-minute noise, including the slow spells of a shared VM. The code never changes:
every step a detector reports in these series is a false one, and steps injected into them
(benchmarks/perf_history_detection.py) are the only real ones.

    .venv/bin/python benchmarks/record_noise_history.py OUT_DIR [--commits 150]
        [--busy-neighbour SEED]

--busy-neighbour runs a neighbour beside the recording, as a shared CI runner has: spells
of 2-20 s in which one or two processes keep a core busy (Python loops or numpy copies),
between idle spells of 5-60 s, drawn from SEED. Its slow spells last a few commits, as a
busy neighbour's do, and no detector may take them for a step.

OUT_DIR gets asv's layout: benchmarks.json, MACHINE/machine.json, MACHINE/SHA-ENV.json.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

SNIPPETS = {
    "noise.time_sum_range": ("sum(range(2000))", ""),
    "noise.time_sorted": ("sorted(x)", "import random; random.seed(1); x = [random.random() "
                          "for _ in range(3000)]"),
    "noise.time_dict_build": ("{i: i for i in range(2000)}", ""),
    "noise.time_str_join": ("'-'.join(words)", "words = [str(i) for i in range(3000)]"),
    "noise.time_numpy_dot": ("a @ a", "import numpy as np; a = np.ones((120, 120))"),
    "noise.time_numpy_sum": ("a.sum()", "import numpy as np; a = np.ones(200000)"),
    "noise.time_re_findall": ("pat.findall(text)", "import re; pat = re.compile(r'[a-z]+\\d'); "
                              "text = 'abc1 def2 ' * 2000"),
    "noise.time_json_dumps": ("json.dumps(obj)", "import json; obj = {str(i): [i, str(i)] "
                              "for i in range(1500)}"),
}

CHILD = r"""
import json, statistics, sys, timeit
snippets = json.loads(sys.argv[1])
out = {}
for name, (stmt, setup) in snippets.items():
    timer = timeit.Timer(stmt, setup)
    number = 1
    while True:                      # asv: runs per sample so a sample lasts ~10 ms
        if timer.timeit(number) >= 0.01:
            break
        number *= 2
    samples = [timer.timeit(number) / number for _ in range(10)]
    q = statistics.quantiles(samples, n=4)
    out[name] = [statistics.median(samples), q[0], q[2], number, samples]
print(json.dumps(out))
"""


NEIGHBOUR = r"""
import random, sys, time
import numpy as np
rng = random.Random(int(sys.argv[1]))
block = np.ones(4_000_000)
while True:
    time.sleep(rng.uniform(5, 60))
    until = time.monotonic() + rng.uniform(2, 20)
    memory = rng.random() < 0.5
    while time.monotonic() < until:
        if memory:
            block.copy()
        else:
            sum(range(100_000))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--commits", type=int, default=150)
    parser.add_argument("--machine", default=f"{platform.node()}-noise")
    parser.add_argument("--busy-neighbour", type=int, metavar="SEED",
                        help="record beside a neighbour with busy spells drawn from SEED")
    args = parser.parse_args()
    neighbours = []
    if args.busy_neighbour is not None:
        # two neighbours with their own spells: sometimes one core is taken, sometimes both
        neighbours = [subprocess.Popen([sys.executable, "-c", NEIGHBOUR,
                                        str(args.busy_neighbour * 2 + k)]) for k in range(2)]
    try:
        record(args)
    finally:
        for neighbour in neighbours:
            neighbour.kill()


def record(args: argparse.Namespace) -> None:
    machine_dir = args.out / args.machine
    machine_dir.mkdir(parents=True, exist_ok=True)
    (args.out / "benchmarks.json").write_text(json.dumps(
        {name: {"name": name, "type": "time", "unit": "seconds", "params": [],
                "param_names": [], "version": "1"} for name in SNIPPETS} | {"version": 2}))
    (machine_dir / "machine.json").write_text(json.dumps(
        {"machine": args.machine, "arch": platform.machine(), "os": platform.platform(),
         "cpu": "", "num_cpu": "2", "ram": "", "version": 1}))
    start = int(time.time() * 1000)
    for i in range(args.commits):
        sha = hashlib.sha1(f"noise-{i}".encode()).hexdigest()
        path = machine_dir / f"{sha[:8]}-py{sys.version_info.major}.{sys.version_info.minor}.json"
        if path.exists():
            continue
        began = int(time.time() * 1000)
        done = subprocess.run([sys.executable, "-c", CHILD, json.dumps(SNIPPETS)],
                              capture_output=True, text=True, check=True)
        values = json.loads(done.stdout)
        columns = ["result", "params", "version", "started_at", "duration", "stats_ci_99_a",
                   "stats_ci_99_b", "stats_q_25", "stats_q_75", "stats_number",
                   "stats_repeat", "samples"]
        results = {name: [[v[0]], [], "1", began, 1.0, [None], [None], [v[1]], [v[2]], [v[3]],
                          [10], [v[4]]] for name, v in values.items()}
        doc = {"commit_hash": sha, "env_name": "noise-py", "date": start + i * 3_600_000,
               "params": {"machine": args.machine, "python": platform.python_version()},
               "python": platform.python_version(), "requirements": {}, "env_vars": {},
               "result_columns": columns, "results": results, "durations": {},
               "version": 2}
        path.write_text(json.dumps(doc))
        print(f"{i + 1}/{args.commits}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
