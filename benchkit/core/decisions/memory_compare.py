"""Memory of two sides of a comparison (pure): exact per-run figures need no statistics, so
a change is any difference, and the memory gates read it directly."""
from __future__ import annotations

import dataclasses

from benchkit.core.decisions.gates import Gate, Metric
from benchkit.core.enums import TextEnum
from benchkit.core.measure.memory import MemoryStats, format_bytes


class MemoryVerdict(TextEnum):
    """NEW's memory per run against BASE's (bytes requested, then allocations)."""

    MORE = "more"
    LESS = "less"
    SAME = "same"


@dataclasses.dataclass(frozen=True)
class MemoryFigures:
    """One side's per-run figures."""

    allocations: float
    bytes: float
    peak: float
    retained: float

    @classmethod
    def of(cls, stats: MemoryStats) -> "MemoryFigures":
        """The figures of a MemoryStats."""
        return cls(stats.allocations_per_run, stats.bytes_per_run, stats.peak_bytes,
                   stats.retained_bytes_per_run)

    def value(self, metric: Metric) -> float:
        """The figure a memory gate reads."""
        return getattr(self, metric.value)


@dataclasses.dataclass(frozen=True)
class MemoryChange:
    """BASE and NEW memory per run of one benchmark."""

    base: MemoryFigures
    new: MemoryFigures

    @property
    def verdict(self) -> MemoryVerdict:
        """More or less memory per run (bytes requested, then allocations), or the same."""
        for metric in (Metric.BYTES, Metric.ALLOCATIONS):
            delta = self.new.value(metric) - self.base.value(metric)
            if delta:
                return MemoryVerdict.MORE if delta > 0 else MemoryVerdict.LESS
        return MemoryVerdict.SAME

    def relative(self, metric: Metric) -> float | None:
        """NEW / BASE - 1 of a figure (None when BASE is 0)."""
        base = self.base.value(metric)
        return self.new.value(metric) / base - 1 if base else None

    def breaks(self, gate: Gate) -> str | None:
        """Why this change breaks the memory `gate` (None: it does not)."""
        metric = gate.metric
        new = self.new.value(metric)
        if metric is Metric.RETAINED:
            return (f"{gate}: {format_bytes(new)} retained per run" if new > gate.limit
                    else None)
        delta = new - self.base.value(metric)
        if gate.relative:
            change = self.relative(metric)
            if change is None:                  # from nothing: any increase is unbounded
                change = float("inf") if delta > 0 else 0.0
            return (f"{gate}: {_show(metric, self.base.value(metric))} -> {_show(metric, new)}"
                    f" per run ({change:+.1%})" if change > gate.limit else None)
        return (f"{gate}: {_show(metric, self.base.value(metric))} -> {_show(metric, new)} "
                "per run" if delta > gate.limit else None)

    def describe(self) -> str:
        """'4 -> 6 allocs, 8.0 KiB -> 8.1 KiB' for a table cell."""
        return (f"{self.base.allocations:,.4g} -> {self.new.allocations:,.4g} allocs, "
                f"{format_bytes(self.base.bytes)} -> {format_bytes(self.new.bytes)}"
                + ("" if self.verdict is MemoryVerdict.SAME else f" ({self.verdict})"))

    def to_json(self) -> dict:
        """JSON form (`compare --json`)."""
        return {"base": dataclasses.asdict(self.base), "new": dataclasses.asdict(self.new),
                "verdict": self.verdict.value}


def _show(metric: Metric, value: float) -> str:
    return f"{value:,.4g}" if metric is Metric.ALLOCATIONS else format_bytes(value)
