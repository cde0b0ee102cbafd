"""What the history knows about each metric, in one place (pure): how its steps are found
(exact or measured), where a point's evidence is kept, how a value reads in a line of text
and in a dashboard table, and how its chart is titled and scaled. Steps, the database's
evidence reader, the command line and the dashboard ask `kind_of(metric)` instead of
branching on metric names."""
from __future__ import annotations

import dataclasses
import math
from typing import Callable, Sequence

from benchkit.core.history.series import HistoryMetric
from benchkit.core.measure.memory import format_bytes
from benchkit.core.measure.stats import format_time

# An axis cannot change unit: times and sizes are shown in the unit of a series' median.
_TIME_UNITS = ((1.0, "s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns"))
_BYTES = ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB"), (1, "B"))


def _middle(values: Sequence[float]) -> float:
    finite = sorted(v for v in values if math.isfinite(v) and v > 0)
    return finite[len(finite) // 2] if finite else 1.0


def time_unit(values: Sequence[float], unit: str = "") -> tuple[float, str]:
    """(scale, unit) for times around the median of `values`."""
    middle = _middle(values)
    return next(((s, u) for s, u in _TIME_UNITS if middle >= s), _TIME_UNITS[-1])


def bytes_unit(values: Sequence[float], unit: str = "") -> tuple[float, str]:
    """(scale, unit) for sizes around the median of `values`."""
    middle = _middle(values)
    return next(((s, u) for s, u in _BYTES if middle >= s), _BYTES[-1])


def _count_unit(values: Sequence[float], unit: str = "") -> tuple[float, str]:
    return 1.0, "instructions"


def _own_unit(values: Sequence[float], unit: str = "") -> tuple[float, str]:
    return 1.0, unit


def _tracked(value: float, unit: str = "") -> str:
    return f"{value:,.6g}" + (f" {unit}" if unit else "")


@dataclasses.dataclass(frozen=True)
class SeriesKind:
    """One metric as the history treats it.

    `exact`: counted, not timed, so any change beyond the bands is a step (no statistics);
    `evidence`: the results-file section a point's stored evidence is read from (None: the
    step finder takes none); `title`: the chart's; `axis`: (scale, unit) of a chart axis or a
    dashboard cell for these values and the unit the series declares; `text`: a value in a
    line of text (`history show`, `regressions`); `from_zero`: the chart's axis starts at 0;
    `counted`: a dashboard cell shows the value as `text` writes it (a whole count)."""

    metric: HistoryMetric
    title: str
    exact: bool
    evidence: str | None
    axis: Callable[[Sequence[float], str], tuple[float, str]]
    text: Callable[..., str]
    from_zero: bool = False
    counted: bool = False

    def cell(self, value: float, unit: str = "") -> str:
        """A value as a dashboard table shows it: in the unit that suits it (a count as
        `text` writes it)."""
        if self.counted:
            return self.text(value, unit)
        scale, shown = self.axis([value], unit)
        return f"{value / scale:.4g}" + (f" {shown}" if shown else "")

    def chart_title(self, unit: str) -> str:
        """The chart's title, with the axis unit unless the title already names it."""
        return self.title + (f" ({unit})" if unit and unit not in self.title else "")


KINDS: dict[HistoryMetric, SeriesKind] = {kind.metric: kind for kind in (
    SeriesKind(HistoryMetric.TIME, "time per run", exact=False, evidence="measurements",
               axis=time_unit, text=lambda value, unit="": format_time(value)),
    SeriesKind(HistoryMetric.INSTRUCTIONS, "instructions per run", exact=True,
               evidence="callgrind", axis=_count_unit,
               text=lambda value, unit="": f"{value:,.0f}", from_zero=True, counted=True),
    # asv's mem_: the size of a returned object, exact; peakmem_ and track_ are measured
    SeriesKind(HistoryMetric.MEM, "size of the returned object", exact=True, evidence=None,
               axis=bytes_unit, text=lambda value, unit="": format_bytes(value)),
    SeriesKind(HistoryMetric.PEAKMEM, "peak memory", exact=False, evidence=None,
               axis=bytes_unit, text=lambda value, unit="": format_bytes(value)),
    SeriesKind(HistoryMetric.TRACK, "track", exact=False, evidence=None, axis=_own_unit,
               text=_tracked),
)}


def kind_of(metric: HistoryMetric) -> SeriesKind:
    """What the history knows about `metric`."""
    return KINDS[metric]
