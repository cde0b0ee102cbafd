"""Whether a wall-time step stays (pure): a step that a later one takes back, or a run of
commits back at the level before, is transient (`excursions`, `comes_back`), and so is one
after the first few commits where the series' spells reach as far (`at_the_oldest_end`); a
step at the newest end is pending until the series says more (`pending`).

A spell (a level that a later step leaves the way it came) is transient; when it does not
come all the way back, the net change is a step somewhere in the spell (`excursions`). SPELL
and SPELL_HEIGHT were measured on three noise histories of 200 commits recorded on this VM
(benchmarks/perf_history_detection.py).

At the newest end nothing yet tells a shared runner's slow nights from a regression: both
are a level that has not come back *yet*. A step there is listed, but pending (no gate, not
a step to act on) until enough commits hold it, or `--confirm` re-measures it. Enough is
`min_level` commits (inside a series a level that short is a spell), and more where the
series itself shows longer spells: if before the step it went as far out for as many
commits as have come since, and came back, the step may be another such spell. A step with
fewer than `min_level` commits after it is not held back where no commit before it ever
stood SPELL_SHARE of its height out: that series has shown no spell that could reach it
(scikit-image's `time_moments_central`, +290 % at its fourth-newest release in a series
whose commits never strayed 3 %, had waited as pending where asv reports it).

Pending, measured (benchmarks/perf_history_detection.py, every position,
docs/performance.md): beside a busy neighbour, whose series have slow spells of 6-22
commits, false steps per series 0.039 -> 0.011 (asv's 0); astropy's results and numpy's and
xarray's releases the same to the last digit; the idle noise history's 25 / 50 % steps found
39.0 / 56.2 -> 38.0 / 55.8 % (pending instead).
"""
from __future__ import annotations

import dataclasses
import math
from typing import Callable, Sequence

import numpy as np

from benchkit.core.history.noise import level_filter, outliers
from benchkit.core.history.placement import median, runs_of
from benchkit.core.history.series import Point, values_at_one_speed
from benchkit.core.history.step import Step

SPELL = 30          # a level this many commits long or shorter, left the way it came, is a spell
SPELL_HEIGHT = 2.0  # ... when it stands this many times its net change from the level before
OLDEST_LEVELS = 2   # the first level, come back to after more than a SPELL: this many levels long
BACK_RUN = 6        # commits whose median at the level before a slower step takes it back ...
BACK_WITHIN = 60    # ... starting within this many commits after it ...
BACK_SHARE = 0.25   # ... to within this share of the step (and the least change reported)
RELAND_BEFORE = 10  # ... unless this many commits or more at the level after stand before
RELAND_AFTER = 30   # ... and this many after its commits back (a revert, then a reland)
DIP = 12            # a level back shorter than this (or than the levels out either side),
                    # then out again past a SPELL: a dip
NEWEST_REACH = 30     # commits after a step within which the series' spells may hold it
SPELL_SHARE = 0.5     # a spell this share of a step's height out stands as far out as it


def stood_out(logs: np.ndarray, level: float, height: float) -> np.ndarray:
    """Which commits of `logs` (log values) stood more than SPELL_SHARE of `height` (log;
    its sign the side) beyond `level`."""
    return (logs - level) * math.copysign(1.0, height) > SPELL_SHARE * abs(height)


def longest_spell(logs: np.ndarray, level: float, height: float) -> int:
    """The most commits in a row of `logs` that `stood_out` and came back (a run still out
    at the end of `logs` has not come back and does not count)."""
    out = stood_out(logs, level, height)
    return max((end - first for first, end in runs_of(out) if end < len(out)), default=0)


