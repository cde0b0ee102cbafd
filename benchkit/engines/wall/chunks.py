"""Timing in chunks behind a speed probe (in worker processes and in this process).

Before each chunk of blocks a fixed pure-Python loop (the speed probe) records how fast the
machine is at that moment, so a comparison can keep only what was timed at full speed.
"""
from __future__ import annotations

import time
from typing import Callable

from benchkit.core.measure.measurement import Chunk

PROBE_ITERATIONS = 20000  # about 0.35 ms on a 2020s x86 core
CHUNK_TIME = 0.025        # seconds of blocks per chunk in this process


def speed_probe(_clock=time.perf_counter, _n=PROBE_ITERATIONS) -> float:
    """Seconds of a fixed pure-Python loop: tells how fast the machine is right now."""
    start = _clock()
    x = 0
    for i in range(_n):
        x += i
    return _clock() - start


def measure_chunks(time_block: Callable[[int], float], number: int, min_time: float,
                   chunk_time: float, warmup: bool = False) -> list[Chunk]:
    """Chunks of about `chunk_time` seconds of blocks of `number` runs, at least `min_time`
    in all, at least one block each, each after a speed probe."""
    if warmup:
        time_block(number)
    chunks = []
    total = 0.0
    while total < min_time or not chunks:
        probe = speed_probe()
        times, spent = [], 0.0
        while spent < chunk_time or not times:
            taken = time_block(number)
            times.append(taken)
            spent += taken
        chunks.append(Chunk(probe, tuple(times)))
        total += spent
    return chunks
