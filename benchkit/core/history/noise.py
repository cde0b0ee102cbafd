"""A wall-time series' own noise, and the filtered values its levels are found in (pure).

Timing noise on a shared machine is one-sided (a busy neighbour makes runs slower, never
faster) and comes in spells; a quiet machine's scatters both ways. `level_filter` gives the
values levels are found in for either kind, `noise_of` the noise a step must clear and
`median_wander` how far the medians of long runs wander with the spells (time_steps.py
decides the steps).
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from benchkit.core.history import placement

NOISE_FLOOR = 1e-3         # relative; a series quieter than this is scaled as if it were this
LAGS = 2                   # noise_of: the commits apart whose differences measure noise
ONE_SIDED = 1.5            # noise whose slow tail reaches this many times its fast tail
FAR_TAIL = 3.0             # ... or whose far slow tail (TAIL_SHARE of commits) reaches this far
TAIL_SHARE = 0.025
INDEPENDENT_MIN = 100      # commits a series needs before its noise can read as independent
INDEPENDENT_NEAR = (1, 2)  # ... when commits this close differ as much as ...
INDEPENDENT_FAR = (6, 7, 8, 9, 10)  # ... commits this far apart ...
INDEPENDENT_SHARE = 0.85   # ... or nearly: at least this share (spells make neighbours alike)
WANDER_PAIRS = 20          # median_wander: pairs of medians it needs (fewer: not measured)
CORE_QUARTILE = 0.4506     # core_noise: the first quartile of |a - b|, a and b normal, in sds


def noise_of(logs: np.ndarray, levels_of: Sequence[tuple[int, int]] = (),
             lags: int = 1) -> float:
    """The series' noise (log scale) as a standard deviation, never below NOISE_FLOOR: the
    median absolute difference of commits 1 (up to `lags`: the largest) apart, over
    sqrt(2), counting only pairs inside one of `levels_of` ((start, end) slices; default
    the whole series). Slow spells last a few commits: lag 1 alone takes a spelly series
    for a quiet one, and a step no larger than a spell is named at the wrong commit (on
    numpy's real series, 2 in 5 of those below 3 lag-1 noises)."""
    pieces = levels_of or [(0, len(logs))]
    mad = 0.0
    for lag in range(1, lags + 1):
        pairs = [np.abs(logs[a + lag:b] - logs[a:b - lag]) for a, b in pieces if b - a > lag]
        pairs = np.concatenate(pairs) if pairs else np.empty(0)
        if len(pairs) >= 2:
            mad = max(mad, placement.median(pairs))
    return max(mad / (0.6745 * math.sqrt(2)), NOISE_FLOOR)


def core_noise(logs: np.ndarray) -> float:
    """The noise (log, as a standard deviation) of the commits that run at one speed: the
    first quartile of the absolute differences of commits 1 and 2 apart, over its value
    for normal noise (0.4506); 0.0 for fewer than four commits. Normal noise gives its
    standard deviation, as `noise_of` does; a machine that runs a snippet at a few distinct
    speeds (the fifth VM's third noise history: 1.0x, and 0.33x, 0.52x and 0.66x of it in 1
    commit of 4) gives the spread at one of them, which `noise_of`'s median of the
    differences counts the jumps between speeds in."""
    if len(logs) < 4:
        return 0.0
    differences = np.concatenate([np.abs(logs[lag:] - logs[:-lag]) for lag in (1, 2)])
    return float(np.quantile(differences, 0.25)) / CORE_QUARTILE


def median_wander(logs: np.ndarray, levels_of: Sequence[tuple[int, int]], length: int
                  ) -> float:
    """How far the median of `length` commits wanders inside one level (log scale, as a
    standard deviation): the median absolute difference of every two such medians `length`
    commits apart inside one of `levels_of` ((start, end) slices), over 0.6745 sqrt(2); 0.0
    where the levels hold fewer than WANDER_PAIRS pairs. The noise of single commits does not
    tell it: where slow spells last for tens of commits, the median of 20 wanders about as
    far as a single commit (beside this VM's busy neighbour 1.04 times its noise, the median
    of 8 series); where runs of every speed come and go within a few commits it hardly
    wanders (the third noise history, 0.13 times); normal noise independent of its
    neighbours, 0.26."""
    pairs = []
    for a, b in levels_of:
        if b - a >= 2 * length:
            medians = np.median(np.lib.stride_tricks.sliding_window_view(logs[a:b], length),
                                axis=1)
            pairs.append(np.abs(medians[length:] - medians[:-length]))
    if sum(len(p) for p in pairs) < WANDER_PAIRS:
        return 0.0
    return placement.median(np.concatenate(pairs)) / (0.6745 * math.sqrt(2))


def lower_envelope(logs: np.ndarray) -> np.ndarray:
    """Each commit's value as the lowest of it and its two neighbours. Timing noise on a
    shared machine is one-sided: a busy neighbour makes runs slower, never faster, and
    busy spells come in clusters. The fast state moves only when the code does, so a
    step shows in the lower envelope while a cluster of slow commits with a fast one among
    every three does not."""
    if len(logs) < 3:
        return logs
    padded = np.concatenate([logs[:1], logs, logs[-1:]])
    return np.min(np.stack([padded[:-2], padded[1:-1], padded[2:]]), axis=0)


def outliers(logs: np.ndarray) -> np.ndarray:
    """Each commit's deviation from the running median of five: what one commit's noise
    does apart from its neighbours (a step moves the median with it)."""
    padded = np.concatenate([logs[:2][::-1], logs, logs[-2:][::-1]])
    return logs - np.median(np.stack([padded[k:k + len(logs)] for k in range(5)]), axis=0)


def one_sided(logs: np.ndarray, deviations: np.ndarray | None = None) -> bool:
    """Whether the series' noise only slows runs down: its deviations from the running
    median of five reach further up (90th percentile) than down (10th) by ONE_SIDED times,
    or at the far tails (TAIL_SHARE) by FAR_TAIL. Busy neighbours do that; a laptop's runs
    scatter both ways (ratio 0.9-2.2, median 1.2), this VM's slow spells do not (2.2-9).
    The far tail catches rare spells: OpenBLAS threads slow time_numpy_dot 1.6x in one
    commit of 8-17, in clusters, 1.2 at the 90th percentile. The running median of three
    kept the clusters, and named steps at their edges (perf_history_detection.py: false
    steps 0.030 -> 0.022 on a quiet history, 0.053 -> 0.028 beside a busy neighbour).
    `deviations`: `outliers(logs)`, where the caller has them."""
    if len(logs) < 5:
        return True
    deviations = outliers(logs) if deviations is None else deviations
    far_down, down, up, far_up = np.quantile(deviations, [TAIL_SHARE, .1, .9, 1 - TAIL_SHARE])
    return bool(up > ONE_SIDED * max(-down, 1e-12)
                or far_up > FAR_TAIL * max(-far_down, 1e-12))


def level_filter(logs: np.ndarray, deviations: np.ndarray | None = None
                 ) -> tuple[np.ndarray, bool]:
    """The values levels are found in, and whether they are the lower envelope (which
    moves a rise one commit later and a fall one earlier): the lower envelope where the
    noise is one-sided, else the running median of three (a single outlier either way
    does not move it). On symmetric noise the envelope would take each fast outlier for
    the true level and widen it to three commits."""
    if one_sided(logs, deviations):
        return lower_envelope(logs), True
    padded = np.concatenate([logs[:1], logs, logs[-1:]])
    return np.median(np.stack([padded[:-2], padded[1:-1], padded[2:]]), axis=0), False


def independent(logs: np.ndarray) -> bool:
    """Whether the noise scatters commit by commit on its own, not in spells: commits 1 or 2
    apart (INDEPENDENT_NEAR) differ (median absolute difference) at least INDEPENDENT_SHARE
    as much as commits 6 to 10 apart (INDEPENDENT_FAR), in a series of at least
    INDEPENDENT_MIN commits. A quiet machine's noise is so; a shared runner's slow spells
    make neighbours alike, and a level as long as a spell may be one. (Medians: a step
    moves only the few pairs across it. Pairs of several lags, not of 1 and 5 alone: the
    ratio scatters less, and 7 % of independent series of 200 commits with a 10 % step
    failed at 1 and 5, 1.7 % now; of 100-commit pieces of this VM's noise histories 0-5 %
    pass, as 0-2.5 % did.)"""
    if len(logs) < INDEPENDENT_MIN:
        return False

    def spread(lags: Sequence[int]) -> float:
        return placement.median(np.concatenate([np.abs(logs[k:] - logs[:-k]) for k in lags]))
    far = spread(INDEPENDENT_FAR)
    return far > 0 and spread(INDEPENDENT_NEAR) >= INDEPENDENT_SHARE * far


def two_sided_independent(logs: np.ndarray, deviations: np.ndarray | None = None) -> bool:
    """Whether the noise scatters both ways (not `one_sided`) and is `independent`: a quiet
    machine's. `deviations`: `outliers(logs)`, where the caller has them."""
    return not one_sided(logs, deviations) and independent(logs)


def independent_values(values: Sequence[float]) -> bool:
    """`two_sided_independent` for a series' values (False unless all are above zero)."""
    array = np.asarray(values, dtype=float)
    if len(array) < INDEPENDENT_MIN or not np.all(array > 0):
        return False
    return two_sided_independent(np.log(array))


def nan_medians(values: np.ndarray) -> np.ndarray:
    """The median along the last axis of `values` leaving NaN out (NaN where all are),
    bit for bit `np.nanmedian(values, axis=-1)`: numpy's takes the masked-array path for
    windows this short, about six times slower, and running medians of every window of
    every series were a tenth of finding a history's steps."""
    ordered = np.sort(values, axis=-1)           # NaN sorts last
    count = np.count_nonzero(~np.isnan(values), axis=-1)
    low = np.take_along_axis(ordered, ((np.maximum(count, 1) - 1) // 2)[..., None], -1)
    high = np.take_along_axis(ordered, (np.maximum(count, 1) // 2)[..., None], -1)
    return np.where(count == 0, np.nan, (low[..., 0] + high[..., 0]) / 2)


MINORITY_SIDE = 12         # commits either side whose median a commit is compared with
MINORITY_SHARE = (0.1, 0.4)    # the share of commits at a faster speed, to be one
MINORITY_NOISES = 4.0      # a commit this many core noises below both sides may be one ...
MINORITY_LEAST = 0.2       # ... and at least this far below them (log)
MINORITY_MODE = 0.7        # ... and this share of those within a quarter gap of their median


def faster_minority(logs: np.ndarray) -> tuple[np.ndarray, float] | None:
    """The commits that ran at a faster speed the machine gives a minority of them,
    scattered, and how far below the rest it is (log); None where the series shows no such
    speed. This VM's noise histories run each snippet at 1x and, one commit in five to
    seven, in runs of one to four, at 0.5-0.7x (a shared VM that now and then gives it a
    core alone): lag noise counts the jumps between the speeds (beside a busy neighbour
    11-18 %; 6-7 % without the faster commits) and a 25 % step stayed under the bar.

    A commit is compared with the medians of the MINORITY_SIDE commits on either side (a
    step moves one side only). Those MINORITY_NOISES core noises (`core_noise`) and
    MINORITY_LEAST below both are candidates; their median is the gap, and they are a
    speed where MINORITY_SHARE of the series' commits are candidates and MINORITY_MODE of
    them lie within a quarter gap of it (a long tail is not a speed). The faster commits
    are those half a gap below both sides, and those within a quarter gap of either
    side's faster speed and not of either side itself: after a step as high as the gap,
    the new level's faster commits stand at the old level. A quiet series with one fast
    spell has no such speed (the fifth VM's joined time_sum_range: with a floor of 5 %, 11
    of its 200 commits were left out and a +10 % step named 9 commits late)."""
    n = len(logs)
    if n <= placement.SHORT_SERIES:       # releases: no such machine, too few commits
        return None
    pad = np.full(MINORITY_SIDE, np.nan)
    windows = np.lib.stride_tricks.sliding_window_view(
        np.concatenate([pad, logs, pad]), MINORITY_SIDE)
    left = nan_medians(windows[:n])         # a side of all-NaN (the ends): NaN, as meant
    right = nan_medians(windows[MINORITY_SIDE + 1:MINORITY_SIDE + 1 + n])
    left[:3], right[n - 3:] = np.nan, np.nan     # fewer than three: no side
    below = logs - np.fmin(left, right)
    least = max(MINORITY_NOISES * core_noise(logs), MINORITY_LEAST)
    candidates = below[below < -least]
    if not MINORITY_SHARE[0] * n <= len(candidates) <= MINORITY_SHARE[1] * n:
        return None
    gap = -float(np.median(candidates))
    if np.mean(np.abs(candidates + gap) <= gap / 4) < MINORITY_MODE:
        return None
    sides = np.stack([left, right])
    with np.errstate(invalid="ignore"):
        at_a_side = (np.abs(logs - sides) <= gap / 4).any(axis=0)
        at_a_faster_side = (np.abs(logs - sides + gap) <= gap / 4).any(axis=0)
    return (below < -gap / 2) | (at_a_faster_side & ~at_a_side), gap
