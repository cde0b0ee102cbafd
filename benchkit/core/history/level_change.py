"""Whether a wall-time level changed (pure): the stretches of commits at one level, from the
change points proposed (`levels`), and the slower spells away and back the rank test leaves
out (`slower_spells`); each boundary between two levels judged on the raw values of up to
WINDOW commits on either side (`judge_boundary`: placed at the best cut near it, then the
rank test, core.decisions.rank_test; `failing`: Holm's step-down), and the per-process
evidence of the commits next to a step (a level may move beyond the noise band while the
processes measured on either side say no change; then the step is not claimed). A series
a shared machine runs at two speeds: `two_speed`."""
from __future__ import annotations

import bisect
import functools
import heapq
import statistics
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from benchkit.core.decisions.rank_test import apart, holm_rejected, rank_p
from benchkit.core.decisions.verdicts import decide_runs
from benchkit.core.history import placement
from benchkit.core.history.series import Point
from benchkit.core.measure.measurement import pooled_measurement

WINDOW = 30                # commits on each side that judge a step
NEIGHBOURS = 5             # commits on each side whose processes confirm a time step
MIN_NEWEST = 3             # commits a level needs at either end of a series


class Boundary(NamedTuple):
    """A boundary between two levels, as judged: the first commit after it (refined), the
    change of the filtered level (log), the rank test's p (1.0: not tested) and whether
    the sides do not overlap at all."""

    at: int
    change: float
    p: float
    apart: bool
    effect: float          # the change it must clear


class Judging(NamedTuple):
    """How a series' boundaries are judged: `effect` (the change a boundary between levels
    of n and m commits must clear), whether the filtered values are the lower envelope
    (`envelope_shift`: a rise shows there one commit late), the `tamed` values a cut is
    placed on by least squares (independent noise) or None, the `reach` (commits) a cut
    may move, and the series' `noise` (log): no commit's deviation is capped below
    placement.CAP_NOISES of it (`placement.deviation_cap`); `spells`: the commits of spells
    away from a level and back (`levels`' departures), left out where a cut is
    placed, or None; `untested`: those and the commits of `slower_spells`, left out where
    it is tested, or None."""

    effect: Callable[[int, int], float]
    envelope_shift: bool
    tamed: np.ndarray | None
    reach: int
    noise: float
    spells: np.ndarray | None = None
    untested: np.ndarray | None = None


def judged_boundaries(raw: np.ndarray, logs: np.ndarray, bounds: list[int], how: Judging,
                      known: dict[tuple[int, int, int], Boundary]) -> list[Boundary]:
    """Each boundary judged between its neighbours; `known` keeps the judgements by (start,
    boundary, end), so a dropped boundary's two neighbours alone are judged anew."""
    edges = [0, *bounds, len(raw)]
    out = []
    for i, at in enumerate(bounds):
        key = (edges[i], at, edges[i + 2])
        if key not in known:
            known[key] = judge_boundary(raw, logs, *key, how)
        out.append(known[key])
    return out


def judge_boundary(raw: np.ndarray, logs: np.ndarray, start: int, at: int, end: int,
                   how: Judging) -> Boundary:
    """The boundary at `at` between levels from `start` and to `end` (`logs`: the filtered
    values its levels were found in): its change, then the commit it stands for and the
    raw values' rank test there."""
    change = (placement.median(logs[at:min(end, at + WINDOW)])
              - placement.median(logs[max(start, at - WINDOW):at]))
    need = how.effect(at - start, end - at)
    if abs(change) <= need:
        return Boundary(at, change, 1.0, False, need)
    # the filtered values' best split (independent noise: the raw's least squares, tamed),
    # then the commit it stands for: a rise shows in the envelope one commit late
    if how.tamed is None:
        cap = placement.deviation_cap(change, how.noise, len(logs))
        cut = placement.refined(logs, start, at, end, how.reach,
                                functools.partial(placement.cut_costs, cap=cap),
                                None if how.spells is None else ~how.spells[start:end])
    else:
        cut = placement.refined(how.tamed, start, at, end, how.reach, placement.least_squares)
    if how.envelope_shift:
        cut = min(max(cut + (-1 if change > 0 else 1), start + 1), end - 1)
    first, last = max(start, cut - WINDOW), min(end, cut + WINDOW)
    before, after = raw[first:cut], raw[cut:last]
    if how.untested is not None:   # a spell away from the level and back is not the level
        before, after = before[~how.untested[first:cut]], after[~how.untested[cut:last]]
    moved = placement.median(after) - placement.median(before)
    if moved * change <= 0:
        # at the commit it stands for, the raw values do not move that way: a mixed
        # stretch (two steps closer than a level), not one step at this commit
        return Boundary(cut, change, 1.0, False, need)
    return Boundary(cut, change, rank_p(before, after), apart(before, after), need)


