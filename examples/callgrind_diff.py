"""Count the instructions of sorting sorted and reversed lists, and print the functions whose
counts changed most: exact figures, the same on every run.

    python examples/callgrind_diff.py        (needs valgrind)
"""
from benchkit import Timer

before = Timer("sorted(x)", "x = list(range(500))").collect_callgrind(number=20)
after = Timer("sorted(x)", "x = list(range(500))[::-1]").collect_callgrind(number=20)
print(f"instructions per run: {before.per_run():,.0f} -> {after.per_run():,.0f}")
delta = (after.as_standardized(thorough=True).stats(inclusive=False)
         - before.as_standardized(thorough=True).stats(inclusive=False))
print(delta[:8])
