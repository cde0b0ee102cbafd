"""Whether a wall-time level changed (pure): the per-process evidence of the commits next to
a step (a level may move beyond the noise band while the processes measured on either side
say no change; then the step is not claimed), after the rank test every step passes
(core.decisions.rank_test). And a series a shared machine runs at two speeds, in clusters:
its flips as its noise (`flip_noise`), or the series read at its faster speed
(`two_speed`, `at_faster_speed_steps`)."""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from benchkit.core.decisions.verdicts import decide_runs
from benchkit.core.history import placement, transient
from benchkit.core.history.noise import noise_of
from benchkit.core.history.series import Point, Points, Series, commits_of
from benchkit.core.history.step import Step
from benchkit.core.measure.measurement import pooled_measurement

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


NEIGHBOURS = 5             # commits on each side whose processes confirm a time step


def evidence_decision(points: Sequence[Point], at: int, start: int, end: int,
                      evidence: Callable[[Point], Sequence[Any]], alpha: float,
                      noise: float):
    """The A/B decision (`verdicts.decide_runs`) between the processes of up to NEIGHBOURS
    commits before `at` and after it, within the level (start, end); None when either
    side has no stored processes."""

    def measurements(chosen):
        return [m for p in chosen for m in evidence(p) if m.processes]
    before = measurements(points[max(start, at - NEIGHBOURS):at])
    after = measurements(points[at:min(end, at + NEIGHBOURS)])
    if not before or not after:
        return None
    probes = [x for m in before + after for p in m.processes for x in p.probes]
    reference = float(np.median(probes)) if probes else None
    return decide_runs(pooled_measurement(before, reference),
                       pooled_measurement(after, reference), alpha=alpha, noise=noise)


GAPS = np.linspace(0.8, 2.0, 13)   # gaps between the speeds tried, in flip heights
MIXED = 0.1                 # a level with this share of its commits at each speed holds both
GAP_LIKE = 0.33             # a step this close to the gap (share of it) reads as a flip
FLIP_SPELL = 20            # ... and one the other way this close to a flip, the cluster's edge
TWO_SPEED_SLACK = 3.0       # a cut within this many commits' deviation of the best fits
TWO_SPEED_FIT = 0.8         # share of commits two speeds must fit to read fine levels' flips
SLOWER_QUANTILE = 0.75      # the quantile that stands for a two-speed series' slower runs
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


