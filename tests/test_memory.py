"""Memory per run: the MemoryStats record (pure, exact), and the counting allocator on known
truths in real worker processes."""
from __future__ import annotations

import dataclasses
import json
import os
import pickle
import sys
from pathlib import Path

import pytest

import benchkit
from benchkit import Timer
from benchkit.core.measure.memory import BlockCounts, MemoryStats, Source, format_bytes
from benchkit.core.measure.task import TaskSpec

PY, NATIVE = Source.PYTHON, Source.NATIVE


def block(alloc, frees, nbytes, freed, peak, untracked=0) -> BlockCounts:
    """Counts given as (python, native) pairs."""
    def pair(values):
        return {PY: values[0], NATIVE: values[1]}
    return BlockCounts(pair(alloc), pair(frees), pair(nbytes), pair(freed), peak, untracked)


def stats() -> MemoryStats:
    return MemoryStats(TaskSpec("x = f()", "pass"), 10,
                       long=block((44, 20), (42, 20), (4400, 80000), (4000, 80000), 9000),
                       short=block((24, 10), (22, 10), (2400, 40000), (2200, 40000), 8500),
                       empty=block((4, 0), (2, 0), (400, 0), (200, 0), 100))


def test_per_run_figures_are_the_difference_of_the_blocks_over_the_runs():
    s = stats()
    assert s.allocations_per_run == (20 + 10) / 10
    assert s.frees_per_run == (20 + 10) / 10
    assert s.bytes_per_run == (2000 + 40000) / 10
    assert s.retained_bytes_per_run == ((2000 - 1800) + 0) / 10
    assert s.peak_bytes == 8500 - 100
    python = s.source(PY)
    assert (python.allocations, python.frees, python.bytes, python.retained_bytes) == \
        (2.0, 2.0, 200.0, 20.0)
    assert s.source(NATIVE).bytes == 4000.0


def test_round_trips_through_json_and_pickle_without_the_engine():
    s = stats()
    again = MemoryStats.from_dict(s.to_dict())
    assert again.to_dict() == s.to_dict()
    assert pickle.loads(pickle.dumps(s)).to_dict() == s.to_dict()


def test_repr_is_exact():
    text = repr(stats()).split("\n", 1)[1]
    assert text == (
        "x = f()\n"
        "  per run (blocks of 20 and 10 runs):\n"
        "    allocations: 3.00\n"
        "    frees:       3.00\n"
        "    bytes:       4.1 KiB\n"
        "    retained:    20 B\n"
        "    peak:        8.2 KiB above the loop's start\n"
        "  by source: python 2.00 allocations / 200 B, native 1.00 allocations / 3.9 KiB")


@pytest.mark.parametrize("n, text", [(0, "0 B"), (100, "100 B"), (-8, "-8 B"), (7.5, "7.5 B"),
                                     (1536, "1.5 KiB"), (3 * 2**20, "3.0 MiB")])
def test_format_bytes(n, text):
    assert format_bytes(n) == text


# -- the counting allocator, end to end ----------------------------------------------------
requires_linux = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                    reason="the counting allocator interposes glibc's malloc")


def _figures(m: MemoryStats) -> tuple:
    return (m.allocations_per_run, m.frees_per_run, m.bytes_per_run,
            m.retained_bytes_per_run, m.peak_bytes)


