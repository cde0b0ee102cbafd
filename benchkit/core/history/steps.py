"""Steps in a series (pure): every metric's steps through `steps_of`.

Instruction counts are deterministic: a step is any change that leaves the layout bands of
the commits on either side (no statistics, so an unchanged benchmark never shows a step).
Measured metrics (wall time, asv's peakmem and track) go through `time_steps`.
"""
from __future__ import annotations

import dataclasses
import functools
from collections import Counter
from typing import Any, Callable, Mapping, Sequence

from benchkit.core.decisions.bands import instruction_change
from benchkit.core.metrics.metric import metric_named
from benchkit.core.history.series import Commit, Point, Series
from benchkit.core.history.step import MovedFunction, Step
from benchkit.core.history.noise import lower_envelope
from benchkit.core.history.time_steps import DEFAULT_ALPHA, DEFAULT_NOISE, time_steps

__all__ = ["DEFAULT_ALPHA", "DEFAULT_NOISE", "MovedFunction", "SharedStep", "Step",
           "instruction_steps", "lower_envelope", "moved_functions", "series_counts",
           "shared_needed", "shared_steps", "steps_of", "time_steps"]


def moved_functions(before: Sequence[Any], after: Sequence[Any], top: int = 10
                    ) -> tuple[MovedFunction, ...]:
    """The functions whose instructions per run changed most between two commits'
    CallgrindStats (the first of each side; baseline subtracted, paths standardised, as
    `benchkit diff` compares them)."""
    from benchkit.core.callgrind.counts import diff_counts
    if not before or not after:
        return ()
    a, b = before[0], after[0]
    rows = diff_counts(a.as_standardized(thorough=True).stats(subtract_baseline=True),
                       b.as_standardized(thorough=True).stats(subtract_baseline=True)).rows()
    moved = [MovedFunction(fn, (count_a or 0) / a.number_per_run,
                           (count_b or 0) / b.number_per_run)
             for fn, _, count_a, count_b, _ in rows]
    moved = [f for f in moved if f.delta]
    moved.sort(key=lambda f: (-abs(f.delta), f.function))
    return tuple(moved[:top])


def instruction_steps(series: Series,
                      evidence: Callable[[Point], Sequence[Any]] | None = None
                      ) -> list[Step]:
    """Every change between neighbouring commits that leaves both layout bands."""
    steps = []
    points = series.points
    for prev, cur in zip(points, points[1:]):
        if prev.value == cur.value and prev.low == cur.low and prev.high == cur.high:
            continue
        if instruction_change(prev.band(), cur.band()) == 0 or prev.value <= 0:
            continue
        functions = moved_functions(evidence(prev), evidence(cur)) if evidence else ()
        steps.append(Step(series.benchmark, series.metric, series.machine, prev.commit,
                          cur.commit, prev.value, cur.value, cur.value / prev.value - 1,
                          cur.low / prev.high - 1, cur.high / prev.low - 1, functions,
                          "outside both layout bands", series.environment))
    return steps



def steps_of(series: Series, evidence=None, **options) -> list[Step]:
    """The steps of a series of any metric: exact metrics (instructions, asv's mem) step on
    any change beyond their bands; measured ones (time, peakmem, track) as time does.
    Evidence is read for the metrics that store it (instructions and time)."""
    kind = metric_named(series.metric)
    kept = evidence if kind.evidence else None
    if kind.exact:
        return instruction_steps(series, kept)
    return time_steps(series, kept, **options)


SHARED_MIN = 5        # series that step together before their steps are called shared ...
# ... and more than false steps alone would give: at the most false steps a series the
# history aims at (0.05, as if every false step fell in the one range), fewer than one time
# in SHARED_P. A fixed share (a fifth, before) never named a change that hits 10 % of a
# large suite's series (scipy's releases: 23 of 201 series stepping together).
SHARED_FALSE_RATE = 0.05
SHARED_P = 0.001


@functools.lru_cache(maxsize=None)
def shared_needed(series: int) -> int:
    """How many of a machine's `series` of one metric must step together, one way, in one
    range of commits before their steps are called shared: at least SHARED_MIN, and so many
    that SHARED_FALSE_RATE false steps a series reach it less than SHARED_P of the time
    (5 of up to 14 series, 9 of 44, 22 of 201, 74 of 1,000)."""
    # scipy.special's Poisson tail: scipy.stats would add most of a second to every
    # `report` and `regressions` that reads its steps from the database
    from scipy.special import pdtrc
    expected = SHARED_FALSE_RATE * max(series, 0)
    needed = SHARED_MIN
    while pdtrc(needed - 1, expected) >= SHARED_P:
        needed += 1
    return needed


@dataclasses.dataclass(frozen=True)
class SharedStep:
    """Steps of many series of one machine and metric, one way, whose commit ranges all
    hold one commit: a change they have in common (code they share, a dependency, the
    machine itself), to look at once rather than series by series."""

    machine: str
    metric: str
    up: bool
    steps: tuple[Step, ...]
    series: int                  # the machine's series of the metric
    after: Commit                # every step lies after this commit ...
    through: Commit              # ... at or before this one

    @property
    def count(self) -> int:
        """How many series take the step (a series may take it in two steps)."""
        return len({(s.benchmark, s.environment) for s in self.steps})

    @property
    def extremes(self) -> tuple[float, float]:
        """The smallest and the largest of the steps' relative changes."""
        return min(s.change for s in self.steps), max(s.change for s in self.steps)


def series_counts(series_list: Sequence[Series]) -> Counter:
    """How many series each (machine, metric) has: what `shared_steps` weighs a group by."""
    return Counter((s.machine, str(s.metric)) for s in series_list)


def shared_steps(steps: Sequence[Step], series_count: Mapping[tuple[str, str], int]
                 ) -> list[SharedStep]:
    """The groups of steps (not transient) that `shared_needed` of the
    `series_count[(machine, metric)]` series of one machine and metric take the same way
    within one range of commits. Each step joins one group: the earliest end of a range
    not yet taken gathers every range left that holds it (one pass over the ranges sorted
    by end and one over them sorted by start)."""
    groups: dict[tuple[str, str, bool], list[Step]] = {}
    for step in steps:
        if not step.transient:
            groups.setdefault((step.machine, str(step.metric), step.change > 0), []).append(step)
    out = []
    for (machine, metric, up), members in sorted(groups.items()):
        by_order = all(c.order is not None for st in members for c in st.range)

        def at(commit: Commit) -> Any:
            return commit.order if by_order else commit.date

        by_end = sorted(members, key=lambda st: (at(st.range[1]), at(st.range[0])))
        by_start = sorted(members, key=lambda st: at(st.range[0]))
        taken: set[int] = set()
        starts = 0
        for first in by_end:
            if id(first) in taken:
                continue
            # every range left ends at or after `end`: those that start before it hold it
            end, held = first.range[1], [first]
            taken.add(id(first))
            while starts < len(by_start) and at(by_start[starts].range[0]) < at(end):
                if id(by_start[starts]) not in taken:
                    held.append(by_start[starts])
                    taken.add(id(by_start[starts]))
                starts += 1
            total = series_count.get((machine, metric), 0)
            group = SharedStep(machine, metric, up, tuple(held), total,
                               max((st.range[0] for st in held), key=at), end)
            if group.count >= SHARED_MIN and group.count >= shared_needed(total):
                out.append(group)
    return out