def at_faster_speed_steps(series: Series, raw: np.ndarray, read: TwoSpeed,
                          steps_in: Callable[[Series], list[Step]], sigmas: float
                          ) -> list[Step]:
    """The steps of a two-speed series (log values `raw`), found (`steps_in`) in its
    values at the faster speed (`read`: `two_speed_read`). A step about as high as the gap
    between the speeds (within GAP_LIKE of it, and within `sigmas` noises of the values at
    the faster speed: a height further from the gap is measured, not a flip) is a cluster
    of slower commits as much as a change, and is left out; so is a step the other way
    fewer than FLIP_SPELL commits from it, the cluster's other edge (the fold can take a
    real step for a change of speed: a +50 % step at commit 95 of this VM's noise beside a
    busy neighbour, the commits after it read as slower, was named as +198 % at a spell 13
    commits later, between a step up and a flip down; 15 of 108 false cases of that
    history, every position). A step the slower runs move against is left out
    (`slower_runs_disagree`: the machine's speeds met). Each other step is placed on the
    raw values, as two levels of two speeds each (`two_speed_cuts`): at the best cut, or not
    placed (a span) where cuts SEPARATION or more commits apart fit about as well. The
    folded values can put a step at the wrong commit: where a level after a step is as fast
    as the slower speed before it, the fold reads the commits next to the step with one
    faster speed for both sides (measured on this VM's idle history, benchmarks/
    perf_history_detection.py: false steps 0.0204 -> 0.0155 a series, all of them real
    steps named 3-8 commits away)."""
    points = series.points
    column = np.exp(read.folded).tolist()
    folded = dataclasses.replace(series, points=Points(
        commits_of(points), column, column, column, [1] * len(column), [1] * len(column)))
    index = {commit.sha: i for i, commit in enumerate(commits_of(points))}
    note = (f"; two-speed series ({int(read.slower.sum())} commits "
            f"{math.expm1(read.gap):.0%} slower): read at its faster speed")
    steps = steps_in(folded)
    positions = [index[step.commit.sha] for step in steps]
    # the noise bound: a +50 % step on this VM's idle history (gap 0.59, log), its folded
    # levels 6 % noisy, had a height 0.17 from the gap and was left out as a flip; every
    # position, 50 % steps 55.7 -> 63.0 % (asv 25.5), false 0.0186 -> 0.0189; joined, 50 %
    # 31.8 / 34.8 / 33.8 -> 34.0 / 36.0 / 35.5 %, false steps the same; no other set moved
    # (3 noises in place of 2.25: 60.1 %, 33.0 / 35.5 / 35.0 %)
    like = min(GAP_LIKE * read.gap, sigmas * noise_of(read.folded))
    flips = [step.placed and not step.transient and abs(
        abs(math.log(step.after) - math.log(step.before)) - read.gap) < like
        for step in steps]

    def edge_of_a_cluster(k: int) -> bool:
        # a step the other way within FLIP_SPELL commits of a flip: the level between them
        # is a cluster, and the step its other edge
        return any(0 <= j < len(steps) and flips[j] and abs(positions[j] - positions[k])
                   < FLIP_SPELL and (steps[j].change > 0) != (steps[k].change > 0)
                   for j in (k - 1, k + 1))

    out, kept = [], []          # the steps kept, and the index of each in `steps`
    for k, step in enumerate(steps):
        step = dataclasses.replace(step, evidence=step.evidence + note)
        # the commits between its neighbouring steps judge it
        at, low = positions[k], positions[k - 1] if k else 0
        high = positions[k + 1] if k + 1 < len(positions) else len(raw)
        if not step.transient and slower_runs_disagree(raw, at, low, high, step.change > 0):
            continue
        if step.placed and not step.transient:
            if flips[k] or edge_of_a_cluster(k):
                continue
            cuts = two_speed_cuts(raw, at, max(low, at - placement.WINDOW),
                                  min(high, at + placement.WINDOW), read.gap)
            if cuts is not None:
                best, first, last = cuts
                if last - first < placement.SEPARATION:
                    step = dataclasses.replace(step, previous=points[best - 1].commit,
                                               commit=points[best].commit)
                else:
                    step = dataclasses.replace(
                        step, span=(points[first - 1].commit, points[last].commit),
                        evidence=step.evidence + f"; not placed: {last - first + 1} "
                        "commits fit it at either speed")
        out.append(step)
        kept.append(k)
    return taken_back_past_a_flip(out, kept, [index[s.commit.sha] for s in out],
                                  sigmas * noise_of(read.folded))


def taken_back_past_a_flip(steps: list[Step], kept: Sequence[int], positions: Sequence[int],
                           effect: float) -> list[Step]:
    """`steps` (each the `kept`-th of those found at the faster speed, first commit at
    `positions`) with a step and the next one marked transient where steps between them
    were left out (a flip, a cluster's edge, one the slower runs move against), the next
    goes the other way within transient.SPELL commits, and the two add up to less than
    `effect` (log): an excursion that the left-out flip hid from `transient.excursions`,
    which paired them in the folded values, flip and all. Judged by the two steps' own
    changes, not by levels: around a flip's cluster the folded levels are read anew, and the
    level after the step back need not match the level before the step out. The three noise
    histories end to end, third first: `time_numpy_sum`, +22 % at a stretch of the busy
    history, a flip up and -22 % back 21 commits later, the first named in 66 of its 127
    false cases (every second position).
    Measured (benchmarks/perf_history_detection.py): joined false steps 0.0398 / 0.0479 /
    0.0553 -> 0.0398 / 0.0454 / 0.0547 a series, recall the same; every position, no set's
    figures moved."""
    out = list(steps)
    for i in range(len(out) - 1):
        a, b = out[i], out[i + 1]
        if (a.transient or kept[i + 1] == kept[i] + 1 or (a.change > 0) == (b.change > 0)
                or positions[i + 1] - positions[i] > transient.SPELL
                or abs(math.log1p(a.change) + math.log1p(b.change)) > effect):
            continue
        out[i] = dataclasses.replace(a, transient=True, evidence=a.evidence + (
            f"; transient: undone by {b.commit.sha[:12]} (past a flip left out)"))
        if not b.transient:
            out[i + 1] = dataclasses.replace(b, transient=True, evidence=b.evidence + (
                f"; transient: undoes {a.commit.sha[:12]}"))
    return out


