"""Where a wall-time step lies, and whether it stays: one commit, a span the data cannot
narrow, or a spell that comes back (pure).

A step found on a shared runner's series is sometimes clear in size and unclear in place:
a slow spell of a few commits next to it, or a short real stretch, fits about as well on
either side. Naming one commit there blames the wrong change (on real series with injected
steps, most of benchkit's wrong steps were right-sized steps named 3-8 commits away). So
the cuts near a step are scored as two levels each (least absolute deviation from each
side's median, on the log values levels were found in: the lower envelope where the noise
is one-sided, else the raw values), and every cut that fits within SLACK times the
series' noise of the best one is a place the step may be. When such a cut is SEPARATION or
more commits from the best, or when none is within a commit of the step's own, the step
is *not placed*: it is reported with the span of those cuts, to bisect or re-measure, and is
not a step at one commit. Where the noise has no spells (a quiet machine's) the chance that
a step lies at each commit is known, each cut as likely as its least-squares fit: it places.

A spell (a level that a later step leaves the way it came) is transient; when it does not
come all the way back, the net change is a step somewhere in the spell (`excursions`).

SLACK, REACH and SEPARATION were measured, not picked: benchmarks/perf_history_detection.py
scores placed steps beside asv's on five sets of real series (results/history_detection*);
LONG_SLACK, LONG_SEPARATION, SPELL and SPELL_HEIGHT on three noise histories of 200 commits
recorded on this VM; PLACED_MASS, CREDIBLE and TAME on drawn series without spells.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Callable, Sequence

import numpy as np

from benchkit.core.history.step import Step

REACH = 10          # commits on either side of a step whose cuts are scored
SLACK = 5.0         # a cut this many noises (of absolute deviation) from the best still fits
LONG_SLACK = 4.0    # ... between two long levels, whose medians a cut barely moves
SEPARATION = 4      # a fitting cut this many commits from the best leaves a step unplaced
LONG_SEPARATION = 5  # ... between two long levels
SHORT_SERIES = 60  # a series of at most this many commits ...
SHORT_SLACK = 9.0  # ... fits a cut within this many noises of the best
WINDOW = 30         # commits on either side that a cut is scored on
PLACED_MASS = 0.6   # where the noise has no spells: a step is placed where this share ...
PLACED_WITHIN = 2   # ... of the likelihood of its place lies this close to the best cut,
CREDIBLE = 0.95     # ... else its span holds this share of it
TAME = 3.0          # ... on values whose commits stray at most this many noises,
NORMAL_SHARE = 0.05  # ... where no more than this share strayed further (near normal noise)
FLOOR_QUANTILE = 0.25  # a level's floor: this quantile of its commits ...
FLOOR_SHARE = 0.35  # ... and a commit below this share of the way to the other's is fast
SPELL = 30          # a level this many commits long or shorter, left the way it came, is a spell
SPELL_HEIGHT = 2.0  # ... when it stands this many times its net change from the level before
BACK_RUN = 6        # commits whose median at the level before a slower step takes it back ...
BACK_WITHIN = 60    # ... starting within this many commits after it ...
BACK_SHARE = 0.25   # ... to within this share of the step (and the least change reported)


def median(values: np.ndarray) -> float:
    """np.median of a 1-D run of finite values, bit for bit (nan where empty), without its
    checks: 5x faster on the short runs a series is judged on, and most of its medians are
    of such runs."""
    ordered = np.sort(values)
    n = len(ordered)
    if not n:
        return math.nan
    return float(ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2)


def refined(logs: np.ndarray, start: int, at: int, end: int, reach: int = 2,
            costs: Callable[[np.ndarray, Sequence[int]], Sequence[float]] | None = None) -> int:
    """The boundary near `at` that best splits logs[start:end] into two levels (least
    absolute deviation from each side's median, or `costs` (`least_squares`); of cuts
    within 1e-12, the first): the envelope moves a step by a commit."""
    cuts = range(max(start + 1, at - reach), min(end - 1, at + reach) + 1)
    best, best_cost = at, math.inf
    for cut, cost in zip(cuts, (costs or cut_costs)(logs[start:end],
                                                    [c - start for c in cuts])):
        if cost < best_cost - 1e-12:
            best, best_cost = cut, cost
    return best


def cut_costs(logs: np.ndarray, cuts: Sequence[int]) -> list[float]:
    """For each cut, the least absolute deviation of logs[:cut] and logs[cut:] from their
    own medians: the same figures as np.median and a sum per cut (checked bit for bit),
    with every cut's medians from one sort (8x faster: this was a fifth of the time of a
    noise series)."""
    ends = np.asarray(cuts, dtype=np.intp)
    if not len(ends):
        return []
    left = np.arange(len(logs))[None, :] < ends[:, None]
    rows = np.arange(len(ends))

    def medians(side: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        ordered = np.sort(np.where(side, logs[None, :], np.inf), axis=1)
        return (ordered[rows, (sizes - 1) // 2] + ordered[rows, sizes // 2]) / 2
    deviations = np.abs(logs[None, :] - np.where(
        left, medians(left, ends)[:, None], medians(~left, len(logs) - ends)[:, None]))
    return [float(deviations[i, :cut].sum() + deviations[i, cut:].sum())
            for i, cut in enumerate(ends.tolist())]


def least_squares(logs: np.ndarray, cuts: Sequence[int]) -> np.ndarray:
    """For each cut, the sum of squared deviations of logs[:cut] and logs[cut:] from their
    own means (from running sums, centred first so that no precision is lost)."""
    centred = logs - logs.mean()
    ends = np.asarray(cuts, dtype=np.intp)
    left = np.cumsum(centred)[ends - 1]
    right = -left                   # the centred values sum to zero
    return float(centred @ centred) - left * left / ends - right * right / (len(logs) - ends)


def tamed(logs: np.ndarray, deviations: np.ndarray, sigma: float) -> np.ndarray | None:
    """`logs` with each commit's deviation from its running median of five (`deviations`,
    noise.outliers) held within TAME noises (`sigma`): least squares is what places a step
    best in normal noise, and a rare far commit would pull it. None where more than
    NORMAL_SHARE of the commits stray further: that noise is not near normal, and its
    likelihood is not a cut's (drawn normal noise: 0.1-0.6 % of commits; Student's t with
    3 degrees of freedom: 2.4-3.6 %; time_numpy_dot's OpenBLAS speeds, 100x apart, on this
    VM: 18-23 %, and noise without spells in 1 of its 3 histories)."""
    far = np.abs(deviations) > TAME * sigma
    if far.mean() > NORMAL_SHARE:
        return None
    return logs - deviations + np.clip(deviations, -TAME * sigma, TAME * sigma)


def cut_likelihood(logs: np.ndarray, sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """Each cut of `logs` (1 to len - 1) and its likelihood as the place of one step between
    two levels in normal noise of `sigma` (log) from commit to commit: exp(-SSE / 2 sigma^2)
    of its least-squares fit, a flat prior over the cuts, the likelihoods summing to 1."""
    cuts = np.arange(1, len(logs))
    cost = least_squares(logs, cuts)
    weight = np.exp(-(cost - cost.min()) / (2 * sigma * sigma))
    return cuts, weight / weight.sum()


def likely_span(logs: np.ndarray, at: int, sigma: float) -> tuple[int, int] | None:
    """Where the noise is independent (each commit scatters on its own, normal in log):
    None where the step in `logs` (one step between two levels, `at` the first commit after
    it) is placed, else the span (first, last) it may lie in. The step is placed where
    PLACED_MASS of its `cut_likelihood` lies within PLACED_WITHIN commits of the best cut
    and that cut is `at` or next to it; else its span is the likeliest cuts that hold
    CREDIBLE of it. The share near the best cut is the chance that the step is there:
    benchmarks/perf_history_placement.py measures how often it is (results/
    history_placement.json), and perf_history_detection.py the steps found beside asv's."""
    if len(logs) < 2:
        return None
    cuts, weight = cut_likelihood(logs, sigma)
    best = int(cuts[np.argmax(weight)])
    if abs(best - at) <= 1 and weight[np.abs(cuts - best) <= PLACED_WITHIN].sum() >= PLACED_MASS:
        return None
    order = np.argsort(-weight, kind="stable")
    held = cuts[order[:int(np.searchsorted(np.cumsum(weight[order]), CREDIBLE)) + 1]]
    return int(min(held.min(), at)), int(max(held.max(), at))