def pending(points: Sequence[Point], steps: list[Step], min_level: int, lookback: int
            ) -> list[Step]:
    """The steps, with those at the newest end of `points` that may yet be a spell marked
    pending (module docstring): fewer than `min_level` commits after the step, unless no
    commit since the last step that stays (`min_level` of them at least) stood SPELL_SHARE of
    its height out; or at most NEWEST_REACH commits after it, and no more than the longest
    spell (`longest_spell`, in the level-filtered log values, `noise.level_filter`) between
    the last step before it that stays (not transient; at most `lookback` commits back: the
    commits judged together) and it, measured from that stretch's median."""
    if not steps:
        return []       # most series: no index of their commits to build
    index = {p.commit.sha: i for i, p in enumerate(points)}
    logs = raw = None
    if any(len(points) - index[s.commit.sha] <= NEWEST_REACH for s in steps):
        values = values_at_one_speed(points)
        if len(values) > 1 and np.all(values > 0):    # log values: a point at 0 is left out
            raw = np.log(values)
            logs = level_filter(raw, outliers(raw))[0]
    out, before = [], 0
    for step in steps:
        at = index[step.commit.sha]
        after = len(points) - at
        height = math.log(step.after / step.before)
        if not step.transient and after < min_level:
            stretch = None if raw is None else raw[max(before, at - lookback):at]
            if stretch is None or len(stretch) < min_level or np.any(
                    stood_out(stretch, median(stretch), height)):
                step = dataclasses.replace(step, pending=True)
            else:
                step = dataclasses.replace(step, evidence=step.evidence + (
                    "; not pending: no commit before it stood half as far out"))
        elif not step.transient and logs is not None and after <= NEWEST_REACH:
            level = logs[max(before, at - lookback):at]
            spell = longest_spell(level, float(np.median(level)), height) if (
                len(level) > after) else 0
            if spell >= after:
                step = dataclasses.replace(step, pending=True, evidence=step.evidence + (
                    f"; pending: {after} commits after it, and before it a spell of {spell} "
                    "commits as far out came back (more commits, or --confirm, settle it)"))
        out.append(step)
        before = before if step.transient else at
    return out


def at_the_oldest_end(points: Sequence[Point], steps: list[Step], min_level: int,
                      lookback: int) -> list[Step]:
    """The steps, with the first that stays marked transient where it has fewer than
    `min_level` commits before it, at the oldest end of `points`, and a commit after it
    (before the next step that stays, at most `lookback`) stood SPELL_SHARE of its height
    out towards them: nothing before a series tells whether its first commits were a
    spell, and this series has spells that reach as far. The mirror of `pending`, which
    does not hold back a step at the newest end that no spell of the series reaches.
    Measured (benchmarks/perf_history_detection.py, every position, docs/performance.md):
    xarray's releases 0.0166 -> 0.0112 false steps a series (asv 0.0123), the third noise
    history 0.0392 -> 0.0296, recall within 0.5 points; every real regression asv reports
    still named (scipy's four releases in, astropy's three commits in). A stretch of 4 or
    6 commits at the oldest end for a level instead lost scipy's or astropy's."""
    stays = [k for k, step in enumerate(steps) if not step.transient]
    # only the first few commits are looked up (most series: none, no index of them all)
    at = next((i for i, p in enumerate(points[:min_level])
               if stays and p.commit.sha == steps[stays[0]].commit.sha), None)
    if at is None:
        return steps
    values = values_at_one_speed(points)
    if not np.all(values > 0):     # log values: a point at 0 is left out
        return steps
    first = stays[0]
    # up to the next step that stays, within `lookback` (only those commits are looked up)
    after = points[at:at + lookback]
    end = next((at + i for i, p in enumerate(after) if len(stays) > 1
                and p.commit.sha == steps[stays[1]].commit.sha), at + len(after))
    stretch = np.log(values[at:end])
    # towards the commits before it: the other side of the step
    height = -math.log(steps[first].after / steps[first].before)
    if not np.any(stood_out(stretch, median(stretch), height)):
        return steps
    out = list(steps)
    out[first] = dataclasses.replace(steps[first], transient=True, evidence=(
        steps[first].evidence + f"; transient: only {at} commits before it, at the oldest "
        "end, and commits after it stood half as far out towards them (a spell there cannot "
        "be told from a level)"))
    return out


