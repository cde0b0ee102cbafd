"""Instruction counts per run as bands over memory layouts, and the change claimed between
two bands (pure)."""
from __future__ import annotations

import dataclasses
from typing import Any

from benchkit.core.enums import TextEnum


class CountVerdict(TextEnum):
    """Instruction counts of NEW relative to BASE, beyond both layout bands."""

    MORE = "more"
    FEWER = "fewer"
    SAME = "same"


@dataclasses.dataclass(frozen=True)
class Band:
    """Instructions per run over the memory layouts collected: min, median, max."""

    low: float
    median: float
    high: float
    layouts: int = 1

    @classmethod
    def of(cls, stats_: Any) -> "Band":
        """The band of a CallgrindStats (one value without layouts)."""
        layouts = (stats_.metadata or {}).get("layouts")
        if layouts and layouts.get("per_run"):
            values = sorted(layouts["per_run"])
            mid = values[len(values) // 2] if len(values) % 2 else (
                values[len(values) // 2 - 1] + values[len(values) // 2]) / 2
            return cls(values[0], mid, values[-1], len(values))
        v = stats_.per_run()
        return cls(v, v, v, 1)

    def __str__(self) -> str:
        if self.layouts == 1:
            return f"{self.median:,.0f}"
        return f"{self.median:,.0f} [{self.low:,.0f}..{self.high:,.0f}]"


def instruction_change(base: Band, new: Band) -> float:
    """Relative change claimed beyond both bands: 0 when they overlap, else the gap between
    the nearest ends (new.low/base.high - 1 when NEW is above)."""
    if not base.high > 0:
        return 0.0
    if new.low > base.high:
        return new.low / base.high - 1
    if new.high < base.low:
        return new.high / base.low - 1
    return 0.0
