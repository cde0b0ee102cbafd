"""Compare's memory tables: the Compare layout for MemoryStats, exact text (pure)."""
from __future__ import annotations

import dataclasses

from benchkit import Compare
from benchkit.core.measure.memory import MemoryStats
from benchkit.core.measure.task import TaskSpec
from test_memory import block


def memory(sub_label, description, nbytes, allocations, kept=0, label="alloc", threads=1):
    spec = TaskSpec("x", "pass", label=label, sub_label=sub_label, description=description,
                    num_threads=threads)
    def counted(runs):
        return block((runs * allocations, 0), (runs * allocations, 0), (runs * nbytes, 0),
                     (runs * (nbytes - kept), 0), 10)
    return MemoryStats(spec, 1, long=counted(2), short=counted(1), empty=counted(0))


def test_memory_stats_get_compare_tables_in_the_same_layout():
    items = [memory("n=10", "list", 88, 2), memory("n=10", "bytearray", 67, 2),
             memory("n=1000", "list", 8056, 2), memory("n=1000", "bytearray", 1057, 2, kept=1057),
             memory("n=10", "list", 88, 2, threads=4)]
    assert str(Compare(items)) == (
        "[------------------ alloc: memory per run -------------------]\n"
        "              |      list     |            bytearray          \n"
        "1 threads: ---------------------------------------------------\n"
        "      n=10    |     88 B (2)  |                       67 B (2)\n"
        "      n=1000  |  7.9 KiB (2)  |  1.0 KiB (2) +1.0 KiB retained\n"
        "4 threads: ---------------------------------------------------\n"
        "      n=10    |     88 B (2)  |                               \n"
        "\n"
        "Memory per run: bytes requested (allocations), exact; '+N retained' where a run "
        "leaves bytes allocated.\n")


def test_times_and_memory_side_by_side_times_first():
    from benchkit import Measurement
    spec = TaskSpec("x", "pass", label="alloc", sub_label="n=10", description="list")
    tables = Compare([memory("n=10", "list", 88, 2), Measurement(100, [1e-4] * 5, spec)]).tables()
    assert [t.splitlines()[0] for t in tables] == [
        "[----- alloc -----]", "[ alloc: memory per run ]"]
    assert tables[0].splitlines()[-1] == "Times are in microseconds (us)."


def test_compare_refuses_other_objects_naming_them():
    import pytest
    from benchkit.errors import BenchkitError
    with pytest.raises(BenchkitError, match="Compare takes Measurements \\(or MemoryStats\\)"):
        Compare([dataclasses])