def spans(logs: np.ndarray, positions: Sequence[int], sigma: float,
          long_level: int | None = None, independent: bool = False
          ) -> list[tuple[int, int] | None]:
    """For each step (`positions`: the first commit after each, ascending) None when it is
    placed, else (first, last): the step may be at any commit from `first` to `last`. Each
    is judged between its neighbouring steps, at most WINDOW commits either side; `sigma`
    is the series' noise (log scale). Between two levels longer than `long_level` commits a
    cut fits within LONG_SLACK noises, not SLACK: a few commits more or less barely move
    the median of either side, so the costs of the cuts scatter less (measured on three
    200-commit noise histories of this VM: 5 % steps placed 6-8 points more often, and
    misplaced no more often; benchmarks/perf_history_detection.py). There a step is left
    unplaced only where a cut LONG_SEPARATION commits off fits: once rare slow clusters no
    longer made levels (`noise.one_sided`), 5, not 4, found 5 % steps 3.5-6 points more
    often on the quiet history (now at or above asv's) for 0.001-0.004 more false steps per
    series, still below asv's on all three histories; 6 named more than asv's on the third.
    A step whose commit is more than one commit from every cut that fits is not placed
    either: the filtered values put it where the raw ones do not (a two-commit dip beside a
    step reads as a stretch half way up in the running median of three; measured: 8 fewer
    false steps in 15 runs of five sets, 6 of 24,000 steps found at a commit now spans).
    In a series of at most SHORT_SERIES commits (a project's releases) a cut fits within
    SHORT_SLACK noises: there a real dip of two or three releases beside a step fits it as
    well a few releases off. Measured on astropy's and numpy's real series (21-39 commits):
    numpy's false steps per series 0.009 / 0.014 / 0.013 -> 0.002 / 0.007 / 0.005 (asv's
    0.002 / 0.002 / 0.001), astropy's 0.002 / 0.004 / 0.002 -> 0.001 / 0 / 0; 9 is the
    largest slack whose recall stays at or above asv's at every size and seed (at 10,
    astropy's 10 % steps fell below); scipy's and xarray's releases, held out: 0.000 and
    0.001. The noise histories (200 commits) do not change. Where the noise is
    `independent` (noise.independent: no spells, so a level's every commit tells where it
    ends) a step is placed by the likelihood of each cut between its neighbours instead
    (`likely_span`, on `tamed` values)."""
    out: list[tuple[int, int] | None] = []
    edges = [0, *positions, len(logs)]
    for k, at in enumerate(positions):
        if independent:
            span = likely_span(logs[edges[k]:edges[k + 2]], at - edges[k], sigma)
            out.append(span and (edges[k] + span[0], edges[k] + span[1]))
            continue
        low = max(edges[k], at - WINDOW)
        high = min(edges[k + 2], at + WINDOW)
        stretch = logs[low:high]
        cuts = range(max(2, at - low - REACH), min(len(stretch) - 2, at - low + REACH) + 1)
        costs = dict(zip(cuts, cut_costs(stretch, cuts)))
        if not costs:
            out.append(None)
            continue
        best = min(costs, key=costs.__getitem__)
        long = long_level is not None and min(at - edges[k], edges[k + 2] - at) > long_level
        slack = LONG_SLACK if long else SHORT_SLACK if len(logs) <= SHORT_SERIES else SLACK
        fitting = [cut for cut, cost in costs.items() if cost - costs[best] < slack * sigma]
        separation = LONG_SEPARATION if long else SEPARATION
        # the commit judged stands apart from every cut that fits: the data puts the step
        # elsewhere (the lower envelope moves a step by one commit, no more)
        apart = min(abs(cut - (at - low)) for cut in fitting) > 1
        if not apart and all(abs(cut - best) < separation for cut in fitting):
            out.append(None)
        else:
            out.append((low + min(*fitting, at - low), low + max(*fitting, at - low)))
    return out


