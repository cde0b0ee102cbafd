"""A suite file: `benchkit run examples/bench_example.py`, or `benchkit ab` two revisions of it.

Module-level Timers named bench_* and @benchmark functions returning Timers are benchmarks;
a grid of parameters makes one benchmark per point (`benchkit scaling` fits their growth).
"""
from benchkit import Timer, benchmark

bench_join = Timer("','.join(words)", "words = [str(i) for i in range(100)]", label="join")


@benchmark(fail_on="slower>10%")
def sort_reversed():
    return Timer("sorted(x)", "x = list(range(1000))[::-1]", label="sorted")


@benchmark(params={"n": [100, 1000, 10000]})
def total(n):
    return Timer("sum(x)", f"x = list(range({n}))", elements=n)