def slower_runs_disagree(raw: np.ndarray, at: int, low: int, high: int, slower: bool
                         ) -> bool:
    """Whether the slower runs of a two-speed series (log values `raw`) moved against a
    step found at its faster speed, first commit `at` (slower: up): the SLOWER_QUANTILE of
    the raw values up to placement.WINDOW commits on each side, within (low, high), moved
    the other way. A change in the code moves runs at either speed alike; a machine whose
    two speeds meet (its slow runs end, the rest settle between the speeds: this VM's busy
    history's `time_json_dumps`, the same median before and after) raises its faster speed
    only. Measured (benchmarks/perf_history_detection.py, the three noise histories joined,
    three orders): false steps 0.051, 0.060, 0.058 -> 0.034, 0.049, 0.045 a series, 25 %
    steps found 17.5, 20.0, 19.5 -> 15.8, 19.5, 18.8 % (asv 10.8, 15.2, 18.0); every
    position of the idle history: 25 % steps 38.0 -> 32.9 % (asv 9.1; the lost ones are
    steps where the slow runs fell from about 60 to 20 % of the commits), false 0.0196 ->
    0.0186; no other set's recall or false steps moved. The median would not do: in a
    series about half slow it jumps between the speeds."""
    before = raw[max(low, at - placement.WINDOW):at]
    after = raw[at:min(high, at + placement.WINDOW)]
    if not len(before) or not len(after):
        return False
    moved = float(np.quantile(after, SLOWER_QUANTILE) - np.quantile(before, SLOWER_QUANTILE))
    return moved < 0 if slower else moved > 0


def two_speed_cuts(raw: np.ndarray, at: int, low: int, high: int, gap: float
                   ) -> tuple[int, int, int] | None:
    """Where a step of a two-speed series (first commit after it near `at`) lies, scored
    on raw[low:high] (log) as two levels at two speeds `gap` apart each (least absolute
    deviation of each commit from the nearer speed of its side): (best, first, last), the
    first commit after the step at the best cut and the first and last of those that fit
    within TWO_SPEED_SLACK times the mean deviation of a commit at the best cut (measured:
    1, 2, 3, 5 kept 31.9, 30.6, 27.6, 18.1 % of 25 % steps at their commit, and put
    0.0189, 0.0169, 0.0155, 0.0150 false steps a series, on this VM's idle history); None
    where no cut can be scored."""
    stretch = raw[low:high]
    cuts = range(max(2, at - low - placement.REACH),
                 min(len(stretch) - 2, at - low + placement.REACH) + 1)
    _, fits = faster_speeds(stretch, [side for cut in cuts for side in ((0, cut), (cut, len(
        stretch)))], np.array([gap]))
    costs = dict(zip(cuts, (fits[0::2, 0] + fits[1::2, 0]).tolist()))
    if not costs:
        return None
    least = min(costs.values())
    best = next(cut for cut, cost in costs.items() if cost <= least + TIE)
    slack = TWO_SPEED_SLACK * costs[best] / len(stretch)
    fitting = [cut for cut, cost in costs.items() if cost - costs[best] <= slack]
    return low + best, low + min(fitting), low + max(fitting)