@requires_linux
def test_known_truths_per_run():
    timers = [Timer("pass"), Timer("b = bytearray(100000)"), Timer("l = [None] * 1000"),
              Timer("leak.append(bytearray(1000))", "leak = []"),
              Timer("x = [1]; x.append(x)"),
              Timer("a = np.ones(1000)", "import numpy as np")]
    nothing, buffer, items, leak, cycle, array = benchkit.collect_memory_many(timers, 50)
    assert _figures(nothing) == (0, 0, 0, 0, 0)
    # The object and its 100,001-byte buffer, both from Python's allocator, freed again.
    assert buffer.allocations_per_run == 2 and buffer.frees_per_run == 2
    assert 100_000 < buffer.bytes_per_run < 100_100
    assert buffer.retained_bytes_per_run == 0
    assert 200_000 < buffer.peak_bytes < 200_300      # the old buffer lives until the new one
    assert 8000 < items.bytes_per_run < 8100 and items.retained_bytes_per_run == 0
    assert leak.retained_bytes_per_run > 1000          # what the list keeps, every run
    assert cycle.retained_bytes_per_run == 0 and cycle.allocations_per_run > 0
    # NumPy's buffer comes from malloc: one native allocation of 8,000 bytes per run.
    assert array.source(Source.NATIVE).allocations == 1
    assert array.source(Source.NATIVE).bytes == 8000
    assert array.source(Source.PYTHON).allocations > 0


@requires_linux
def test_two_collections_are_identical_and_globals_travel():
    timers = [Timer("d = dict(zip(keys, keys))", globals={"keys": list(range(300))}),
              Timer("s = sorted(x)", "import random; random.seed(1); "
                                     "x = [random.random() for _ in range(500)]")]
    first = [m.to_dict() for m in benchkit.collect_memory_many(timers, 20)]
    second = [m.to_dict() for m in benchkit.collect_memory_many(timers, 20)]
    assert first == second
    assert first[0]["long"]["allocations"]["python"] > 0


@requires_linux
@pytest.mark.slow
def test_torch_ops_count_their_cpu_buffers():
    pytest.importorskip("torch")
    m = Timer("y = torch.ones(1000)").collect_memory(number=20)
    assert m.source(Source.NATIVE).bytes >= 4000        # 1000 float32 through c10's alloc_cpu
    assert m.retained_bytes_per_run == 0


@requires_linux
def test_a_snippet_that_raises_is_a_clear_error():
    with pytest.raises(benchkit.BenchkitError, match="ZeroDivisionError"):
        Timer("1 / 0").collect_memory(number=5)


def test_results_files_keep_memory_and_old_files_migrate(tmp_path):
    s = stats()
    path = benchkit.save(tmp_path / "m.json", [s], environment={"python": "3.11"})
    loaded = benchkit.load(path)
    assert [m.to_dict() for m in loaded.memory] == [s.to_dict()]
    old = tmp_path / "old.json"
    old.write_text('{"format": "benchkit-results", "version": 4, "measurements": []}')
    assert benchkit.load(old).memory == []


SUITE = """
from benchkit import Timer
bench_list = Timer("x = [0] * N", "N = {n}")
bench_keep = Timer("kept.append(bytes({k}))", globals={{"kept": []}})
bench_pure = Timer("pass")
"""


@requires_linux
@pytest.mark.slow
def test_run_memory_compare_and_gates_from_the_command_line(tmp_path):
    from test_cli import cli
    base, new = tmp_path / "base", tmp_path / "new"
    for directory, n, k in ((base, 1000, 0), (new, 2000, 100)):
        directory.mkdir()
        (directory / "bench_mem.py").write_text(SUITE.format(n=n, k=k))
        out = cli("run", "bench_mem.py", "--memory", "--no-wall-time", "-o", "m.json",
                  cwd=directory, check_code=0).stdout
        assert "allocs/run" in out and "bench_mem::bench_list" in out
    loaded = benchkit.load(new / "m.json")
    assert [m.metadata["benchmark"] for m in loaded.memory] == [
        "bench_mem::bench_list", "bench_mem::bench_keep", "bench_mem::bench_pure"]
    assert loaded.memory[1].retained_bytes_per_run > 100
    out = cli("compare", "base/m.json", "new/m.json", cwd=tmp_path, check_code=0).stdout
    assert "memory per run (exact): 2 more, 0 less, 1 same" in out
    out = cli("compare", "base/m.json", "new/m.json", "--fail-on", "bytes>10%", "--fail-on",
              "retained>0", "--json", cwd=tmp_path, check_code=1).stdout
    rows = {r["name"]: r for r in json.loads(out)["rows"]}
    assert rows["bench_mem::bench_list"]["failures"][0].startswith("bytes>10%: 7.8 KiB -> ")
    assert any(f.startswith("retained>0: ") for f in rows["bench_mem::bench_keep"]["failures"])
    assert rows["bench_mem::bench_pure"]["failures"] == []
    assert rows["bench_mem::bench_pure"]["memory"]["verdict"] == "same"
    shown = cli("show", "new/m.json", cwd=tmp_path, check_code=0).stdout
    assert "retained/run" in shown


