"""Steps in a series (pure): every metric's steps through `steps_of`.

Instruction counts are deterministic: a step is any change that leaves the layout bands of
the commits on either side (no statistics, so an unchanged benchmark never shows a step).
Measured metrics (wall time, asv's peakmem and track) go through `time_steps`.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from benchkit.core.decisions.bands import instruction_change
from benchkit.core.metrics.metric import metric_named
from benchkit.core.history.series import Point, Series
from benchkit.core.history.step import MovedFunction, Step
from benchkit.core.history.time_steps import (DEFAULT_ALPHA, DEFAULT_NOISE, lower_envelope,
                                              time_steps)

__all__ = ["DEFAULT_ALPHA", "DEFAULT_NOISE", "MovedFunction", "Step", "instruction_steps",
           "lower_envelope", "moved_functions", "steps_of", "time_steps"]


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
