"""Two runs of log values compared by their ranks (pure): Mann-Whitney's test, whether the
runs overlap at all, and the interval of the shift between them; Holm's step-down for the
tests of a series. A history's steps pass this test (core/history/time_steps.py): ranks, so
one very slow commit weighs as one rank."""
from __future__ import annotations

import math

import numpy as np

from benchkit.core.decisions.verdicts import ratio_of


def shift_interval(before: np.ndarray, after: np.ndarray, alpha: float) -> tuple[float, float]:
    """The interval of the level change between two runs of log values, as relative changes
    (nan, nan where a side is empty), the one that goes with the Mann-Whitney test every step
    passes: Moses' distribution-free interval of Hodges-Lehmann's shift (all differences
    after - before, ranked C from either end, C from the normal approximation of U at
    `alpha`; the extremes where too few commits give none). Yuen's trimmed t gave 5 of 97
    steps of four real histories an interval through zero, each beside a level of 2-3
    commits; this gives none, and is narrower at the median."""
    if not len(before) or not len(after):
        return math.nan, math.nan
    from scipy import stats as scipy_stats
    differences = np.sort(np.subtract.outer(after, before).ravel())
    n, m = len(before), len(after)
    c = math.floor(n * m / 2 - scipy_stats.norm.ppf(1 - alpha / 2)
                   * math.sqrt(n * m * (n + m + 1) / 12))
    low, high = (differences[c - 1], differences[n * m - c]) if c >= 1 else (
        differences[0], differences[-1])
    return ratio_of(float(low)) - 1, ratio_of(float(high)) - 1


def rank_p(before: np.ndarray, after: np.ndarray) -> float:
    """Mann-Whitney's two-sided p of two levels, on the raw values (not the envelope, whose
    neighbours are not independent): ranks, so a very slow commit weighs as one rank.
    scipy.stats.mannwhitneyu's p bit for bit (tests/test_history_rank_test.py), its normal
    approximation without its checks (they took a quarter of a 200-commit series' steps)."""
    from scipy import special
    from scipy import stats as scipy_stats
    if len(before) < 2 or len(after) < 2:
        return 1.0
    n1, n2 = len(after), len(before)
    _, group, counts = np.unique(np.concatenate([after, before]), return_inverse=True,
                                 return_counts=True)
    if min(n1, n2) <= 8 and counts.max() == 1:     # short, no ties: the exact distribution
        return float(scipy_stats.mannwhitneyu(after, before, alternative="two-sided").pvalue)
    ranks = (np.cumsum(counts) - (counts - 1) / 2)[group]     # ties: their mean rank
    u = np.sum(ranks[:n1]) - n1 * (n1 + 1) / 2
    n, ties = n1 + n2, counts.astype(float)
    # in the order of scipy's operations (_mannwhitneyu._get_mwu_z): the same bits
    spread = np.sqrt(n1 * n2 / 12 * ((n + 1) - np.sum(ties ** 3 - ties) / (n * (n - 1))))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (np.maximum(u, n1 * n2 - u) - n1 * n2 / 2 - 0.5) / spread
    return float(np.clip(special.ndtr(-z) * 2, 0.0, 1.0))


def apart(before: np.ndarray, after: np.ndarray) -> bool:
    """Whether every commit on one side is above every commit on the other. Mann-Whitney's
    p cannot go below 2 / C(n + m, n): 0.0022 for 6 and 6 commits, 0.0055 for 3 and 11. Two
    sides that do not overlap at all are the strongest evidence so few commits can give,
    so they pass even where that floor is above alpha (measured: no more false steps)."""
    return len(before) >= 2 and len(after) >= 2 and (
        before.max() < after.min() or before.min() > after.max())


def holm_rejected(ps: list[float], alpha: float) -> list[bool]:
    """Whether each of a family of tests' `ps` is rejected by Holm's step-down at `alpha`:
    the smallest p against alpha / m, the next against alpha / (m - 1), ...; the first that
    fails, and every larger p, is not rejected. A series with several real steps does not
    lose one to the others, as with Bonferroni's alpha / m for all."""
    order = sorted(range(len(ps)), key=ps.__getitem__)
    rejected = [False] * len(ps)
    for k, i in enumerate(order):
        if ps[i] >= alpha / (len(ps) - k):
            break
        rejected[i] = True
    return rejected