@requires_linux
def test_counts_are_the_same_alone_in_a_batch_and_in_another_order():
    timers = [Timer("x = [i for i in range(50)]"), Timer("b = bytes(300)"),
              Timer("s = str(12345) * 3")]
    batch = [m.to_dict() for m in benchkit.collect_memory_many(timers, 30)]
    reverse = [m.to_dict() for m in benchkit.collect_memory_many(timers[::-1], 30)][::-1]
    alone = [t.collect_memory(number=30).to_dict() for t in timers]
    assert batch == reverse == alone


# -- device memory: torch's caching allocator, through the accelerator seam -----------------
class FakeCuda:
    """A device allocator as torch.cuda reports it: cumulative counters, a resettable peak."""

    def __init__(self):
        self.stats = {"allocation.all.allocated": 0, "allocation.all.freed": 0,
                      "allocated_bytes.all.allocated": 0, "allocated_bytes.all.freed": 0,
                      "allocated_bytes.all.current": 0, "allocated_bytes.all.peak": 0}
        self.synced = 0

    def is_available(self):
        return True

    def synchronize(self):
        self.synced += 1

    def memory_stats(self):
        return dict(self.stats)

    def reset_peak_memory_stats(self):
        self.stats["allocated_bytes.all.peak"] = self.stats["allocated_bytes.all.current"]

    def malloc(self, n):
        s = self.stats
        s["allocation.all.allocated"] += 1
        s["allocated_bytes.all.allocated"] += n
        s["allocated_bytes.all.current"] += n
        s["allocated_bytes.all.peak"] = max(s["allocated_bytes.all.peak"],
                                            s["allocated_bytes.all.current"])

    def free(self, n):
        self.stats["allocation.all.freed"] += 1
        self.stats["allocated_bytes.all.freed"] += n
        self.stats["allocated_bytes.all.current"] -= n


def test_device_memory_of_a_block_is_the_difference_of_the_allocator_readings():
    from types import SimpleNamespace

    from benchkit.engines.memory.device import DeviceCounter, device_module
    cuda = FakeCuda()
    assert device_module({"torch": SimpleNamespace(cuda=cuda)}) is cuda
    assert device_module({}) is None
    cuda.malloc(5000)                        # alive before the block: not its peak
    counter = DeviceCounter(cuda)
    counter.reset()
    for _ in range(3):
        cuda.malloc(4096)
        cuda.malloc(4096)
        cuda.free(4096)
    counts = counter.read()
    assert (counts.allocations, counts.frees, counts.bytes, counts.freed_bytes, counts.peak) \
        == (6, 3, 6 * 4096, 3 * 4096, 4 * 4096)
    assert cuda.synced >= 2                  # read after the device finished


def test_device_figures_per_run_and_their_json():
    from benchkit.core.measure.memory import DeviceCounts
    s = stats()
    with_device = MemoryStats(
        s.task_spec, 10,
        long=dataclasses.replace(s.long, device=DeviceCounts(40, 40, 81920, 81920, 8192)),
        short=dataclasses.replace(s.short, device=DeviceCounts(20, 20, 40960, 40960, 8192)),
        empty=s.empty)
    per_run = with_device.device_per_run()
    assert (per_run.allocations, per_run.bytes, per_run.peak) == (2, 4096, 8192)
    assert "device: 2.00 allocations / 4.0 KiB per run" in repr(with_device)
    again = MemoryStats.from_dict(json.loads(json.dumps(with_device.to_dict())))
    assert again.to_dict() == with_device.to_dict()
    assert stats().device_per_run() is None