def at_the_ends(points: Sequence[Point], steps: list[Step], min_level: int, lookback: int
                ) -> list[Step]:
    """The steps as `at_the_oldest_end` and then `pending` mark them: what a series' two
    ends cannot tell yet."""
    return pending(points, at_the_oldest_end(points, steps, min_level, lookback), min_level,
                   lookback)


def excursions(steps: list[Step], logs: np.ndarray, positions: list[int], effect: float,
               reach: tuple[float, float] = (math.inf, math.inf),
               net_change: Callable[[int, int], tuple[float, float, str] | None] = (
                   lambda i, j: (math.nan, math.nan, "")),
               back_within: Callable[[int, int], float] | None = None,
               min_level: int = 0) -> list[Step]:
    """The steps (at `positions` in `logs`), with those that a later step takes back marked
    transient: a shared runner's slow spells look like that, and so does a change reverted
    later; neither is a step a team can act on now (asv reports neither).

    - Back to within `effect` (log) of the level before: the step out, the step back and
      every step between (a busy spell that varies in height, measured: a neighbour that
      took one core, then both) are transient. Where `back_within` is given (noise without
      spells: the change that tells levels of n and m commits apart, as a step must clear),
      within that of it: there the median of a long level is known well, and with 19 %
      noise a -24 % level of 100 commits and a +77 % step after it (a net +35 %) read as a
      dip that came back, two steps taken back (the idle noise history, every position: 50
      % steps found 52.4 -> 55.7 %, false steps 0.0232 -> 0.0247 a series, asv's 25.5 %
      and 0.0301; for spelly noise too, beside the busy neighbour false steps rose more).
      Back to a level of `min_level` commits or more (or to the newest commits, where the
      series stands now), not to a few commits inside the series; and from the first few
      commits of a series (fewer than OLDEST_LEVELS times `min_level`) only for a spell (at
      most SPELL commits out): the sixth VM beside a busy neighbour starts with 8 commits of
      a busy spell, and a +50 % step at 120 back to their level was taken for the end of a
      dip 111 commits long (`time_numpy_sum`; every position, 50 % steps found 34.8 -> 40.1
      %, false steps 0.0382 -> 0.0395 a series; the idle and third histories, astropy's
      results the same); and where those are `min_level` or more (a level anywhere else),
      only for a spell shorter than them (the shorter excursion is the one that came back;
      fewer, as astropy's three commits before 8 at 87x, and the spell is what follows): a
      +50 % step 26 commits after the same 8 was paired with their end (every position,
      beside the busy neighbour 50 % steps found 59.66 -> 60.12 %, asv 59.72; false steps
      0.0396 -> 0.0403 a series, faster ones 0.0635 -> 0.0661; the idle and third histories,
      astropy's results the same). The fifth VM's third noise history (docs/performance.md),
      time_dict_build: three commits at 0.55x, 56 at the median, three at 0.55x, the rest at
      the median; the first step was paired with
      the second, and the third (the three fast commits' end) named; a +50 % step 27
      commits before the three fast commits was taken back by them (every position, with
      the half-run rule of `comes_back`: false steps a series 0.0584 -> 0.0421; the
      histories end to end 0.0379 / 0.0454 / 0.0535 -> 0.0398 / 0.0479 / 0.0553; drifting
      noise, PHI 0.6, 0.0412 -> 0.0424; numpy's releases 0.0057 -> 0.0059; the other sets
      the same).
      A level back of fewer than DIP commits, after which the series goes out again (to
      within that of the level it came back from) for more than a SPELL, is a dip: its two
      steps are transient and the step out stays. A machine that runs a snippet at two
      speeds runs it, after a step as high as their gap, at the level before in clusters
      (the sixth VM beside a busy neighbour, `time_dict_build` +50 % at commit 30: 37
      commits at 1.5x, 7 mostly at 0.85-1.07x, 126 at 1.5x; the step was undone by the 7),
      and a revert landed again a few commits later is one too (the first landing named,
      not the reland). Measured (every position, benchkit alone, without -> with it):
      beside the busy neighbour 50 % steps found 45.8 -> 46.4 %, false steps 0.0396 ->
      0.0306 a series; the idle history's false steps 0.0192 -> 0.0183; the third's the same.
      So is a longer level back that is shorter than the levels out on either side (the
      shorter excursion is the one that came back, as brackets pair): the joined noise
      histories' `time_numpy_sum` ran mostly at the machine's faster speed for 47 commits,
      and a +25 % step 389 commits before them was taken for undone by them, their end
      named (the histories joined third, busy, idle, 400 trials: false steps a series
      0.0491 -> 0.0342 as each history is scored, 0.0572 -> 0.0429 with their level
      changes taken out; each history alone, every position, and astropy's the same).
    - Back the way it came, but not all the way, after a spell of at most SPELL commits
      that stands SPELL_HEIGHT times higher than the net change: the steps out and between
      are transient, and the step back becomes the net change, not placed: it may lie
      anywhere in the spell. The net change must hold as a step of its own between the
      levels either side of the spell (`net_change(i, j)`, steps i and j the spell's
      ends: its interval and how it was judged, None where it does not hold); where it
      does not, the spell is transient as a whole. A step injected next
      to a busy spell (this VM's noise histories: time_numpy_dot +40 % to 2.8x for up to
      30 commits) was otherwise named at the spell's far end: false steps per series (a
      span that misses the step counted as one) went from 0.164 to 0.053 beside a busy
      neighbour and from 0.039 to 0.031 on a quiet history (benchmarks/
      perf_history_detection.py). A regression partly fixed within SPELL commits is
      reported the same way: its net change, in a span to bisect.
    - Only where the spell stands no further out than single commits of the series reach
      elsewhere (`reach`: up, down; log): that far out, a spell may be the series' noise in
      a cluster; further out it is a change to the code. astropy's np.sin of a Quantity, 12x
      slower for eight commits, then 2.2x, on a laptop whose single commits stray 2x at
      most, was two changes to its code; time_numpy_dot beside a busy neighbour has single
      commits 350x slow."""
    edges = [0, *positions, len(logs)]
    level = [median(logs[a:b]) if b > a else math.nan
             for a, b in zip(edges, edges[1:])]
    undone: dict[int, int] = {}
    net: dict[int, tuple[int, tuple[float, float, str]]] = {}   # step back -> step out, net
    for i in range(len(positions)):
        if i in undone:
            continue
        side = math.copysign(1, level[i + 1] - level[i])
        for j in range(i + 1, len(positions)):
            if j in undone or (level[j] - level[i]) * side <= 0:
                break           # the excursion ended some other way
            within = effect if back_within is None else back_within(
                edges[i + 1] - edges[i], edges[j + 2] - edges[j + 1])
            if abs(level[j + 1] - level[i]) <= within:
                # the oldest level needs OLDEST_LEVELS times min_level (a busy spell at
                # the start is a short level)
                needed = min_level * OLDEST_LEVELS if i == 0 else min_level
                left, away = edges[i + 1] - edges[i], positions[j] - positions[i]
                # from a short first level of min_level or more, only a shorter spell
                from_level = left >= needed or (away <= SPELL and (
                    i > 0 or left < min_level or away < left))
                to_level = edges[j + 2] - edges[j + 1] >= min_level or j + 1 == len(positions)
                if from_level and to_level and _dip(i, j, edges, level, within):
                    undone |= {j: j + 1, j + 1: j}
                elif from_level and to_level:
                    undone |= {k: j for k in range(i, j)} | {j: i}
                break
            height = min((level[k] - level[i]) * side for k in range(i + 1, j + 1))
            if ((level[j + 1] - level[j]) * side < 0 and positions[j] - positions[i] <= SPELL
                    and SPELL_HEIGHT * abs(level[j + 1] - level[i]) < height
                    and max((level[k] - level[i]) * side for k in range(i + 1, j + 1))
                    <= reach[0 if side > 0 else 1]):
                undone |= {k: j for k in range(i, j)}
                held = net_change(i, j)
                if held is not None:
                    net[j] = (i, held)
                else:
                    undone[j] = i
                break
    out = list(steps)
    for i, j in undone.items():
        other = steps[j].commit.sha[:12]
        why = (f"a spell left at {other}, where its net change is" if j in net else
               f"undone by {other}" if j > i else f"undoes {other}")
        out[i] = dataclasses.replace(steps[i], transient=True,
                                     evidence=steps[i].evidence + f"; transient: {why}")
    for j, (i, (low, high, how)) in net.items():
        before, after = steps[i].before, steps[j].after
        out[j] = dataclasses.replace(
            steps[j], before=before, after=after, change=after / before - 1, ci_low=low,
            ci_high=high, span=(steps[i].previous, steps[j].commit),
            evidence=f"{how}; the net change of a spell from {steps[i].commit.sha[:12]} "
            f"({steps[i].change:+.1%}, transient): not placed, it may lie anywhere in the "
            "spell (bisect it, or --confirm re-measures its ends)")
    return out


