"""What the machine's rules share (pure): a step's places, a step found again once some
commits' values are taken down, and the loop that holds a step as pending where a rule
says why (`held_where`)."""
from __future__ import annotations

import dataclasses
import math
from typing import Callable, Container, Mapping, Sequence

from benchkit.core.history.series import Points, Series
from benchkit.core.history.step import Step

MATCH = 3    # commits apart that a step found again is the same step


def places_of(step: Step, index: Mapping[str, int]) -> tuple[int, int]:
    """The first and last place (in a series whose commits `index` places) that `step` may
    lie at: just after its previous commit, and its commit (a span: its ends)."""
    first, last = step.range
    return index.get(first.sha, -1) + 1, index.get(last.sha, -1)


def found_again(steps: Sequence[Step], index: Mapping[str, int], low: int, high: int) -> bool:
    """Whether one of `steps` (found again) is slower, not transient, and within MATCH
    places of `low`..`high`."""
    return any(a - MATCH <= high and low <= b + MATCH
               for a, b in (places_of(s, index) for s in steps
                            if s.change > 0 and not s.transient and s.commit.sha in index))


def held_where(steps: list[Step], index: Mapping[str, int],
               note: Callable[[Step, int, int], str | None]) -> list[Step]:
    """`steps` with each slower step that stays (not transient, not pending, its commit
    among those `index` places) marked pending where `note(step, first, last)` (its
    `places_of`) says why: that text is added to its evidence. The machine's rules differ
    only in `note`."""
    out = list(steps)
    for k, step in enumerate(steps):
        if step.change <= 0 or step.transient or step.pending or step.commit.sha not in index:
            continue
        why = note(step, *places_of(step, index))
        if why:
            out[k] = dataclasses.replace(step, pending=True, evidence=step.evidence + why)
    return out


def taken_down(series: Series, commits: Container[str], gap: float) -> Series:
    """`series` with its points at `commits` (shas) taken down by `gap` (log): value, low
    and high alike."""
    scale = math.exp(-gap)
    return dataclasses.replace(series, points=Points.of(
        p._replace(value=p.value * scale, low=p.low * scale, high=p.high * scale)
        if p.commit.sha in commits else p for p in series.points))
