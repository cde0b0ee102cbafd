"""The steps of a series a shared machine runs at two speeds (pure): found in its values
read at the faster speed (`read.two_speed_read`), with the steps that are a change of
speed left out (a flip, a cluster's other edge, one the slower runs move against), each
placed on the raw values at two speeds (`two_speed_cuts`), and a step taken back past a
left-out flip marked transient (`taken_back_past_a_flip`)."""
from __future__ import annotations

import dataclasses
import math
from typing import Callable, Sequence

import numpy as np

from benchkit.core.history import placement, transient
from benchkit.core.history.noise import noise_of
from benchkit.core.history.series import Points, Series, commits_of
from benchkit.core.history.step import Step
from benchkit.core.history.two_speed.read import MIXED, TIE, TwoSpeed, faster_speeds

GAP_LIKE = 0.33             # a step this close to the gap (share of it) reads as a flip
FLIP_SPELL = 20            # ... and one the other way this close to a flip, the cluster's edge
TWO_SPEED_SLACK = 3.0       # a cut within this many commits' deviation of the best fits
SLOWER_QUANTILE = 0.75      # the quantile that stands for a two-speed series' slower runs
FAST_APART = 5.0            # a commit at one level's faster speed tells only where the two
#                             levels' faster speeds are this many noises apart
BOTH_SPEEDS = 0.5           # share of the higher level's commits a gap above its faster speed
#                             that makes a step as high as the gap no flip (and 3 at least)
ALL_SLOWER = 0.75           # ... that makes it so with no commit at the higher level itself


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
    history, every position) - unless both speeds moved (`both_speeds_moved`). A step the
    slower runs move against is left out
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
    folded_noise = noise_of(read.folded)      # the noise of the values at the faster speed
    like = min(GAP_LIKE * read.gap, sigmas * folded_noise)
    flips = [step.placed and not step.transient and abs(
        abs(math.log(step.after) - math.log(step.before)) - read.gap) < like
        and not both_speeds_moved(raw, at, positions[k - 1] if k else 0,
                                  positions[k + 1] if k + 1 < len(steps) else len(raw),
                                  step, read.gap)
        for k, (step, at) in enumerate(zip(steps, positions))]

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
                                  min(high, at + placement.WINDOW), read.gap,
                                  step.change > 0, folded_noise)
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
                                  sigmas * folded_noise)


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


