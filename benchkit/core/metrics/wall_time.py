"""Wall time per run, in seconds (pure): measured, so a change is a statistical verdict, and
its gate `slower>5%` breaks only on a verdict of slower by more than the limit. An
inconclusive verdict whose interval reaches past the limit leaves the gate open."""
from __future__ import annotations

import math

from benchkit.core.decisions.verdicts import Decision, Verdict
from benchkit.core.measure.stats import format_time
from benchkit.core.metrics.metric import GateName, Judged, Metric, register, time_unit


def _leaves_open(wall: Decision, gate) -> bool:
    """An inconclusive verdict whose interval reaches past the gate's limit (or has none):
    the data cannot say whether the gate holds. One whose interval ends below the limit
    decides the gate after all."""
    if wall.verdict is not Verdict.INCONCLUSIVE:
        return False
    return not math.isfinite(wall.ci_high) or wall.ci_high - 1 > gate.limit


def _judge(row, gate) -> Judged:
    wall = row.wall
    if wall is None:
        return Judged()
    if wall.verdict is Verdict.SLOWER and wall.change > gate.limit:
        return Judged(broken=f"{gate}: {wall.change:+.1%} (p={wall.p_value:.2g})")
    if _leaves_open(wall, gate):
        upper = f"{wall.ci_high - 1:+.1%}" if math.isfinite(wall.ci_high) else "unknown"
        return Judged(open=f"{gate}: not decided (inconclusive, CI up to {upper})")
    return Judged()


TIME = register(Metric(
    "time", "s", "time per run", exact=False, axis=time_unit,
    text=lambda value, unit="": format_time(value),
    gates=(GateName("slower", example="slower>5%"),), figures="wall time",
    holds=lambda side, name: name in side.measurements, judge=_judge,
    evidence="measurements"))