def excursions(steps: list[Step], logs: np.ndarray, positions: list[int], effect: float,
               reach: tuple[float, float] = (math.inf, math.inf),
               net_change: Callable[[int, int], tuple[float, float, str] | None] = (
                   lambda i, j: (math.nan, math.nan, "")),
               back_within: Callable[[int, int], float] | None = None) -> list[Step]:
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
    history alone the same)."""
    if after <= before:
        return None
    later = raw[at + 1:at + BACK_WITHIN + BACK_RUN]
    if len(later) < BACK_RUN:
        return None
    runs = np.sort(np.lib.stride_tricks.sliding_window_view(later, BACK_RUN), axis=1)
    low, high = runs[:, (BACK_RUN - 1) // 2], runs[:, BACK_RUN // 2]
    medians = (low + high) / 2
    band = min(BACK_SHARE * (after - before), effect)
    # at the level before, and not there only because part of the run is a reportable
    # change below it (a machine's fast cluster: another speed, not the level before)
    second_fastest = runs[:, 1]
    close = (np.abs(medians - before) <= band) & (second_fastest >= before - effect)
    if independent:
        close &= after - medians >= effect
    back = np.flatnonzero(close)
    if not len(back):
        return None
    # the run's median is at the level before; name its first commit that is too
    run = later[back[0]:back[0] + BACK_RUN]
    return at + 1 + int(back[0]) + int(np.argmax(np.abs(run - before) <= band))


def floor_spans(raw: np.ndarray, positions: Sequence[int], slower: Sequence[bool]
                ) -> list[tuple[int, int] | None]:
    """For each step (`positions`, as in `spans`; `slower`: whether each is a slowdown) a
    span (first, last) where the series' floors say the step may lie elsewhere, else None.
    Noise only slows runs: a commit of the old level may run slow, one of the new level
    hardly ever runs fast. So a commit within REACH of a slower step that runs below its
    two floors' FLOOR_SHARE line (the floor: the FLOOR_QUANTILE of each side, WINDOW
    commits at most) is of the old level: where it comes after the step, the step lies
    after it, unless the commits between sit at the new level (not above its upper
    quartile: then the fast commit is the odd one, as on astropy's laptop); where it comes
    SEPARATION or more commits before the step, the commits between may be either level.
    A faster step likewise with the first commit below the line. Measured (benchmarks/
    perf_history_detection.py, 400 trials): numpy's releases 0.0043 -> 0.0024 false steps a
    series (asv 0.0030): a real step put in beside a slow spell of releases was named at the
    spell's start, before a release at the old speed; beside a busy neighbour, as recorded,
    0.0187 -> 0.0162; recall and false steps of every other set within 0.3 points."""
    out: list[tuple[int, int] | None] = []
    edges = [0, *positions, len(raw)]
    for k, at in enumerate(positions):
        before = raw[max(edges[k], at - WINDOW):at]
        after = raw[at:min(edges[k + 2], at + WINDOW)]
        if len(before) < 2 or len(after) < 2:
            out.append(None)
            continue
        old, new = (float(np.quantile(side, FLOOR_QUANTILE)) for side in (before, after))
        line = old + FLOOR_SHARE * (new - old) if slower[k] else new + FLOOR_SHARE * (old - new)
        fast = [i for i in range(max(edges[k], at - REACH), min(edges[k + 2], at + REACH))
                if raw[i] < line]
        if not fast:
            out.append(None)
            continue
        # the fast commit that bounds the step: the last of the old level, the first of the new
        bound = max(fast) + 1 if slower[k] else min(fast)
        between, level = (raw[at:bound - 1], after) if slower[k] else (raw[bound + 1:at], before)
        if len(between) and median(between) <= float(np.quantile(level, 0.75)):
            out.append(None)
            continue
        # inside the neighbouring steps, as every span
        first, last = max(min(at, bound), edges[k] + 1), min(max(at, bound), edges[k + 2] - 1)
        out.append(None if last - first < SEPARATION else (first, last))
    return out
