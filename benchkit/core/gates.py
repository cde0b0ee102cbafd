"""Regression gates: `slower>5%` (wall time) and `instructions>1%` (counts). Pure."""
from __future__ import annotations

import dataclasses
import re

from benchkit.errors import BenchkitError


@dataclasses.dataclass(frozen=True)
class Gate:
    """A regression limit: `slower>5%` (wall time) or `instructions>1%` (counts)."""

    metric: str          # "slower" | "instructions"
    limit: float         # relative, 0.05 == 5 %

    def __str__(self) -> str:
        return f"{self.metric}>{self.limit * 100:g}%"


_GATE = re.compile(r"^\s*(slower|instructions)\s*>\s*([0-9]*\.?[0-9]+)\s*%\s*$")


def parse_gate(text: str) -> Gate:
    match = _GATE.match(text) if isinstance(text, str) else None
    if not match:
        raise BenchkitError(f"gate {text!r} is not of the form 'slower>5%' or "
                            "'instructions>1%'")
    return Gate(match.group(1), float(match.group(2)) / 100)
