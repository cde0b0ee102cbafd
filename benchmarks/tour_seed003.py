"""The Timer part of the seed-003 tutorial, with `benchkit` in place of torch.utils.benchmark.

Times `x * y` on two 128-element tensors and the broadcasting {128} x {1} case, prints both
Measurements and a Compare table, and writes results/tour_seed003.json.
"""
import pathlib
import sys

import benchkit
from benchkit import Compare, Measurement, Timer

RESULTS = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else (
    pathlib.Path(__file__).resolve().parent.parent / "results" / "tour_seed003.json")

timer = Timer(
    stmt="x * y",
    setup="""
        x = torch.ones((128,))
        y = torch.ones((128,))
    """,
    label="x * y",
    sub_label="{128} x {128}",
    description="float32",
)
m: Measurement = timer.blocked_autorange(min_run_time=1)
print(m)

broadcasting = Timer(
    stmt="x * y",
    setup="""
        x = torch.ones((128,))
        y = torch.ones((1,))
    """,
    label="x * y",
    sub_label="{128} x {1}",
    description="float32",
).blocked_autorange(min_run_time=1)
print(broadcasting)

compare = Compare([m, broadcasting])
compare.colorize(rowwise=True)
compare.print()

path = benchkit.save(RESULTS, [m, broadcasting])
print(f"wrote {path.relative_to(pathlib.Path.cwd()) if path.is_relative_to(pathlib.Path.cwd()) else path}")
print(f"read back: {len(benchkit.load(path).measurements)} measurements")
