"""A two-speed series read (pure): a shared machine runs a snippet at one of two speeds, in
clusters of commits; the flips between them are the series' noise (`flip_noise`), and the
series is read at its faster speed (`two_speed_read`, `two_speed`)."""
from __future__ import annotations

import math
from typing import NamedTuple, Sequence

import numpy as np

from benchkit.core.history import placement

FLIPS = 3                  # returns to an earlier level that make a series two-speed ...
FLIP_SHARE = 0.5           # ... when they are at least this share of its boundaries


def flip_noise(logs: np.ndarray, levels_of: Sequence[tuple[int, int]], same: float) -> float:
    """The noise (log, as a standard deviation) of a series that flips between recurring
    levels, else 0.0: half the median height of its returns, where at least FLIPS of its
    levels (`levels_of`: (start, end) slices, in order), and FLIP_SHARE of its boundaries,
    return to within `same` of a level before the one they leave. A shared VM runs a
    snippet at one of two speeds 1.7x apart (OpenBLAS's threads beside a busy neighbour:
    300x), each in clusters of a few to a dozen commits: lag-1 noise sees the small
    differences inside a cluster, and the clusters read as levels whose flips pair up as
    transient but for one left over, which was named (an idle noise history of this VM:
    0.265 false steps a series; benchmarks/perf_history_detection.py). Such a series' noise
    is its flips. Code histories return seldom: at most once in a series (a revert) on
    asv's astropy results and numpy's, scipy's and xarray's releases; 3 to 10 times in 18
    of 40 series of five noise histories of this VM. Three, not two: a revert and a reland
    (two returns) is a regression a team must still see."""
    medians = [placement.median(logs[a:b]) for a, b in levels_of]
    heights = [abs(medians[k] - medians[k - 1]) for k in range(2, len(medians))
               if any(abs(medians[k] - medians[j]) <= same for j in range(k - 1))]
    if len(heights) < FLIPS or len(heights) < FLIP_SHARE * (len(medians) - 1):
        return 0.0
    return placement.median(np.array(heights)) / 2


GAPS = np.linspace(0.8, 2.0, 13)   # gaps between the speeds tried, in flip heights
MIXED = 0.1                 # a level with this share of its commits at each speed holds both
TWO_SPEED_FIT = 0.8         # share of commits two speeds must fit to read fine levels' flips
CLUSTER = 30                # commits at the slower speed in a row, at most, read as a cluster
CLUSTERS = 2                # clusters a read of fine levels needs (one and a return: a revert)


def two_speed_read(raw: np.ndarray, logs: np.ndarray, levels_of: Sequence[tuple[int, int]],
                   same: float, flips: float) -> TwoSpeed | None:
    """A series read at its faster speed (`two_speed` over its fine levels, `levels_of`),
    where it is two-speed: where its merged levels return (`flips`, their `flip_noise`),
    or else where its fine levels return and two speeds fit at least TWO_SPEED_FIT of its
    commits (within a quarter of the gap of one of their level's two speeds); else None.
    The merged levels run together where a real step meets a long cluster of slower
    commits, and the step is named at the cluster's start (32 of the 94 false cases of
    this VM's idle history: a +25 % step 14-33 commits early). Fine levels return in every
    noise series of this VM and in 1 of the 144 real ones (astropy's, numpy's, scipy's,
    xarray's), so the fit decides; of the series not two-speed by their merged levels,
    0.58-0.76 beside a busy neighbour, 0.59-0.75 on the second noise history, 0.65-0.83 on
    the idle one, 0.67 the real one (0.75, 0.8, 0.85 measured:
    benchmarks/perf_history_detection.py, docs/performance.md). A quiet series fits any two
    speeds a few noises apart, so a read of fine levels must also find CLUSTERS clusters of
    slower commits: a regression reverted and landed again returns twice, and its one
    stretch at the level after read as slower runs hid the regression. A read with no
    slower commit is no read."""
    if flips:
        read = two_speed(raw, levels_of, 2 * flips)
        return read if read.slower.any() else None
    flips = flip_noise(logs, levels_of, same)
    read = two_speed(raw, levels_of, 2 * flips) if flips else None
    if read is None or read.fit < TWO_SPEED_FIT or len(placement.runs_of(read.slower)) < CLUSTERS:
        return None
    return read


