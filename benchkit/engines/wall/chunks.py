"""Timing in chunks behind a speed probe (used in worker processes and in-process)."""
from __future__ import annotations

import time
from typing import Callable

PROBE_ITERATIONS = 20000  # about 0.35 ms on a 2020s x86 core


def speed_probe(_clock=time.perf_counter, _n=PROBE_ITERATIONS) -> float:
    """Seconds of a fixed pure-Python loop: tells how fast the machine is right now."""
    start = _clock()
    x = 0
    for i in range(_n):
        x += i
    return _clock() - start


def measure_chunks(time_block: Callable[[int], float], number: int, min_time: float,
                   chunk_time: float, warmup: bool = False) -> list[dict]:
    """[{"probe": seconds, "times": [block seconds, ...]}, ...]: chunks of about
    `chunk_time` seconds of blocks, at least `min_time` in all, at least one block each."""
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
        chunks.append({"probe": probe, "times": times})
        total += spent
    return chunks