def failing(judged: Sequence[Boundary], alpha: float) -> list[int]:
    """The boundaries that fail: a change within its `effect`, or a rank test that Holm's
    step-down at `alpha` for the series does not reject and sides that overlap."""
    held = holm_rejected([b.p for b in judged], alpha)
    return [i for i, b in enumerate(judged)
            if abs(b.change) <= b.effect or not (held[i] or b.apart)]


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

def levels(logs: np.ndarray, proposals: Sequence[int], *, min_level: int,
           min_newest: int = MIN_NEWEST,
           effect: Callable[[int, int], float] = lambda n, m: 0.0,
           departures: list[tuple[int, int]] | None = None,
           envelope: bool = False) -> list[tuple[int, int]]:
    """The stretches of commits at one level, as (start, end) slices. A stretch shorter
    than `min_level` inside the series is a spell (a shared runner's slow minutes, a commit
    reverted soon after), not a level: it joins the neighbour whose median is closer. At
    the newest end a stretch needs `min_newest` commits. Neighbouring stretches of n and m
    commits whose medians differ by no more than `effect(n, m)` (log scale) are one level.
    Where `departures` is given, a spell away from one level and back (its neighbours
    within `effect` of each other, it further than `effect` from both) joins both into one
    level and is listed there: joined to the closer alone, two spells side by side made a
    level of their own (scipy's `time_comb_exact`: three releases 1.9x slow, three back,
    then a step). In the lower `envelope` only a slower spell between two stretches of
    `min_level` commits or more is. Outside the envelope a spell's slower neighbour of fewer
    than `min_level` commits is a spell away and back too where the stretch beyond it is at
    the spell's level (the three become one level): a 50 % step two releases before or
    after that spell of `time_comb_exact` was named at the spell (+88 % at its start and
    -21 % after it; +180 % somewhere before it and -46 % after it). A faster neighbour is
    not taken for one: a shared runner's noise is slower."""
    edges = [0, *sorted(set(proposals)), len(logs)]
    pieces = [[a, b] for a, b in zip(edges, edges[1:]) if b > a]
    values = logs.tolist()         # medians of short Python lists: ~20x numpy's per call
    medians = [statistics.median(values[a:b]) for a, b in pieces]

    starts = [a for a, _ in pieces]

    def merge(a: int) -> None:     # pieces a and a + 1 become one
        pieces[a:a + 2] = [[pieces[a][0], pieces[a + 1][1]]]
        medians[a:a + 2] = [statistics.median(values[pieces[a][0]:pieces[a][1]])]
        del starts[a + 1]

    def spell(a: int, b: int) -> bool:
        return b - a < (min_newest if a == 0 or b == len(logs) else min_level)

    def length(k: int) -> int:
        return pieces[k][1] - pieces[k][0]

    def away_and_back(i: int, j: int) -> bool:   # j: the neighbour closer to spell i
        return (abs(medians[i + 1] - medians[i - 1]) <= effect(length(i - 1), length(i + 1))
                and abs(medians[i] - medians[j]) > effect(length(i), length(j))
                and (not envelope or (medians[i] > medians[j] and min(
                    length(i - 1), length(i + 1)) >= min_level)))

    def slower_beside(i: int) -> int | None:
        # spell i's neighbour k of fewer than min_level commits, slower than spell i and than
        # the stretch beyond k, which is at spell i's level: k is the spell away and back
        for k in (i - 1, i + 1):
            f = 2 * k - i
            if 0 <= f < len(pieces) and length(k) < min_level and (
                    abs(medians[f] - medians[i]) <= effect(length(f), length(i))
                    and medians[k] - max(medians[f], medians[i])
                    > effect(length(k), min(length(f), length(i)))):
                return k
        return None

    # spells first, the shortest first (then the oldest); at either end a stretch cannot be
    # seen to come back, and a shorter one is a level. (Merging never makes a stretch
    # shorter, so the levels merged after this leave no spell.) A heap of the spells, not a
    # scan of every piece for each merge: 5,000 commits have hundreds (a quarter of the time)
    spells = [(b - a, a, b) for a, b in pieces if spell(a, b)]
    heapq.heapify(spells)
    while len(pieces) > 1 and spells:
        _, a, b = heapq.heappop(spells)
        i = bisect.bisect_left(starts, a)
        if i == len(pieces) or pieces[i] != [a, b]:
            continue               # merged since
        last = len(pieces) - 1
        j = 1 if i == 0 else i - 1 if i == last else min(
            (i - 1, i + 1), key=lambda k: abs(medians[k] - medians[i]))
        if departures is not None and 0 < i < last and away_and_back(i, j):
            departures.append((a, b))
            merge(i - 1)           # the level before, the spell, the level after: one
            j = i - 1
        elif departures is not None and not envelope and (k := slower_beside(i)) is not None:
            departures.append((pieces[k][0], pieces[k][1]))
            i = j = min(i, 2 * k - i)
            merge(i)               # the stretch beyond the slower spell, it, this spell: one
        merge(min(i, j))
        a, b = pieces[min(i, j)]
        if spell(a, b):
            heapq.heappush(spells, (b - a, a, b))

    def gap(k: int) -> float:      # between pieces k and k + 1, less the effect it must clear
        return abs(medians[k + 1] - medians[k]) - effect(
            pieces[k][1] - pieces[k][0], pieces[k + 1][1] - pieces[k + 1][0])

    # then levels closer than the effect, the closest first; only the gaps next to a merge
    # change (a series of 5,000 commits has hundreds of proposals)
    gaps = [gap(k) for k in range(len(pieces) - 1)]
    while gaps:
        least = min(gaps)
        if least > 0:
            break
        k = gaps.index(least)
        merge(k)
        del gaps[k]
        for g in (k - 1, k):
            if 0 <= g < len(gaps):
                gaps[g] = gap(g)
    return [(a, b) for a, b in pieces]


def slower_spells(raw: np.ndarray, proposals: Sequence[int], *, min_level: int,
                  effect: Callable[[int, int], float]) -> np.ndarray | None:
    """The commits of each slower spell away from a level and back in the raw values
    (`levels`' departures, `proposals` found on `raw`), or None where there is none. Where
    levels are found in the lower envelope, a spell of three slow commits reads as one
    (each commit is the least of it and its neighbours) and is no spell there, but its raw
    values still weigh in the rank test beside it: scipy's `time_comb_exact`, three releases
    1.9x slow and three back, then a 50 % step, failed the test (p = 0.025) and was named
    nowhere. Left out of the test alone, not of where a step is placed: left out there
    too, astropy's 25 % steps were named at a commit 3 points less often."""
    found: list[tuple[int, int]] = []
    levels(raw, proposals, min_level=min_level, effect=effect, departures=found)
    spells = np.zeros(len(raw), dtype=bool)
    for a, b in found:
        if float(np.median(raw[a:b])) > max(raw[a - 1], raw[b]):
            spells[a:b] = True
    return spells if spells.any() else None