def _dip(i: int, j: int, edges: list[int], level: list[float], within: float) -> bool:
    """Whether the level that step j comes back to (from step i's) is a dip: the step after
    it goes back out, to within `within` of the level step j left, for more than a SPELL,
    and it is fewer than DIP commits, or shorter than the levels out on either side."""
    if j + 2 >= len(level) or abs(level[j + 2] - level[j]) > within:
        return False
    back, out = edges[j + 2] - edges[j + 1], edges[j + 3] - edges[j + 2]
    return out > SPELL and (back < DIP or back < min(out, edges[j + 1] - edges[i + 1]))


def comes_back(raw: np.ndarray, at: int, before: float, after: float,
               effect: float, independent: bool = False) -> int | None:
    """Where the level before a slower step (`before` -> `after`, log, first commit after it
    `at`) comes back: in the first run of BACK_RUN commits, starting within BACK_WITHIN
    commits after the step, whose median lies within `effect` (the least change reported,
    log) and BACK_SHARE of the step of `before`, the first commit that does; None where
    there is no such run. Timing noise only slows runs down, so a run of commits back at
    the faster level is the code's speed: a revert, a fix, or a machine that runs the
    snippet at two speeds in clusters that do not read as levels (`excursions` sees only
    levels). Measured on this VM's idle noise history (benchmarks/
    perf_history_detection.py, every position): false steps per series 0.039 -> 0.015
    (asv 0.015), 25 % steps found 5.5 -> 2.2 % (asv 5.2), 50 % steps 24.9 -> 24.4 % (asv
    20.0); the real histories' figures did not move. Without the BACK_WITHIN bound false
    steps were 0.010 and 25 % steps 0.7 %; the bound also keeps a chance run of fast
    commits hundreds later from taking back a regression of a long history. Only the level
    before: a commit far below it (astropy's unit_to, 10x faster 12 commits after a +52 %
    step) is another change, not this one undone. Where the noise is `independent` (two-
    sided, no spells: noise.independent) a run of fast commits is chance as often as code,
    and the run must stand a whole `effect` below the level after as well: on such series
    of 200 and 1,000 commits chance runs had taken back 3 in 40 of the 10 % steps found
    (5 % noise) and half the 5 % steps. Nor a run with two commits more than `effect` below
    the level before: a median of six between a fast cluster and the level after lands on
    the level before with no commit there (time_numpy_dot's OpenBLAS threads, 0.66x in
    three commits after a +50 % step: the noise histories end to end, 50 % steps found
    66.2 -> 68.5 %, when the run's lower median was held; two such commits, not three: in
    the fourth VM's histories end to end, four fast commits of 0.5-0.7x and two at the
    level after had made a run of six whose lower median was there, 50 % steps 30.5 / 33.5
    / 32.2 -> 31.8 / 34.8 / 33.8 %, false steps the same but one in 1,608 series, each
    history alone the same). Where the noise has spells, half the run's commits must be
    at the level before (within the band), not a median that falls there between faster and
    slower commits: the fifth VM's third noise history, where most commits run at one
    speed and the rest at 0.3-0.9x of it, after a +50 % step its 0.55x and 0.64x commits at
    0.83x and 0.97x of the level before (every position: 25 / 50 % steps found 2.4 / 13.7
    -> 4.5 / 19.0 %, false steps 0.0584 -> 0.0610 a series alone, 0.0421 with the levels
    rule of `excursions`; numpy's releases, false steps 0.0057 -> 0.0059; the other sets
    the same). Nor a revert between two clean stretches at the level after
    (`relanded`). Where the level before already ran as far below itself, the run back
    is the machine's own; where it ran at a faster speed too and the run does not, the run
    is not the level before (`two_speed.own_speeds`, which the caller asks)."""
    if after <= before:
        return None
    later = raw[at + 1:at + BACK_WITHIN + BACK_RUN]
    if len(later) < BACK_RUN:
        return None
    band = back_band(before, after, effect)
    close, medians = runs_at(later, before, band, effect, not independent)
    if independent:
        close &= after - medians >= effect
    back = np.flatnonzero(close)
    if not len(back) or relanded(raw, at, at + 1 + int(back[0]), before, after):
        return None
    # the run's median is at the level before; name its first commit that is too
    run = later[back[0]:back[0] + BACK_RUN]
    return at + 1 + int(back[0]) + int(np.argmax(np.abs(run - before) <= band))