def test_torch_on_the_cpu_has_no_device_to_read():
    torch = pytest.importorskip("torch")
    from benchkit.engines.memory.device import device_module
    assert device_module({"torch": torch}) is None


CRASHING = """
from benchkit import Timer
bench_a = Timer("x = [0] * 10")
bench_crash = Timer("import os; os.abort()")
bench_raise = Timer("1 / 0")
bench_z = Timer("y = [0] * 20")
"""


@requires_linux
def test_a_crashing_or_raising_benchmark_fails_alone(tmp_path):
    from test_cli import cli
    (tmp_path / "bench_crash.py").write_text(CRASHING)
    out = cli("run", "bench_crash.py", "--memory", "--no-wall-time", "-o", "m.json",
              cwd=tmp_path, check_code=1)
    results = benchkit.load(tmp_path / "m.json")
    assert [m.metadata["benchmark"] for m in results.memory] == [
        "bench_crash::bench_a", "bench_crash::bench_z"]
    failed = {f.benchmark: f for f in results.failures}
    assert failed["bench_crash::bench_crash"].phase.value == "memory"
    assert failed["bench_crash::bench_crash"].kind.value == "crashed"
    assert failed["bench_crash::bench_raise"].kind.value == "raised"
    assert "ZeroDivisionError" in failed["bench_crash::bench_raise"].error
    assert "FAILED" in out.stdout + out.stderr


AB_SUITE = """
import os
from benchkit import Timer
N = int(os.environ.get("N", "100"))
bench_list = Timer(f"x = [0] * {N}")
bench_same = Timer("y = bytes(50)")
"""


@requires_linux
@pytest.mark.slow
def test_ab_counts_each_sides_memory(tmp_path):
    from test_cli import cli
    (tmp_path / "bench_ab_mem.py").write_text(AB_SUITE)
    out = cli("ab", "bench_ab_mem.py", "--memory", "--new-env", "N=1000", "--rounds", "2",
              "--trials", "3", "--trial-time", "0.005", "--fail-on", "bytes>10%", "--json",
              "-o", "ab.json", cwd=tmp_path, check_code=1)
    rows = {r["name"]: r for r in json.loads(out.stdout)["rows"]}
    assert rows["bench_ab_mem::bench_list"]["memory"]["verdict"] == "more"
    assert rows["bench_ab_mem::bench_list"]["failures"][0].startswith("bytes>10%")
    assert rows["bench_ab_mem::bench_same"]["memory"]["verdict"] == "same"
    saved = benchkit.load(tmp_path / "ab.json")
    assert sorted(m.metadata["side"] for m in saved.memory) == ["base", "base", "new", "new"]


TRACEMALLOC = """
import gc, itertools, tracemalloc
keep = []
def block(runs):
    for _ in itertools.repeat(None, runs):
        {stmt}
def measure(runs):
    gc.collect()
    tracemalloc.reset_peak()
    start = tracemalloc.get_traced_memory()[0]
    block(runs)
    end, peak = tracemalloc.get_traced_memory()
    return end - start, peak - start
tracemalloc.start()    # before the warm-up, so the list's first array is traced too
block(10)              # the same warm-up and block order as collect_memory's
gc.disable()
(long, _), (short, peak) = measure(2 * {n}), measure({n})
print(long - short, peak)
"""


@requires_linux
@pytest.mark.parametrize("stmt", ["keep.append(bytearray(1000))", "b = bytearray(100000)"])
def test_python_figures_agree_with_tracemalloc(stmt):
    """tracemalloc traces the same Python allocator domains: what a run leaves behind agrees
    to the byte, and the peak to within tracemalloc's own bookkeeping."""
    import subprocess
    n = 200
    out = subprocess.run([sys.executable, "-c", TRACEMALLOC.format(stmt=stmt, n=n)],
                         capture_output=True, text=True, check=True).stdout.split()
    retained, peak = int(out[0]) / n, int(out[1])
    ours = Timer(stmt, globals={"keep": []}).collect_memory(number=n, warmup=10)
    assert ours.retained_bytes_per_run == retained
    assert abs(ours.peak_bytes - peak) <= 256
    assert ours.source(Source.NATIVE).allocations == 0


