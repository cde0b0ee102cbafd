"""The seed-003 tutorial, with `benchkit` in place of torch.utils.benchmark.

Times `x * y` on two 128-element tensors and the broadcasting {128} x {1} case, prints both
Measurements and a Compare table; times the same `x * y` as a C++ snippet (section 3); then
(where valgrind is installed) counts instructions of the C++ and Python snippets, groups and
diffs the counts as the tutorial does, and writes everything to results/tour_seed003.json.
"""
import os
import pathlib
import pickle
import re
import shutil
import sys

import benchkit
from benchkit import Compare, Language, Measurement, Timer

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

results = [m, broadcasting]

print("\n# 3. C++ snippets")
cpp_timer = Timer(
    "x * y;",
    """
        auto x = torch::ones({128});
        auto y = torch::ones({128});
    """,
    language=Language.CPP,
)
cpp_m = cpp_timer.blocked_autorange(min_run_time=1)
print(cpp_m)
results.append(cpp_m)

print("\n# 4. Instruction counts: Timer.collect_callgrind(...)")
if shutil.which("valgrind") is None:
    print("valgrind is not installed (apt-get install valgrind): skipping instruction counts")
else:
    from benchkit import CallgrindStats, collect_callgrind_many

    cpp_stats: CallgrindStats = cpp_timer.collect_callgrind()
    print(cpp_stats)
    results.append(cpp_stats)

    broadcasting_timer = Timer("x * y", "x = torch.ones((128,))\ny = torch.ones((1,))",
                               label="x * y", sub_label="{128} x {1}")
    # Both snippets in one valgrind process: start-up and `import torch` are paid once.
    stats, broadcasting_cg = collect_callgrind_many([timer, broadcasting_timer], number=100)
    print(stats)

    print("\n# 5. Instruction counts: delving deeper")
    inclusive_stats = stats.as_standardized().stats(inclusive=False)
    print(inclusive_stats[:10])

    def group_by_file(fn_name: str):
        if fn_name.startswith("???"):
            fn_dir, fn_file = fn_name.split(":")[:2]
        else:
            fn_dir, fn_file = os.path.split(fn_name.split(":")[0])
            fn_dir = re.sub("^.*build/../", "", fn_dir)
            fn_dir = re.sub("^.*torch/", "torch/", fn_dir)
        return f"{fn_dir:<15} {fn_file}"

    print(inclusive_stats.transform(group_by_file)[:10])

    print("\n# 6. A/B testing with Callgrind")
    broadcasting_stats = broadcasting_cg.as_standardized().stats(inclusive=False)
    broadcasting_stats = pickle.loads(pickle.dumps(broadcasting_stats))
    delta = broadcasting_stats - inclusive_stats

    def extract_fn_name(fn: str):
        """Trim everything except the function name."""
        fn = ":".join(fn.split(":")[1:])
        return re.sub(r"\(.+\)", "(...)", fn)

    print(delta.transform(extract_fn_name))
    print(delta.transform(extract_fn_name).filter(lambda fn: "TensorIterator" in fn))
    print(f"per run: {stats.per_run():.0f} vs {broadcasting_cg.per_run():.0f} instructions "
          f"(baseline subtracted)")
    results += [stats, broadcasting_cg]

path = benchkit.save(RESULTS, results)
print(f"wrote {path.relative_to(pathlib.Path.cwd()) if path.is_relative_to(pathlib.Path.cwd()) else path}")
loaded = benchkit.load(path)
print(f"read back: {len(loaded.measurements)} measurements, {len(loaded.callgrind)} callgrind stats")
