"""Regression gates: `slower>5%` (wall time), `instructions>1%` (counts) and the memory
gates `allocations>0`, `bytes>10%`, `peak>10%`, `retained>0`. Pure."""
from __future__ import annotations

import dataclasses
import re

from benchkit.core.enums import TextEnum
from benchkit.errors import GateError


class Metric(TextEnum):
    """What a gate limits."""

    SLOWER = "slower"                # wall-time slowdown (relative)
    INSTRUCTIONS = "instructions"    # instruction-count increase (relative)
    ALLOCATIONS = "allocations"      # allocations per run: increase
    BYTES = "bytes"                  # bytes requested per run: increase
    PEAK = "peak"                    # peak live bytes: increase
    RETAINED = "retained"            # bytes a run leaves allocated, in NEW (a leak)

    @property
    def is_memory(self) -> bool:
        """Whether the gate reads memory figures (benchkit run --memory)."""
        return self not in (Metric.SLOWER, Metric.INSTRUCTIONS)


_GATE = re.compile(r"^\s*([a-z]+)\s*>\s*([0-9]*\.?[0-9]+)\s*(%?)\s*$")
_FORMS = ("'slower>5%', 'instructions>1%', 'allocations>0', 'bytes>10%', 'peak>10%' or "
          "'retained>0'")


@dataclasses.dataclass(frozen=True)
class Gate:
    """A regression limit. `slower` and `instructions` limit a relative change (`>5%`); the
    memory metrics take a relative change (`bytes>10%`: NEW more than 10 % above BASE) or an
    absolute one per run (`allocations>0`: any more allocations; `bytes>1024`), and
    `retained>N` limits the bytes a run of NEW leaves allocated. `str(gate)` and
    `Gate.parse` are the one text form, in files and on the command line."""

    metric: Metric
    limit: float         # relative (0.05 == 5 %) when `relative`, else per run
    relative: bool = True

    def __str__(self) -> str:
        if self.relative:
            return f"{self.metric.value}>{self.limit * 100:g}%"
        return f"{self.metric.value}>{self.limit:g}"

    @classmethod
    def parse(cls, text: str) -> "Gate":
        """'slower>5%' -> Gate(Metric.SLOWER, 0.05); anything else is a GateError."""
        match = _GATE.match(text) if isinstance(text, str) else None
        if not match or match.group(1) not in Metric.__members__.values():
            raise GateError(f"gate {text!r} is not of the form {_FORMS}")
        metric, number, percent = Metric(match.group(1)), float(match.group(2)), match.group(3)
        if not metric.is_memory and not percent:
            raise GateError(f"gate {text!r}: {metric.value} takes a percentage, e.g. "
                            f"'{metric.value}>5%'")
        if metric is Metric.RETAINED and percent:
            raise GateError(f"gate {text!r}: retained takes bytes per run, e.g. 'retained>0'")
        return cls(metric, number / 100 if percent else number, relative=bool(percent))
