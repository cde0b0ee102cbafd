"""Values a benchmark reports rather than times (pure): asv's `track_` benchmarks (the
number the benchmark returns, in the unit it declares), `mem_` (the size of the object it
returns, bytes, as asv measures it with pympler's asizeof) and `peakmem_` (the peak resident
memory of the fresh process that ran it, bytes), or any other registered metric whose
figures are values (`core.metrics`, `valued`). One ValueStats per benchmark, one value per
fresh process it was measured in; `kind` is the metric's name."""
from __future__ import annotations

import dataclasses
import statistics
from typing import Any, Sequence

from benchkit.core.measure.task import TaskSpec
from benchkit.core.metrics.metric import is_metric, metric_named, registered


def value_kind(name: str) -> str:
    """`name` if it is a registered metric of returned values; a ValueError otherwise."""
    if not (is_metric(name) and metric_named(name).valued):
        known = [m.name for m in registered() if m.valued]
        raise ValueError(f"{name!r} is not a metric of returned values: benchkit knows "
                         f"{', '.join(known)}")
    return name


def ValueKind(name: str) -> str:  # noqa: N802 - the name old pickles call
    """What pickles of ValueStats made while kinds were an enum (before the metric registry)
    call to rebuild one: the metric's name, as a plain string."""
    return value_kind(name)


@dataclasses.dataclass
class ValueStats:
    """The values one benchmark reported, one per process, with their unit ("bytes" for
    mem and peakmem; the benchmark's own, e.g. "items", for track)."""

    task_spec: TaskSpec
    kind: str                       # a valued metric's name: track, mem, peakmem, ...
    unit: str
    values: list[float]
    metadata: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def median(self) -> float:
        """The median of the values."""
        return statistics.median(self.values)

    def to_dict(self) -> dict[str, Any]:
        """JSON form (metadata is written by the schema's codec)."""
        return {"task_spec": self.task_spec.to_dict(), "kind": str(self.kind),
                "unit": self.unit, "values": [float(v) for v in self.values]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "ValueStats":
        """Inverse of to_dict (of a document the schema has checked)."""
        return cls(TaskSpec.from_dict(d["task_spec"]), value_kind(d["kind"]), d["unit"],
                   [float(v) for v in d["values"]], d.get("metadata") or {})


def _shown(kind: str, unit: str, x: float) -> str:
    """A value as its metric writes it, with its unit (bytes in B/KiB/MiB)."""
    return metric_named(kind).shown(x, unit)


def format_values(items: Sequence[ValueStats]) -> str:
    """One row per ValueStats: benchmark, kind, the median value with its unit (bytes in
    KiB/MiB), the spread over processes."""
    from tabulate import tabulate

    from benchkit.core.records.records import benchmark_name
    from benchkit.core.text import one_line
    rows = [[one_line(benchmark_name(v)), str(v.kind), _shown(v.kind, v.unit, v.median),
             "" if min(v.values) == max(v.values) else
             f"{_shown(v.kind, v.unit, min(v.values))} .. {_shown(v.kind, v.unit, max(v.values))}",
             len(v.values)] for v in items]
    return tabulate(rows, headers=["benchmark", "kind", "value", "range", "processes"])


@dataclasses.dataclass(frozen=True)
class ValueChange:
    """One benchmark's value in two results files: `change` is new / base - 1 (None when
    base is 0). A value is what the benchmark reports, so the change is stated, not judged:
    no noise band applies to a count of items."""

    benchmark: str
    kind: str
    unit: str
    base: float
    new: float

    def describe(self) -> str:
        """'12 items -> 15 items (+25.0%)'."""
        change = "" if self.change is None else f" ({self.change:+.1%})"
        base, new = (_shown(self.kind, self.unit, x) for x in (self.base, self.new))
        return f"{base} -> {new}{change}"

    @property
    def change(self) -> float | None:
        """Relative change, or None when base is 0."""
        return self.new / self.base - 1 if self.base else None

    def to_json(self) -> dict[str, Any]:
        """As `compare --json` lists it under "values"."""
        return {"benchmark": self.benchmark, "kind": str(self.kind), "unit": self.unit,
                "base": self.base, "new": self.new, "change": self.change}


def compare_values(base: Sequence[ValueStats], new: Sequence[ValueStats]
                   ) -> list[ValueChange]:
    """The benchmarks with a value in both, in NEW's order, as ValueChanges of medians."""
    from benchkit.core.records.records import benchmark_name
    before = {(benchmark_name(v), v.kind): v for v in base}
    out = []
    for v in new:
        b = before.get((benchmark_name(v), v.kind))
        if b is not None:
            out.append(ValueChange(benchmark_name(v), v.kind, v.unit, b.median, v.median))
    return out


def format_value_changes(changes: Sequence[ValueChange]) -> str:
    """The table `compare` prints under the time verdicts."""
    from tabulate import tabulate

    from benchkit.core.text import one_line
    rows = [[one_line(c.benchmark), str(c.kind), _shown(c.kind, c.unit, c.base),
             _shown(c.kind, c.unit, c.new), "" if c.change is None else f"{c.change:+.1%}"]
            for c in changes]
    return tabulate(rows, headers=["benchmark", "kind", "base", "new", "change"])
