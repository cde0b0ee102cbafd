"""Block-size estimation and the one measurement loop behind every Timer method.

Pure logic over a `time_block(number) -> seconds` callable, so it is tested with a fake clock.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

TimeBlock = Callable[[int], float]
Callback = Callable[[int, float], None]
MAX_BLOCK_SIZE = 2**31 - 1
ADAPTIVE_ESTIMATE_TIME = 0.05   # torch sizes adaptive_autorange's blocks for 0.05 s


def estimate_block_size(time_block: TimeBlock, min_run_time: float) -> int:
    """Smallest power of ten whose block makes the timer overhead negligible, exactly as
    torch.utils.benchmark chooses it: grow the block until the overhead (median of five empty
    blocks) is <= 0.01 % of a block and a block takes at least min_run_time / 1000, or until
    a single block exceeds min_run_time."""
    # float32, as torch.tensor(...).median() computes it, so equal inputs decide equally.
    overhead = float(np.float32(np.median([time_block(0) for _ in range(5)])))
    number = 1
    while True:
        taken = time_block(number)
        relative = overhead / taken
        if relative <= 1e-4 and taken >= min_run_time / 1000:
            break
        if taken > min_run_time or number * 10 > MAX_BLOCK_SIZE:
            break
        number *= 10
    return number


def measurement_loop(time_block: TimeBlock, number: int, stop: Callable[[list[float]], bool], *,
                     min_run_time: float = 0.0, max_run_time: float | None = None,
                     callback: Callback | None = None) -> list[float]:
    """Time blocks of `number` runs until min_run_time is spent and `stop(times)` agrees,
    or max_run_time is exceeded. Returns the block times."""
    times: list[float] = []
    total = 0.0
    while True:
        taken = time_block(number)
        times.append(taken)
        total += taken
        if callback is not None:
            callback(number, taken)
        if total >= min_run_time and stop(times):
            break
        if max_run_time is not None and total > max_run_time:
            break
    return times


def timeit_autorange(time_block: TimeBlock, callback: Callback | None = None,
                     target: float = 0.2) -> tuple[int, float]:
    """`timeit.Timer.autorange`: 1, 2, 5, 10, 20, ... runs until a block takes >= 0.2 s."""
    i = 1
    while True:
        for factor in (1, 2, 5):
            number = i * factor
            taken = time_block(number)
            if callback is not None:
                callback(number, taken)
            if taken >= target:
                return number, taken
        i *= 10


def iqr_below(threshold: float) -> Callable[[list[float]], bool]:
    """Stop hook of adaptive_autorange: >3 blocks and IQR/median < threshold."""
    def stop(times: list[float]) -> bool:
        if len(times) <= 3:
            return False
        p25, median, p75 = np.quantile(times, [0.25, 0.5, 0.75])
        return median > 0 and (p75 - p25) / median < threshold
    return stop