def both_speeds_moved(raw: np.ndarray, at: int, low: int, high: int, step: Step,
                      gap: float) -> bool:
    """Whether a step found at the faster speed of a two-speed series (log values `raw`,
    first commit after it `at`, neighbouring steps' at `low` and `high`; speeds `gap`
    apart) moved both speeds: of the commits of its higher side (up to placement.WINDOW of
    them), at least BOTH_SPEEDS (and 3) run at that side's slower speed, a gap above the
    step's higher level, and at least read.MIXED (and 2) at the level itself (each within a
    quarter of the gap, as `read.two_speed` fits). A flip, a cluster of slower commits the
    fold left up, runs at the level before's slower speed and no higher; a code change as
    high as the gap moves the slower runs a gap above where the flip would end; a busy
    spell runs at neither (the third VM's `time_sorted`, 2.6-4x after a +50 % step).
    The sixth VM runs most snippets at 1x and, one commit in four, at 0.55-0.65x: a +50 %
    step (0.405, log) is within GAP_LIKE of such a gap (0.46-0.60), and was left out as a
    flip. Measured (benchmarks/perf_history_detection.py, every position, asv beside):
    50 % steps found 46.2 / 52.6 / 22.1 -> 70.3 / 67.9 / 34.8 % on that VM's idle, third
    and busy histories (asv 32.3 / 71.4 / 59.7), false steps 0.0166 / 0.0296 / 0.0378 ->
    0.0183 / 0.0303 / 0.0382 a series (asv 0.083 / 0.088 / 0.072); joined, 50 % steps
    45-50 -> 61-64 % (asv 75-79), false 0.072-0.172 -> 0.074-0.175 (asv 0.094-0.106).
    Where ALL_SLOWER of the side runs a gap above, none need run at the level: after a
    +50 % step beside the busy neighbour (`time_str_join` at 144) the new faster speed is
    rare and 0.9-1.1x, a quarter gap off, and the step was left out. Measured (every
    position, benchkit alone): 50 % steps 70.3 / 67.9 / 40.1 -> 71.2 / 71.2 / 43.9 % on the
    idle, third and busy histories, false steps 0.0183 / 0.0303 / 0.0395 -> 0.0183 / 0.0304 /
    0.0395 a series.
    Both shares are of the side's commits no further up than the slower speed's quarter
    gap: a busy spell above both speeds is neither (`time_sum_range` beside the busy
    neighbour, +50 % at commit 31, read at commit 28: 14 of 30 commits at the new slower
    speed, 5 in a spell at 2.3-3.2x; left out as a flip). ALL_SLOWER is of the whole side
    (half the side a gap above and half further up is a busy spell, not a step).
    Measured beside the busy neighbour (every position, with two rules tried beside it and
    not kept): 50 % steps found 44.6 -> 45.4 %, 25 % steps and false steps the same.
    Tried (benchkit alone): slower runs anywhere half a gap above, a share of 0.25 / 0.5 /
    0.65 of the side: idle 76.0 / 73.1 / 64.2 %, false 0.0216 / 0.0194 / 0.0173; busy 39.3 /
    38.9 / 38.0 %, 0.0424 / 0.0392 / 0.0382, but a busy spell then read as both speeds."""
    slower = step.change > 0
    side = (raw[at:min(high, at + placement.WINDOW)] if slower
            else raw[max(low, at - placement.WINDOW):at])
    top = math.log(max(step.before, step.after))
    slow, fast = (int(np.sum(np.abs(side - speed) <= gap / 4)) for speed in (top + gap, top))
    # at both speeds: of the commits no further up than the slower speed (a busy spell apart)
    below = int(np.sum(side <= top + gap + gap / 4))
    return (slow >= max(3, BOTH_SPEEDS * below) and fast >= max(2, MIXED * below)) or (
        slow >= max(3, ALL_SLOWER * len(side)))


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


def two_speed_cuts(raw: np.ndarray, at: int, low: int, high: int, gap: float,
                   slower: bool | None = None, noise: float = 0.0
                   ) -> tuple[int, int, int] | None:
    """Where a step of a two-speed series (first commit after it near `at`) lies, scored
    on raw[low:high] (log) as two levels at two speeds `gap` apart each (least absolute
    deviation of each commit from the nearer speed of its side): (best, first, last), the
    first commit after the step at the best cut and the first and last of those that fit
    within TWO_SPEED_SLACK times the mean deviation of a commit at the best cut (measured:
    1, 2, 3, 5 kept 31.9, 30.6, 27.6, 18.1 % of 25 % steps at their commit, and put
    0.0189, 0.0169, 0.0155, 0.0150 false steps a series, on this VM's idle history); None
    where no cut can be scored. Where the step is `slower` (True) or faster (False), only
    the cuts `past_old_speed` allows are scored."""
    stretch = raw[low:high]
    cuts = range(max(2, at - low - placement.REACH),
                 min(len(stretch) - 2, at - low + placement.REACH) + 1)
    speeds, fits = faster_speeds(stretch, [side for cut in cuts for side in ((0, cut), (cut, len(
        stretch)))], np.array([gap]))
    costs = dict(zip(cuts, (fits[0::2, 0] + fits[1::2, 0]).tolist()))
    if slower is not None and costs:
        costs = past_old_speed(stretch, costs, speeds, slower, noise, gap)
    if not costs:
        return None
    least = min(costs.values())
    best = next(cut for cut, cost in costs.items() if cost <= least + TIE)
    slack = TWO_SPEED_SLACK * costs[best] / len(stretch)
    fitting = [cut for cut, cost in costs.items() if cost - costs[best] <= slack]
    return low + best, low + min(fitting), low + max(fitting)


