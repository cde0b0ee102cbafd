"""Metrics of the values a benchmark returns (pure), kept in a results file's `values` under
the metric's name: asv's `mem_` (the size of the returned object, bytes; exact) and
`peakmem_` (peak resident memory, bytes; measured). `valued_metric` makes one, with a gate
of its own name (`peakmem>10%`: NEW's median more than 10 % above BASE's; `peakmem>1024`:
more than that much above, in the metric's unit); `track` is one in its own module."""
from __future__ import annotations

from typing import Callable, Sequence

from benchkit.core.measure.memory import format_bytes
from benchkit.core.metrics.metric import (
    GateName,
    Judged,
    Metric,
    bytes_unit,
    own_unit,
    plain_text,
    register,
    relative_change,
)


def _judge(row, gate) -> Judged:
    change = next((c for c in row.values if c.kind == gate.name), None)
    if change is None:
        return Judged()
    beyond = (relative_change(change.base, change.new) if gate.relative
              else change.new - change.base)
    return Judged(broken=f"{gate}: {change.describe()}" if beyond > gate.limit else None)


def valued_metric(name: str, unit: str, title: str, exact: bool = False,
                  axis: Callable[[Sequence[float], str], tuple[float, str]] = own_unit,
                  text: Callable[..., str] = plain_text) -> Metric:
    """A metric of values benchmarks return under `name`, with a gate of the same name
    (relative or absolute). `unit` "" means each benchmark declares its own. Not yet
    registered: pass it to `register`."""
    return Metric(name, unit, title, exact=exact, axis=axis, text=text, valued=True,
                  gates=(GateName(name, absolute=True, example=f"{name}>5%"),),
                  figures=f"{name} values",
                  holds=lambda side, benchmark: side.has_value(benchmark, name),
                  judge=_judge)


MEM = register(valued_metric("mem", "bytes", "size of the returned object", exact=True,
                             axis=bytes_unit, text=lambda value, unit="": format_bytes(value)))
PEAKMEM = register(valued_metric("peakmem", "bytes", "peak memory", axis=bytes_unit,
                                 text=lambda value, unit="": format_bytes(value)))
