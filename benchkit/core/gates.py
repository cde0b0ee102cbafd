"""Regression gates: `slower>5%` (wall time) and `instructions>1%` (counts). Pure."""
from __future__ import annotations

import dataclasses
import re

from benchkit.core.enums import TextEnum
from benchkit.errors import GateError


class Metric(TextEnum):
    """What a gate limits: a wall-time slowdown or an instruction-count increase."""

    SLOWER = "slower"
    INSTRUCTIONS = "instructions"


_GATE = re.compile(r"^\s*(slower|instructions)\s*>\s*([0-9]*\.?[0-9]+)\s*%\s*$")


@dataclasses.dataclass(frozen=True)
class Gate:
    """A regression limit: `slower>5%` (wall time) or `instructions>1%` (counts).
    `str(gate)` and `Gate.parse` are the one text form, in files and on the command line."""

    metric: Metric
    limit: float         # relative, 0.05 == 5 %

    def __str__(self) -> str:
        return f"{self.metric.value}>{self.limit * 100:g}%"

    @classmethod
    def parse(cls, text: str) -> "Gate":
        """'slower>5%' -> Gate(Metric.SLOWER, 0.05); anything else is a GateError."""
        match = _GATE.match(text) if isinstance(text, str) else None
        if not match:
            raise GateError(f"gate {text!r} is not of the form 'slower>5%' or "
                            "'instructions>1%'")
        return cls(Metric(match.group(1)), float(match.group(2)) / 100)
