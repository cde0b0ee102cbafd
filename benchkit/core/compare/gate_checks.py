"""How each kind of gate is judged on a row of a comparison (pure): what a side must hold for
the gate to be evaluated, and what breaks it or leaves it open. One judge per metric family
(wall time, instruction counts, memory); `comparison` asks `judge_of(gate)` instead of
branching on gate names, so a new gate metric is one judge here plus its name in `gates`."""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable

from benchkit.core.decisions.bands import instruction_change
from benchkit.core.decisions.gates import Gate, Metric
from benchkit.core.decisions.verdicts import Decision, Verdict


@dataclasses.dataclass(frozen=True)
class Judged:
    """What one gate says of one row: broken (why), or left open by an inconclusive
    verdict (why); neither when it holds."""

    broken: str | None = None
    open: str | None = None


@dataclasses.dataclass(frozen=True)
class GateJudge:
    """One metric family's gates. `holds(side, name)`: whether a side has the figures the
    gate reads; `figures` names them and `hint` says how to get them when it does not;
    `judge(row, gate)`."""

    holds: Callable[[Any, str], bool]
    figures: str
    judge: Callable[[Any, Gate], Judged]
    hint: str = ""


def _leaves_open(wall: Decision, gate: Gate) -> bool:
    """An inconclusive verdict whose interval reaches past the gate's limit (or has none):
    the data cannot say whether the gate holds. One whose interval ends below the limit
    decides the gate after all."""
    if wall.verdict is not Verdict.INCONCLUSIVE:
        return False
    return not math.isfinite(wall.ci_high) or wall.ci_high - 1 > gate.limit


def _wall(row, gate: Gate) -> Judged:
    wall = row.wall
    if wall is None:
        return Judged()
    if wall.verdict is Verdict.SLOWER and wall.change > gate.limit:
        return Judged(broken=f"{gate}: {wall.change:+.1%} (p={wall.p_value:.2g})")
    if _leaves_open(wall, gate):
        upper = f"{wall.ci_high - 1:+.1%}" if math.isfinite(wall.ci_high) else "unknown"
        return Judged(open=f"{gate}: not decided (inconclusive, CI up to {upper})")
    return Judged()


def _instructions(row, gate: Gate) -> Judged:
    if not (row.base_instructions and row.new_instructions):
        return Judged()
    change = instruction_change(row.base_instructions, row.new_instructions)
    return Judged(broken=f"{gate}: {change:+.2%} instructions beyond the layout band"
                  if change > gate.limit else None)


def _memory(row, gate: Gate) -> Judged:
    return Judged(broken=None if row.memory is None else row.memory.breaks(gate))


WALL = GateJudge(lambda side, name: name in side.measurements, "wall time", _wall)
INSTRUCTIONS = GateJudge(lambda side, name: name in side.counts, "instruction counts",
                         _instructions, " (collect with --callgrind)")
MEMORY = GateJudge(lambda side, name: name in side.memory, "memory figures", _memory,
                   " (collect with --memory)")
JUDGES = {Metric.SLOWER: WALL, Metric.INSTRUCTIONS: INSTRUCTIONS,
          **{m: MEMORY for m in Metric if m.is_memory}}


def judge_of(gate: Gate) -> GateJudge:
    """The judge of `gate`'s metric."""
    return JUDGES[gate.metric]
