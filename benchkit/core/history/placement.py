"""Where a wall-time step lies: one commit, or a span the data cannot narrow (pure).

A step found on a shared runner's series is sometimes clear in size and unclear in place:
a slow spell of a few commits next to it, or a short real stretch, fits about as well on
either side. Naming one commit there blames the wrong change (on real series with injected
steps, most of benchkit's wrong steps were right-sized steps named 3-8 commits away). So
the cuts near a step are scored as two levels each (least absolute deviation from each
side's median, on the log values levels were found in: the lower envelope where the noise
is one-sided, else the raw values), and every cut that fits within SLACK times the
series' noise of the best one is a place the step may be. When such a cut is SEPARATION or
more commits from the best, the step is *not placed*: it is reported with the span of
those cuts, to bisect or re-measure, and is not a step at one commit.

SLACK, REACH and SEPARATION were measured, not picked: benchmarks/perf_history_detection.py
scores placed steps beside asv's on five sets of real series (results/history_detection*);
LONG_SLACK on three noise histories of 200 commits recorded on this VM.
"""
from __future__ import annotations

import math
import statistics
from typing import Sequence

import numpy as np

REACH = 10          # commits on either side of a step whose cuts are scored
SLACK = 5.0         # a cut this many noises (of absolute deviation) from the best still fits
LONG_SLACK = 4.0    # ... between two long levels, whose medians a cut barely moves
SEPARATION = 4      # a fitting cut this many commits from the best leaves a step unplaced
WINDOW = 30         # commits on either side that a cut is scored on


def refined(logs: Sequence[float], start: int, at: int, end: int, reach: int = 2) -> int:
    """The boundary near `at` that best splits logs[start:end] into two levels (least
    absolute deviation from each side's median): the envelope moves a step by a commit."""
    best, best_cost = at, math.inf
    for cut in range(max(start + 1, at - reach), min(end - 1, at + reach) + 1):
        # Python lists: the medians of these short slices are ~20x faster than numpy's
        left, right = logs[start:cut], logs[cut:end]
        middle_left, middle_right = statistics.median(left), statistics.median(right)
        cost = (sum(abs(v - middle_left) for v in left)
                + sum(abs(v - middle_right) for v in right))
        if cost < best_cost - 1e-12:
            best, best_cost = cut, cost
    return best


def _cost(logs: np.ndarray, cut: int) -> float:
    left, right = logs[:cut], logs[cut:]
    return float(np.abs(left - np.median(left)).sum() + np.abs(right - np.median(right)).sum())


def spans(logs: np.ndarray, positions: Sequence[int], sigma: float,
          long_level: int | None = None) -> list[tuple[int, int] | None]:
    """For each step (`positions`: the first commit after each, ascending) None when it is
    placed, else (first, last): the step may be at any commit from `first` to `last`. Each
    is judged between its neighbouring steps, at most WINDOW commits either side; `sigma`
    is the series' noise (log scale). Between two levels longer than `long_level` commits a
    cut fits within LONG_SLACK noises, not SLACK: a few commits more or less barely move
    the median of either side, so the costs of the cuts scatter less (measured on three
    200-commit noise histories of this VM: 5 % steps placed 6-8 points more often, and
    misplaced no more often; benchmarks/perf_history_detection.py)."""
    out: list[tuple[int, int] | None] = []
    edges = [0, *positions, len(logs)]
    for k, at in enumerate(positions):
        low = max(edges[k], at - WINDOW)
        high = min(edges[k + 2], at + WINDOW)
        stretch = logs[low:high]
        cuts = range(max(2, at - low - REACH), min(len(stretch) - 2, at - low + REACH) + 1)
        costs = {cut: _cost(stretch, cut) for cut in cuts}
        if not costs:
            out.append(None)
            continue
        best = min(costs, key=costs.__getitem__)
        long = long_level is not None and min(at - edges[k], edges[k + 2] - at) > long_level
        slack = LONG_SLACK if long else SLACK
        fitting = [cut for cut, cost in costs.items() if cost - costs[best] < slack * sigma]
        if all(abs(cut - best) < SEPARATION for cut in fitting):
            out.append(None)
        else:
            out.append((low + min(*fitting, at - low), low + max(*fitting, at - low)))
    return out
