"""How long `Timer.profile` takes to give its table and trace, at its default runs per step
and at the old default (about 20 ms of runs per step, at most 5,000).

torch's own `key_averages` and trace export take time per recorded event, so the runs a
profile records decide how long a user waits for the table. One run, a small
`nn.Linear` (about 10 us a run), with and without stacks:

    .venv/bin/python benchmarks/perf_profile.py -o results/perf_profile.json
"""
from __future__ import annotations

import argparse
import json
import math
import os
import tempfile
import time
from pathlib import Path

from benchkit import Timer

SETUP = "model = torch.nn.Linear(64, 64)\nx = torch.randn(32, 64)"
OLD_STEP_TIME, OLD_MAX_RUNS = 0.02, 5000


def timed(number: int | None, with_stack: bool) -> dict:
    timer = Timer("model(x)", SETUP, label="Linear")
    started = time.perf_counter()
    result = timer.profile(number=number, with_stack=with_stack)
    profiled = time.perf_counter()
    result.table(sort_by="self", row_limit=10)
    tabled = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        result.export_chrome_trace(os.path.join(tmp, "trace.json.gz"))
    exported = time.perf_counter()
    return {"runs_per_step": result.number, "profile_s": profiled - started,
            "table_s": tabled - profiled, "export_s": exported - tabled,
            "total_s": exported - started}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", type=Path)
    args = parser.parse_args()
    Timer("model(x)", SETUP).profile()            # torch's profiler warms up once
    per_run = Timer("model(x)", SETUP).blocked_autorange(min_run_time=0.2).median
    old_number = int(min(OLD_MAX_RUNS, max(1, math.ceil(OLD_STEP_TIME / per_run))))
    rows = []
    for with_stack in (False, True):
        old = timed(old_number, with_stack)
        new = timed(None, with_stack)
        rows.append({"with_stack": with_stack, "old_default": old, "default": new,
                     "total_ratio_old_to_default": old["total_s"] / new["total_s"]})
        print(f"with_stack={with_stack}: old default ({old['runs_per_step']} runs a step) "
              f"{old['total_s']:.2f} s (table {old['table_s']:.2f} s, export "
              f"{old['export_s']:.2f} s); default ({new['runs_per_step']} runs a step) "
              f"{new['total_s']:.2f} s (table {new['table_s']:.2f} s, export "
              f"{new['export_s']:.2f} s): {rows[-1]['total_ratio_old_to_default']:.1f}x")
    if args.output:
        args.output.write_text(json.dumps({"per_run_s": per_run, "rows": rows}, indent=1)
                               + "\n")
        print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