class TwoSpeed(NamedTuple):
    """A two-speed series read at its faster speed: its log values with each commit run at
    the slower speed taken down by the gap between the speeds (log)."""

    folded: np.ndarray
    slower: np.ndarray      # per commit, whether it ran at the slower speed
    gap: float
    fit: float              # share of commits within a quarter gap of their level's speeds


_TRIED = np.linspace(0, 1, 51)     # quantiles of a level tried as its faster speed


def _quantiles(values: np.ndarray) -> np.ndarray:
    """np.quantile(values, _TRIED), bit for bit (its linear method): the speeds
    `faster_speeds` tries for one run (`_sorted_quantiles`, which it calls for all runs at
    once, checked against numpy through this)."""
    return _sorted_quantiles(np.sort(values), np.array([0]), np.array([len(values)]))[0]


def _sorted_quantiles(ordered: np.ndarray, starts: np.ndarray, sizes: np.ndarray
                      ) -> np.ndarray:
    """The _TRIED quantiles of each sorted run ordered[start:start + size]: (runs, 51)."""
    at = _TRIED[None, :] * (sizes[:, None] - 1)
    below = np.floor(at).astype(int)
    low = ordered[starts[:, None] + below]
    high = ordered[starts[:, None] + np.minimum(below + 1, sizes[:, None] - 1)]
    share = at - below
    return np.where(share >= 0.5, high - (high - low) * (1 - share), low + (high - low) * share)


TIE = 1e-9                  # fits this close (log, summed) to the best are as good: the first


