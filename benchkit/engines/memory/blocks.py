"""Counted blocks of a snippet's loop, in a memory worker process."""
from __future__ import annotations

import dataclasses
import gc
from typing import Callable

from benchkit.core.measure.memory import BlockCounts
from benchkit.engines.memory.counter import Counter
from benchkit.engines.memory.device import DeviceCounter, device_module


def count_blocks(time_block: Callable[..., float], number: int, warmup: int,
                 counter: Counter) -> tuple[BlockCounts, BlockCounts, BlockCounts]:
    """(long, short, empty): the counts of a block of 2 x `number` runs, of one of `number`
    runs and of one of none (what counting itself costs), after a warm-up block of `warmup`
    runs. Their difference is `number` runs in the
    steady state: setup, the loop's own start and end, and what the last run leaves in the
    loop's locals cancel.

    Counting starts and stops where the loop reads its clock, inside the loop's frame
    (setup excluded; the locals still alive); a C++ loop, which keeps its own clock, is
    counted around the whole block. The collector is off inside a block, as timeit has it,
    and collects before the count is read, so garbage in reference cycles is freed where it
    was made and only what stays counts as retained. Where torch has an accelerator, its
    caching allocator is read at the same marks (BlockCounts.device)."""
    time_block(warmup)
    counted = []
    # A first block warms the counting itself (ctypes' first calls cache objects).
    for runs in (0, 2 * number, number, 0):
        marks: list = []
        device: list[DeviceCounter] = []

        def mark() -> float:
            if marks:                 # the loop's end
                gc.collect()
                marks[0] = counter.read()
                if device:
                    marks[0] = dataclasses.replace(marks[0], device=device[0].read())
            else:                     # its start (after setup)
                marks.append(None)
                module = device_module()
                if module is not None:
                    device.append(DeviceCounter(module))
                    device[0].reset()
                counter.reset()
            return 0.0
        gc.collect()
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            counter.reset()
            time_block(runs, mark)
            if not marks:
                gc.collect()
                marks.append(counter.read())
            counted.append(marks[0])
        finally:
            if was_enabled:
                gc.enable()
    _, long, short, empty = counted
    return long, short, empty
