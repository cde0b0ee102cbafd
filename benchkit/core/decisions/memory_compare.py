"""Memory of two sides of a comparison (pure): exact per-run figures need no statistics, so
a change is any difference, and the memory gates (core.metrics.memory) read it directly."""
from __future__ import annotations

import dataclasses

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

    def value(self, figure: str) -> float:
        """A figure by name: 'allocations', 'bytes', 'peak' or 'retained' (what the memory
        gate of that name reads)."""
        return getattr(self, figure)


@dataclasses.dataclass(frozen=True)
class MemoryChange:
    """BASE and NEW memory per run of one benchmark."""

    base: MemoryFigures
    new: MemoryFigures

    @property
    def verdict(self) -> MemoryVerdict:
        """More or less memory per run (bytes requested, then allocations), or the same."""
        for metric in ("bytes", "allocations"):
            delta = self.new.value(metric) - self.base.value(metric)
            if delta:
                return MemoryVerdict.MORE if delta > 0 else MemoryVerdict.LESS
        return MemoryVerdict.SAME

    def describe(self) -> str:
        """'4 -> 6 allocs, 8.0 KiB -> 8.1 KiB' for a table cell."""
        return (f"{self.base.allocations:,.4g} -> {self.new.allocations:,.4g} allocs, "
                f"{format_bytes(self.base.bytes)} -> {format_bytes(self.new.bytes)}"
                + ("" if self.verdict is MemoryVerdict.SAME else f" ({self.verdict})"))

    def to_json(self) -> dict:
        """JSON form (`compare --json`)."""
        return {"base": dataclasses.asdict(self.base), "new": dataclasses.asdict(self.new),
                "verdict": self.verdict.value}

