"""Regression gates (pure): `slower>5%` (wall time), `instructions>1%` (counts), the memory
gates `allocations>0`, `bytes>10%`, `peak>10%`, `retained>0`, and a gate per metric of the
values benchmarks return (`track>5%`, `peakmem>10%`). Which names exist, and which forms
each takes, is the metric registry's to say (`metric.gate_name`)."""
from __future__ import annotations

import dataclasses
import re

from benchkit.core.metrics.metric import Metric, gate_forms, gate_name
from benchkit.errors import GateError

_GATE = re.compile(r"^\s*([a-z][a-z0-9_]*)\s*>\s*([0-9]*\.?[0-9]+)\s*(%?)\s*$")


@dataclasses.dataclass(frozen=True)
class Gate:
    """A regression limit. `slower` and `instructions` limit a relative change (`>5%`); the
    memory metrics take a relative change (`bytes>10%`: NEW more than 10 % above BASE) or an
    absolute one per run (`allocations>0`: any more allocations; `bytes>1024`), and
    `retained>N` limits the bytes a run of NEW leaves allocated. `name` is the gate's
    (`slower`), `of` the metric it reads (time). `str(gate)` and `Gate.parse` are the one
    text form, in files and on the command line."""

    name: str
    limit: float         # relative (0.05 == 5 %) when `relative`, else per run
    relative: bool = True

    def __str__(self) -> str:
        if self.relative:
            return f"{self.name}>{self.limit * 100:g}%"
        return f"{self.name}>{self.limit:g}"

    @property
    def of(self) -> Metric:
        """The metric this gate reads."""
        return gate_name(self.name)[0]

    @property
    def series(self) -> str | None:
        """The history series this gate judges steps of: its metric's, or the one its
        gate name says (memory's `peak`: asv's peakmem); None where the history keeps
        none (benchkit's memory counts stay in results files)."""
        metric, form = gate_name(self.name)
        return form.series or (metric.name if metric.history else None)

    @classmethod
    def parse(cls, text: str) -> "Gate":
        """'slower>5%' -> Gate('slower', 0.05); anything else is a GateError."""
        match = _GATE.match(text) if isinstance(text, str) else None
        known = gate_name(match.group(1)) if match else None
        if known is None:
            raise GateError(f"gate {text!r} is not of the form {gate_forms()}")
        name, number, percent = match.group(1), float(match.group(2)), match.group(3)
        form = known[1]
        if percent and not form.relative:
            raise GateError(f"gate {text!r}: {name} takes {form.amount} per run, e.g. "
                            f"'{form.shown}'")
        if not percent and not form.absolute:
            raise GateError(f"gate {text!r}: {name} takes a percentage, e.g. '{form.shown}'")
        return cls(name, number / 100 if percent else number, relative=bool(percent))
