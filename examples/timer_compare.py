"""Time x * y for three tensor sizes at one and two threads, and print a Compare table.

    python examples/timer_compare.py
"""
from benchkit import Compare, Timer

results = []
for threads in (1, 2):
    for n in (64, 1024, 16384):
        timer = Timer("x * y", f"x = torch.ones({n}); y = torch.ones({n})", label="x * y",
                      sub_label=f"n={n}", description="float32", num_threads=threads)
        results.append(timer.blocked_autorange(min_run_time=0.1))

compare = Compare(results)
compare.trim_significant_figures()
compare.print()
