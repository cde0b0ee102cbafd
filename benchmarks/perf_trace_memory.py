"""Peak memory of `benchkit analyze` and `benchkit trace-diff` on a large chrome trace.

Writes a synthetic trace shaped like torch.profiler's (ProfilerStep#N spans, a user region,
nested aten ops with Input Dims / Input type args), ~62 MB and ~480k events by default, then
runs each command in a fresh process and reads that process's peak RSS. Figures go to
results/perf_trace_memory.json. Optionally also runs another checkout of benchkit on the same
trace (--other PATH, e.g. a worktree of an older commit) for a side-by-side.

    .venv/bin/python benchmarks/perf_trace_memory.py [--events 480000] [--other PATH]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchkit.system import machine
from benchkit.system.files import atomic_write_bytes

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "results" / "perf_trace_memory.json"
MEASURE = """
import resource, sys
from benchkit.cli.main import main
code = main(sys.argv[1:])
print("PEAK_KB", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
sys.exit(code)
"""

OPS = [
    ("aten::linear", [[128, 500], [10, 500], [10]], ["float", "float", "float"], [
        ("aten::t", [[10, 500]], ["float"], []),
        ("aten::addmm", [[10], [128, 500], [500, 10], [], []],
         ["float", "float", "float", "Scalar", "Scalar"], [
             ("aten::copy_", [[128, 10], [128, 10], []], ["float", "float", "Scalar"], [])]),
    ]),
    ("aten::relu", [[128, 10]], ["float"], []),
    ("aten::add", [[128, 10], [128, 10], []], ["float", "float", "Scalar"], []),
    ("aten::sum", [[128, 10]], ["float"], []),
]


def _emit(f, first: list, event: dict) -> None:
    f.write(("" if first[0] else ",\n") + json.dumps(event))
    first[0] = False


def _op_events(f, first, op, ts: float) -> float:
    """Write op and its children at `ts`; return its end."""
    name, dims, types, children = op
    start = ts
    ts += 1.5
    for child in children:
        ts = _op_events(f, first, child, ts) + 0.5
    end = ts + 2.25
    _emit(f, first, {"ph": "X", "cat": "cpu_op", "name": name, "pid": 4242, "tid": 4242,
                     "ts": round(start, 3), "dur": round(end - start, 3),
                     "args": {"External id": 1, "Record function id": 0, "Sequence number": 7,
                              "Fwd thread id": 0, "Ev Idx": 3, "Input Dims": dims,
                              "Input type": types, "Input Strides": dims,
                              "Concrete Inputs": ["" for _ in dims]}})
    return end


def write_trace(path: Path, events: int) -> int:
    per_run = 1 + 1 + sum(1 + len(op[3]) + sum(len(c[3]) for c in op[3]) for op in OPS)
    runs_per_step, written, ts = 50, 0, 1000.0
    first = [True]
    with open(path, "w") as f:
        f.write('{"schemaVersion": 1, "traceEvents": [\n')
        step = 0
        while written < events:
            step_start = ts
            for _ in range(runs_per_step):
                run_start = ts
                ts += 0.5
                for op in OPS:
                    ts = _op_events(f, first, op, ts) + 1.0
                _emit(f, first, {"ph": "X", "cat": "user_annotation", "name": "MyModule: forward",
                                 "pid": 4242, "tid": 4242, "ts": round(run_start, 3),
                                 "dur": round(ts - run_start, 3), "args": {}})
                written += per_run - 1
                ts += 1.0
            _emit(f, first, {"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}",
                             "pid": 4242, "tid": 4242, "ts": round(step_start, 3),
                             "dur": round(ts - step_start, 3), "args": {}})
            written += 1
            step += 1
        f.write('\n], "traceName": "synthetic"}\n')
    return written


def peak_kb(args: list[str], pythonpath: str | None = None) -> tuple[int, str]:
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    # Run outside the repository: `python -c` puts the working directory first on sys.path,
    # which would shadow the other checkout with this one.
    done = subprocess.run([sys.executable, "-c", MEASURE, *args], capture_output=True,
                          text=True, env=env, cwd=tempfile.gettempdir())
    line = [x for x in done.stdout.splitlines() if x.startswith("PEAK_KB")]
    if not line:
        raise RuntimeError(done.stderr[-2000:])
    return int(line[-1].split()[1]), done.stdout


def main(events: int, other: str | None) -> None:
    figures = {"environment": machine.collect(str(ROOT))}
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "big.json"
        count = write_trace(trace, events)
        small = Path(tmp) / "small.json"
        write_trace(small, 100)
        size_mb = trace.stat().st_size / 2**20
        figures["trace"] = {"events": count, "size_mb": size_mb}
        print(f"trace: {count} events, {size_mb:.1f} MB", flush=True)
        runs = {"analyze": ["analyze", str(trace), "-t", "10"],
                "trace-diff (the trace against itself)": ["trace-diff", str(trace), str(trace),
                                                          "--top", "10"]}
        floor, _ = peak_kb(["analyze", str(small)])
        figures["interpreter_and_imports_mb"] = floor / 1024
        for label, argv in runs.items():
            kb, _ = peak_kb(argv)
            inputs = size_mb * (2 if "diff" in label else 1)
            entry = {"peak_mb": kb / 1024, "input_mb": inputs,
                     "peak_over_input": kb / 1024 / inputs}
            if other:
                okb, _ = peak_kb(argv, other)
                entry["other_checkout_peak_mb"] = okb / 1024
            figures[label] = entry
            print(f"{label}: peak {kb / 1024:.0f} MB for {inputs:.0f} MB of trace "
                  f"({entry['peak_over_input']:.2f}x)"
                  + (f"; other checkout {entry['other_checkout_peak_mb']:.0f} MB" if other else ""),
                  flush=True)
    atomic_write_bytes(OUT, (json.dumps(figures, indent=1) + "\n").encode())
    print(f"wrote {OUT}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=480_000)
    parser.add_argument("--other", metavar="PATH", help="PYTHONPATH of another benchkit")
    ns = parser.parse_args()
    main(ns.events, ns.other)
