"""Memory per run as `benchkit run --memory` counts it (pure): exact figures, so a change is
any difference. Its gates: `allocations>0` and `bytes>10%` (an increase per run, absolute or
relative), `peak>10%` (peak live bytes) and `retained>0` (bytes a run of NEW leaves
allocated: a leak). Not a history metric: the history follows times and counts."""
from __future__ import annotations

from benchkit.core.measure.memory import format_bytes
from benchkit.core.metrics.metric import (
    GateName,
    Judged,
    Metric,
    bytes_unit,
    register,
    relative_change,
)


def _show(figure: str, value: float) -> str:
    return f"{value:,.4g}" if figure == "allocations" else format_bytes(value)


def breaks(change, gate) -> str | None:
    """Why a MemoryChange breaks the memory `gate` (None: it does not)."""
    figure = gate.name
    new = change.new.value(figure)
    if figure == "retained":
        return f"{gate}: {format_bytes(new)} retained per run" if new > gate.limit else None
    base = change.base.value(figure)
    shown = f"{gate}: {_show(figure, base)} -> {_show(figure, new)} per run"
    if gate.relative:
        relative = relative_change(base, new)
        return f"{shown} ({relative:+.1%})" if relative > gate.limit else None
    return shown if new - base > gate.limit else None


def _judge(row, gate) -> Judged:
    return Judged(broken=None if row.memory is None else breaks(row.memory, gate))


MEMORY = register(Metric(
    "memory", "bytes", "memory per run", exact=True, axis=bytes_unit,
    text=lambda value, unit="": format_bytes(value), history=False,
    gates=(GateName("allocations", absolute=True, example="allocations>0"),
           GateName("bytes", absolute=True, example="bytes>10%"),
           # in a history, asv's peak resident memory is the series it reads
           GateName("peak", absolute=True, example="peak>10%", series="peakmem"),
           GateName("retained", relative=False, absolute=True, example="retained>0",
                    amount="bytes")),
    figures="memory figures", hint=" (collect with --memory)",
    holds=lambda side, name: name in side.memory, judge=_judge))