def back_band(before: float, after: float, effect: float) -> float:
    """How near the level before (log) a run back must stand: BACK_SHARE of the step
    (`before` -> `after`), and no more than the least change reported (`effect`)."""
    return min(BACK_SHARE * (after - before), effect)


def runs_at(values: np.ndarray, level: float, band: float, effect: float, half: bool
            ) -> tuple[np.ndarray, np.ndarray]:
    """For each run of BACK_RUN commits of `values` (log), whether it stands at `level`, and
    its median: the median within `band` of it, and not there only because part of the run
    is a reportable change (`effect`) below it (a machine's fast cluster: another speed, not
    the level); where `half`, half the run's commits within `band` too, not a median that
    falls there between faster and slower commits."""
    runs = np.sort(np.lib.stride_tricks.sliding_window_view(values, BACK_RUN), axis=1)
    medians = (runs[:, (BACK_RUN - 1) // 2] + runs[:, BACK_RUN // 2]) / 2
    close = (np.abs(medians - level) <= band) & (runs[:, 1] >= level - effect)
    if half:
        close &= (np.abs(runs - level) <= band).sum(axis=1) >= BACK_RUN // 2
    return close, medians


def relanded(raw: np.ndarray, at: int, run: int, before: float, after: float) -> bool:
    """Whether the commits back at the level before (`before`, log) from the run starting at
    `run` are a revert between two clean stretches at the level after (`after`): RELAND_BEFORE
    commits or more from the step (first commit after it `at`) to them and RELAND_AFTER after
    them, not one of them nearer the level before. A regression reverted for a few commits
    and landed again (a spell: too short a level to be named) was taken back by its revert,
    and nothing was named while the series stood slower to its end. A machine's fast runs
    among its slow ones leave no such clean stretches: on every recorded history of this
    VM, every position, the steps found were the same to the last case
    (benchmarks/perf_history_detection.py, docs/performance.md)."""
    below = raw <= (before + after) / 2
    first = run + int(np.argmax(below[run:]))
    last = first + int(np.argmax(~below[first:])) if not below[first:].all() else len(raw)
    return (first - at >= RELAND_BEFORE and len(raw) - last >= RELAND_AFTER
            and not below[at:first].any() and not below[last:last + RELAND_AFTER].any())