def faster_speeds(raw: np.ndarray, segments: Sequence[tuple[int, int]], gaps: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """For each (a, b) of `segments` and each of `gaps`, the faster of two speeds that far
    apart that fit raw[a:b] (log) best, and the fit's total absolute deviation (each value
    from the nearer speed): two arrays (segments, gaps). The speeds tried are the segment's
    quantiles (_TRIED), and those less the gap. A fit's deviation comes from the sorted
    values' running sums (the values below the faster speed, between it and the midpoint,
    between the midpoint and the slower speed, above it), not from each value: 13 gaps x
    102 speeds x every value was most of a two-speed series' time. Fits within TIE of the
    best are ties, and the first is taken: exact ties are common (a level that fits as
    well a gap lower), and which of them sums a bit smaller is down to rounding."""
    if not segments:
        return np.empty((0, len(gaps))), np.empty((0, len(gaps)))
    sizes = np.array([b - a for a, b in segments])
    starts = np.cumsum(sizes) - sizes
    owner = np.repeat(np.arange(len(segments)), sizes)
    taken = raw[np.concatenate([np.arange(a, b) for a, b in segments])]
    ordered = taken[np.lexsort((taken, owner))]       # each segment's values, sorted
    centre = ordered[starts + sizes // 2]     # running sums of small numbers: exact-ish
    ordered -= centre[owner]
    tried = _sorted_quantiles(ordered, starts, sizes)
    tried = np.concatenate([np.broadcast_to(tried, (len(gaps), *tried.shape)),
                            tried[None] - gaps[:, None, None]], axis=2)  # (gaps, segments, 102)
    # one sorted run for all: segment k moved up by k spans, each wider than a segment's
    # values and speeds, so one search finds where each speed falls in its own segment
    span = float(ordered.max() - ordered.min() + 2 * gaps.max() + 1)
    shifted = ordered + owner * span
    lift = (np.arange(len(segments)) * span)[None, :, None]
    sums = np.concatenate([[0.0], np.cumsum(ordered)])
    first, last = starts[None, :, None], (starts + sizes)[None, :, None]
    slower = tried + gaps[:, None, None]
    fast, middle, slow = (np.searchsorted(shifted, edge + lift, side="right") for edge in (
        tried, tried + gaps[:, None, None] / 2, slower))
    cost = ((tried * (fast - first) - (sums[fast] - sums[first]))
            + (sums[middle] - sums[fast] - tried * (middle - fast))
            + (slower * (slow - middle) - (sums[slow] - sums[middle]))
            + (sums[last] - sums[slow] - slower * (last - slow)))
    cost = np.maximum(cost, 0.0)      # a fit of every value, rounded below zero
    best = np.argmax(cost <= cost.min(axis=2, keepdims=True) + TIE, axis=2)[..., None]
    speeds = np.take_along_axis(tried, best, axis=2)[..., 0].T + centre[:, None]
    return speeds, np.take_along_axis(cost, best, axis=2)[..., 0].T


def two_speed(raw: np.ndarray, levels_of: Sequence[tuple[int, int]], height: float
              ) -> TwoSpeed:
    """`raw` (log values) read at the faster of a shared machine's two speeds. The gap
    between the speeds is the one (of GAPS times the flips' `height`) that fits the levels
    (`levels_of`, fine: a real step inside a level blurs its fit) best; each level's faster
    speed is its fit's. A level of one speed only may be a cluster of slower commits: which
    is decided over all levels at once, as the labels that make the faster speed move the
    least (Viterbi over the levels, each move costing its square root: one step is cheaper
    than two that add up to it, so a cluster just before a real step is not read as the
    step's start); a level that holds both speeds shows which is the faster, and so does a
    run of levels longer than CLUSTER commits (no cluster of slower commits in this VM's
    noise histories without a step is longer than 26: a longer one is the code's level; a
    regression landed again after its revert, 131 commits at +30 %, was read as slower runs
    12 % above the level before and named as +17 %). A commit above its level's faster
    speed by more than half the gap ran slow. Measured on this VM's noise histories:
    benchmarks/perf_history_detection.py (docs/performance.md)."""
    gaps = height * GAPS
    fitted, costs = faster_speeds(raw, levels_of, gaps)          # per level, per gap
    totals = costs.sum(axis=0)
    g = int(np.argmax(totals <= totals.min() + TIE))
    gap, speeds = float(gaps[g]), fitted[:, g].tolist()
    # per level, its commits near its faster speed and near its slower (a quarter gap)
    near = [(np.abs(raw[a:b] - speed) <= gap / 4, np.abs(raw[a:b] - speed - gap) <= gap / 4)
            for (a, b), speed in zip(levels_of, speeds)]
    mixed = [min(np.mean(fast), np.mean(slow)) > MIXED for fast, slow in near]
    sizes = [b - a for a, b in levels_of]
    at_faster = mixed           # levels whose faster speed is their fit's own
    labels = _speed_labels(speeds, gap, at_faster)
    while long_runs := {k for first, last in placement.runs_of(labels)
                        if sum(sizes[first:last]) > CLUSTER for k in range(first, last)}:
        # levels at the slower speed for longer than a cluster of slow runs lasts: a level
        # of the code's, at its faster speed
        at_faster = [known or k in long_runs for k, known in enumerate(at_faster)]
        labels = _speed_labels(speeds, gap, at_faster)
    faster = np.empty(len(raw))
    for (a, b), speed, label in zip(levels_of, speeds, labels):
        faster[a:b] = speed - gap * label
    slower = raw > faster + gap / 2
    fit = float(np.mean(np.concatenate([fast | slow for fast, slow in near])))
    return TwoSpeed(raw - gap * slower, slower, gap, fit)


def _speed_labels(speeds: Sequence[float], gap: float, faster: Sequence[bool]) -> list[int]:
    """Per level (its faster of two `speeds` fitted, `gap` apart), 1 where its one speed is
    the slower, 0 where it is the faster (always where `faster`): the labels that make the
    faster speed move the least (Viterbi, each move costing its square root); a tie goes to
    the faster (a small cost)."""
    tie = gap / 100
    cost = [0.0, math.inf if faster[0] else tie]
    came: list[tuple[int, int]] = []
    for k in range(1, len(speeds)):
        steps = [[cost[t] + math.sqrt(abs(speeds[k] - gap * s - speeds[k - 1] + gap * t))
                  + (math.inf if s and faster[k] else tie * s) for t in (0, 1)] for s in (0, 1)]
        came.append((int(steps[0][1] < steps[0][0]), int(steps[1][1] < steps[1][0])))
        cost = [min(steps[0]), min(steps[1])]
    labels = [int(cost[1] < cost[0])]
    for k in range(len(speeds) - 1, 0, -1):
        labels.append(came[k - 1][labels[-1]])
    return labels[::-1]
