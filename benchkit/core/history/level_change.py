"""Whether a wall-time level changed (pure): each boundary between two levels judged on the
raw values of up to WINDOW commits on either side (`judge_boundary`: placed at the best cut
near it, then the rank test, core.decisions.rank_test; `failing`: Holm's step-down), and
the per-process evidence of the commits next to a step (a level may move beyond the noise
band while the processes measured on either side say no change; then the step is not
claimed). A series a shared machine runs at two speeds: `two_speed`."""
from __future__ import annotations

import functools
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from benchkit.core.decisions.rank_test import apart, holm_rejected, rank_p
from benchkit.core.decisions.verdicts import decide_runs
from benchkit.core.history import placement
from benchkit.core.history.series import Point
from benchkit.core.measure.measurement import pooled_measurement

WINDOW = 30                # commits on each side that judge a step
NEIGHBOURS = 5             # commits on each side whose processes confirm a time step


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
    away from a level and back (`time_steps.levels`' departures), left out where a cut is
    placed and where it is tested, or None."""

    effect: Callable[[int, int], float]
    envelope_shift: bool
    tamed: np.ndarray | None
    reach: int
    noise: float
    spells: np.ndarray | None = None


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
    if how.spells is not None:     # a spell away from the level and back is not the level
        before, after = before[~how.spells[first:cut]], after[~how.spells[cut:last]]
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