def past_old_speed(stretch: np.ndarray, costs: dict[int, float], speeds: np.ndarray,
                   slower: bool, noise: float, gap: float) -> dict[int, float]:
    """The cuts of `costs` (cut: cost, on `stretch`, log; `speeds`: each side's faster
    speed for each cut, as `faster_speeds` gives them) that leave every commit at the lower
    level's faster speed on that level's side. Noise only slows a run: a commit within
    FLOOR_SHARE of the step of the lower level's faster speed (the speeds fitted at the
    best cut) is of that level, so a slower step lies after it and a faster one before it.
    Beside a busy neighbour, runs 1.3-2.2x slow next to a step fit the level above better
    than the level below, and a step was named where such a run begins, before a commit at
    the old speed. Not where the speeds are fewer than FAST_APART `noise`s (of the values
    at the faster speed) apart: a series' own faster runs reach that far (`time_numpy_sum`,
    this VM's three histories joined: 5-10 % steps were named at the next commit that ran
    fast; at 3 noises the joined histories' false steps were those of no bound; at 4, 5, 7:
    0.0267, 0.0258, 0.0262 beside the busy neighbour, 0.0278, 0.0271, 0.0271 on the third
    history); nor where a commit between the best cut and that one runs at
    the higher level's faster speed (that one is the odd commit, as in `placement.
    floor_spans`); nor where no commit on the lower level's own side of the best cut runs at
    its speed (a third, faster speed, as the third history's `time_sum_range` runs now and
    then, is none of the level's runs: without this and the noise bound, that history's
    false steps 0.0275 -> 0.0393). A commit between that stands at the lower level's
    slower speed too (`gap` above its faster one) tells nothing: where a step is about as
    high as the gap, the old slower speed is the new faster one (the sixth VM beside a busy
    neighbour, `time_sum_range` +50 % at 52, was named at 46, a run at 0.97x between taken
    for the new level; measured with `both_speeds_moved`: false steps 0.0392 -> 0.0387 a
    series there, 50 % steps 38.9 -> 39.4 %). All cuts where none is allowed.
    Measured (benchmarks/perf_history_detection.py, with placement.SPELL_RUN at 3):
    beside the busy neighbour, every position, 10 / 25 / 50 % steps found 14.2 / 38.6 /
    48.7 -> 14.7 / 42.7 / 49.9 %, false steps 0.0268 -> 0.0258 a series; the three histories
    joined (400 trials) 0.0336 / 0.0286 / 0.0280 -> 0.0342 / 0.0286 / 0.0280; no other set
    moved."""
    cuts = list(costs)
    best = min(cuts, key=costs.__getitem__)
    k = cuts.index(best)
    old, new = float(speeds[2 * k, 0]), float(speeds[2 * k + 1, 0])
    if (new > old) != slower or abs(new - old) < FAST_APART * noise:
        return costs
    lower, near = min(old, new), placement.FLOOR_SHARE * abs(new - old)
    at_lower = [i for i in range(cuts[0], cuts[-1]) if abs(stretch[i] - lower) < near]
    if not any((i < best) == slower for i in at_lower):
        return costs
    telling = [i for i in at_lower if (i < best) != slower]
    if telling:
        upper = max(old, new)
        between = range(best, max(telling)) if slower else range(min(telling) + 1, best)
        # (one also at the lower level's slower speed, `gap` above it, tells nothing)
        if any(abs(stretch[i] - upper) < near and abs(stretch[i] - lower - gap) >= near
               for i in between):
            return costs
    allowed = {cut: cost for cut, cost in costs.items()
               if (cut > max(at_lower) if slower else cut <= min(at_lower))}
    return allowed or costs