@requires_linux
@pytest.mark.slow
def test_torch_empty_counts_its_data():
    pytest.importorskip("torch")
    m = Timer("x = torch.empty(1000)").collect_memory(number=20)
    assert m.source(Source.NATIVE).bytes >= 4000 and m.retained_bytes_per_run == 0


ELSEWHERE = """
import json, benchkit
from benchkit import Timer
assert benchkit.__file__.startswith({where!r}), benchkit.__file__
timers = [Timer("x = [i for i in range(50)]"), Timer("b = bytes(300)"),
          Timer("a = np.ones(100)", "import numpy as np")]
print(json.dumps([m.to_dict() for m in benchkit.collect_memory_many(timers, 30)]))
"""


@requires_linux
def test_counts_do_not_depend_on_where_benchkit_is_installed(tmp_path):
    """The hard case: a copy of benchkit at another path, in a fresh process."""
    import shutil
    import subprocess
    where = tmp_path / "some" / "other" / "place"
    shutil.copytree(Path(benchkit.__file__).parent, where / "benchkit",
                    ignore=shutil.ignore_patterns("__pycache__"))
    out = subprocess.run([sys.executable, "-c", ELSEWHERE.format(where=str(where))],
                         capture_output=True, text=True, cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": str(where)})
    assert out.returncode == 0, out.stderr
    theirs = json.loads(out.stdout)
    timers = [Timer("x = [i for i in range(50)]"), Timer("b = bytes(300)"),
              Timer("a = np.ones(100)", "import numpy as np")]
    ours = [m.to_dict() for m in benchkit.collect_memory_many(timers, 30)]
    for mine, other in zip(ours, theirs):
        for block in ("long", "short", "empty"):
            assert mine[block] == other[block]


LEAVES_WORK_BEHIND = """
import os, threading, time
from benchkit import Timer

def _churn():
    while True:
        junk = [bytearray(1000) for _ in range(50)]
        time.sleep(0.0005)

def _start_thread():
    threading.Thread(target=_churn, daemon=True).start()

def _start_child():
    if os.fork() == 0:
        time.sleep(5)           # outlives the benchmark, not the test
        os._exit(0)

bench_a_thread = Timer("pass", "_start_thread()", globals={"_start_thread": _start_thread})
bench_b_after_thread = Timer("pass")
bench_c_child = Timer("pass", "_start_child()", globals={"_start_child": _start_child})
bench_d_after_child = Timer("pass")
"""


@requires_linux
@pytest.mark.slow
def test_a_benchmark_that_leaves_threads_or_children_spoils_no_other(tmp_path):
    """A thread that keeps allocating, started by one benchmark, would be counted in every
    benchmark measured after it in the same worker: the worker is replaced instead, and
    the benchmark that left it running says so."""
    from test_cli import cli
    (tmp_path / "bench_leave.py").write_text(LEAVES_WORK_BEHIND)
    cli("run", "bench_leave.py", "--memory", "--no-wall-time", "-o", "m.json", cwd=tmp_path,
        check_code=0)
    stats = {m.metadata["benchmark"].split("::")[1]: m
             for m in benchkit.load(tmp_path / "m.json").memory}
    assert _figures(stats["bench_b_after_thread"]) == (0, 0, 0, 0, 0)
    assert _figures(stats["bench_d_after_child"]) == (0, 0, 0, 0, 0)
    assert "thread" in stats["bench_a_thread"].metadata["left_running"]
    assert "child process" in stats["bench_c_child"].metadata["left_running"]
    assert "left_running" not in stats["bench_b_after_thread"].metadata
