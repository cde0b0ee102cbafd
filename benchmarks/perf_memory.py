"""Memory per run, side by side: benchkit's counting allocator (Timer.collect_memory) against
the tools a user would pick instead: tracemalloc, valgrind's DHAT and memray. For each
snippet, what each tool sees per run (allocations, bytes), whether two collections agree, and
what it costs: the slowdown of one run under the tool against the plain loop, and the wall
time of a whole collection.

Each tool counts a block of N runs and one of 2N runs in a fresh process; per run is the
difference over N (benchkit does the same internally), so setup and start-up cancel.

    .venv/bin/python benchmarks/perf_memory.py [--number 2000]

Writes results/perf_memory.json; the README quotes it.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchkit import Timer
from benchkit.engines.memory.counter import PRELOAD, build_library
from benchkit.system import machine
from benchkit.system.files import atomic_write_bytes

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "results" / "perf_memory.json"

SNIPPETS = {
    "list": ("x = [None] * 1000", "pass"),
    "bytearray": ("b = bytearray(100000)", "pass"),
    "dict_comp": ("d = {i: i for i in range(100)}", "pass"),
    "numpy": ("a = np.ones(1000)", "import numpy as np"),
    "torch": ("t = torch.ones(1000)", "import torch"),
    "seed x * y": ("x * y", "import torch; x = torch.ones((128,)); y = torch.ones((128,))"),
}

# One process: setup, then REPEATS timed blocks of `runs` runs with the tool's counting
# around them (the fastest block gives the time; the counts are of all of them).
REPEATS = 3
LOOP = """
import gc, itertools, sys, time
{prelude}
{setup}
def block(runs):
    for _ in itertools.repeat(None, runs):
{stmt}
block(50)
gc.collect(); gc.disable()
{start}
best = float("inf")
for _ in range(%d):
    t0 = time.perf_counter()
    block({runs})
    best = min(best, time.perf_counter() - t0)
{stop}
print("SECONDS", best)
""" % REPEATS

TOOLS = {
    "plain": ("", "", "", ""),
    "benchkit counter": (
        "import ctypes; lib = ctypes.CDLL(None); lib.bk_install_python_hooks()\n"
        "from benchkit.engines.memory.counter import _Counts", "lib.bk_reset()",
        "c = _Counts(); lib.bk_read(ctypes.byref(c)); print('COUNTS', "
        "sum(s.allocations for s in c.source), sum(s.bytes for s in c.source))", ""),
    "tracemalloc": (
        "import tracemalloc", "tracemalloc.start()",
        "cur, peak = tracemalloc.get_traced_memory(); print('COUNTS', None, None)", ""),
    "memray": (
        "import memray", "tracker = memray.Tracker(sys.argv[1], trace_python_allocators=True, "
        "native_traces=False); tracker.__enter__()", "tracker.__exit__(None, None, None)", ""),
}


DHAT_TORCH = ("not run: `import torch` under DHAT had not finished after 9.5 minutes of one "
              "process (it records a stack for each of the import's allocations)")


def _script(tool: str, stmt: str, setup: str, runs: int) -> str:
    prelude, start, stop, _ = TOOLS[tool]
    return LOOP.format(prelude=prelude, setup=setup, stmt="        " + stmt, start=start,
                       stop=stop, runs=runs)


def _run(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, str, float]:
    start = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **(env or {})},
                         timeout=1800)
    wall = time.perf_counter() - start
    if out.returncode != 0:
        raise RuntimeError(f"{cmd[:3]} failed: {out.stderr[-2000:]}")
    seconds = float(next(line.split()[1] for line in out.stdout.splitlines()
                         if line.startswith("SECONDS")))
    return seconds, out.stdout + out.stderr, wall


def _memray_counts(path: Path) -> tuple[int, int]:
    import memray
    allocations = size = 0
    for record in memray.FileReader(str(path)).get_allocation_records():
        kind = memray.AllocatorType(record.allocator).name
        if kind in ("FREE", "MUNMAP", "PYMALLOC_FREE", "MMAP"):
            continue
        allocations += record.n_allocations
        size += record.size
    return allocations, size


def _dhat_counts(path: Path) -> tuple[int, int]:
    pps = json.loads(path.read_text())["pps"]       # program points: total blocks, bytes
    return sum(pp["tbk"] for pp in pps), sum(pp["tb"] for pp in pps)


def measure_tool(tool: str, stmt: str, setup: str, number: int, tmp: Path) -> dict:
    """Per-run allocations/bytes seen (None where the tool cannot say), the slowdown of one
    run, and the wall time of the two blocks. DHAT runs 1/20 of the runs (it is ~100x slower;
    torch under it took over 10 minutes for 15,000 runs)."""
    if tool == "dhat":
        number = max(100, number // 20)
    seen, times, wall = [], [], 0.0
    for runs in (number, 2 * number):
        script = tmp / f"{tool.split()[0]}_{runs}.py"
        env = {}
        cmd = [sys.executable, str(script)]
        out_file = tmp / f"{tool.split()[0]}_{runs}.out"
        out_file.unlink(missing_ok=True)
        if tool == "dhat":
            script.write_text(_script("plain", stmt, setup, runs))
            cmd = ["valgrind", "--tool=dhat", f"--dhat-out-file={out_file}", *cmd]
        else:
            script.write_text(_script(tool, stmt, setup, runs))
            if tool == "benchkit counter":
                env = {PRELOAD: str(build_library())}
            cmd.append(str(out_file))
        seconds, text, took = _run(cmd, env)
        times.append(seconds)
        wall += took
        if tool == "benchkit counter":
            line = next(x for x in text.splitlines() if x.startswith("COUNTS"))
            seen.append(tuple(int(v) for v in line.split()[1:]))
        elif tool == "memray":
            seen.append(_memray_counts(out_file))
        elif tool == "dhat":
            seen.append(_dhat_counts(out_file))
    # The time of a run from the longer block alone: a difference of two processes' times
    # is swamped by this VM's speed changes between processes.
    per_run = times[1] / (2 * number)
    out = {"seconds_per_run": per_run, "wall_seconds": round(wall, 2), "number": number}
    if seen:
        out["allocations_per_run"] = (seen[1][0] - seen[0][0]) / (REPEATS * number)
        out["bytes_per_run"] = (seen[1][1] - seen[0][1]) / (REPEATS * number)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--number", type=int, default=5000)
    args = parser.parse_args()
    tools = ["plain", "benchkit counter", "tracemalloc", "memray"]
    if shutil.which("valgrind"):
        tools.append("dhat")
    report: dict = {"machine": machine.collect(), "number": args.number, "snippets": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for name, (stmt, setup) in SNIPPETS.items():
            row: dict = {"stmt": stmt}
            for tool in tools:
                if tool == "dhat" and "torch" in setup:
                    row[tool] = {"skipped": DHAT_TORCH}
                    continue
                row[tool] = measure_tool(tool, stmt, setup, args.number, Path(tmp))
            plain = row["plain"]["seconds_per_run"]
            for tool in tools[1:]:
                if "seconds_per_run" in row[tool]:
                    row[tool]["slowdown"] = round(row[tool]["seconds_per_run"] / plain, 2)
            start = time.perf_counter()
            first = Timer(stmt, setup).collect_memory(number=100)
            collect_seconds = time.perf_counter() - start
            # What a user waits for a time instead: blocked_autorange in a fresh process.
            timed = subprocess.run(
                [sys.executable, "-c", "import time; t0 = time.perf_counter(); "
                 "from benchkit import Timer; "
                 f"Timer({stmt!r}, {setup!r}).blocked_autorange(); "
                 "print(time.perf_counter() - t0)"], capture_output=True, text=True,
                check=True)
            row["collect_memory"] = {
                "wall_seconds": round(collect_seconds, 2),
                "blocked_autorange_process_seconds": round(float(timed.stdout), 2),
                "allocations_per_run": first.allocations_per_run,
                "bytes_per_run": first.bytes_per_run,
                "retained_bytes_per_run": first.retained_bytes_per_run,
                "peak_bytes": first.peak_bytes,
                "repeatable": Timer(stmt, setup).collect_memory(number=100).to_dict()
                == first.to_dict()}
            report["snippets"][name] = row
            print(json.dumps({name: row}, indent=1), flush=True)
    atomic_write_bytes(OUT, (json.dumps(report, indent=1) + "\n").encode())
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
