"""Steps at the newest end of a wall-time series: pending until the series says more (pure).

At the newest end nothing yet tells a shared runner's slow nights from a regression: both
are a level that has not come back *yet*. A step there is listed, but pending (no gate, not
a step to act on) until enough commits hold it, or `--confirm` re-measures it. Enough is
`min_level` commits (inside a series a level that short is a spell), and more where the
series itself shows longer spells: if before the step it went as far out for as many
commits as have come since, and came back, the step may be another such spell.

Measured (benchmarks/perf_history_detection.py, every position, docs/performance.md):
beside a busy neighbour, whose series have slow spells of 6-22 commits, false steps per
series 0.039 -> 0.011 (asv's 0); astropy's results and numpy's and xarray's releases the
same to the last digit; the idle noise history's 25 / 50 % steps found 39.0 / 56.2 ->
38.0 / 55.8 % (pending instead).
"""
from __future__ import annotations

import dataclasses
import math
from typing import Sequence

import numpy as np

from benchkit.core.history.noise import level_filter, outliers
from benchkit.core.history.series import Point, values_at_one_speed
from benchkit.core.history.step import Step

NEWEST_REACH = 30     # commits after a step within which the series' spells may hold it
SPELL_SHARE = 0.5     # a spell this share of a step's height out stands as far out as it


def longest_spell(logs: np.ndarray, level: float, height: float) -> int:
    """The most commits in a row of `logs` (log values) that stood more than SPELL_SHARE of
    `height` (log; its sign the side) beyond `level` and came back (a run still out at the
    end of `logs` has not come back and does not count)."""
    out = (logs - level) * math.copysign(1.0, height) > SPELL_SHARE * abs(height)
    longest = run = 0
    for beyond in out.tolist():
        longest, run = (longest, run + 1) if beyond else (max(longest, run), 0)
    return longest


def pending(points: Sequence[Point], steps: list[Step], min_level: int, lookback: int
            ) -> list[Step]:
    """The steps, with those at the newest end of `points` that may yet be a spell marked
    pending (module docstring): fewer than `min_level` commits after the step; or at most
    NEWEST_REACH commits after it, and no more than the longest spell (`longest_spell`, in
    the level-filtered log values, `noise.level_filter`) between the last step before it
    that stays (not transient; at most `lookback` commits back: the commits judged together)
    and it, measured from that stretch's median."""
    if not steps:
        return []       # most series: no index of their commits to build
    index = {p.commit.sha: i for i, p in enumerate(points)}
    logs = None
    if any(min_level <= len(points) - index[s.commit.sha] <= NEWEST_REACH for s in steps):
        values = values_at_one_speed(points)
        if len(values) > 1 and np.all(values > 0):    # log values: a point at 0 is left out
            raw = np.log(values)
            logs = level_filter(raw, outliers(raw))[0]
    out, before = [], 0
    for step in steps:
        at = index[step.commit.sha]
        after = len(points) - at
        if not step.transient and after < min_level:
            step = dataclasses.replace(step, pending=True)
        elif not step.transient and logs is not None and after <= NEWEST_REACH:
            level = logs[max(before, at - lookback):at]
            spell = longest_spell(level, float(np.median(level)), math.log(
                step.after / step.before)) if len(level) > after else 0
            if spell >= after:
                step = dataclasses.replace(step, pending=True, evidence=step.evidence + (
                    f"; pending: {after} commits after it, and before it a spell of {spell} "
                    "commits as far out came back (more commits, or --confirm, settle it)"))
        out.append(step)
        before = before if step.transient else at
    return out
