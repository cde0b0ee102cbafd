"""The metric seam (pure): one `Metric` object per thing benchkit measures, owning its name
and unit, how its gates are spelled and judged on a comparison row, what "no change" means
for it (`exact`: any difference beyond the bands is real; else measured with statistics),
how its values read in text, in a table cell and on a chart axis, and how the history treats
its series. Compare, gates, history and the dashboard ask the registry (`metric_named`,
`metric_of_gate`) instead of branching on names; a new metric is one `register` call.

Built in: time, instructions and memory (benchkit's own measurements), and the values a
benchmark returns (`valued`): asv's mem and peakmem, and track (in the unit it declares)."""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, Sequence

from benchkit.errors import UnknownMetricError

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


def own_unit(values: Sequence[float], unit: str = "") -> tuple[float, str]:
    """(1, unit): values shown in the unit their series declares."""
    return 1.0, unit


def plain_text(value: float, unit: str = "") -> str:
    """'1,234.5 items': a value in its declared unit."""
    return f"{value:,.6g}" + (f" {unit}" if unit else "")


def relative_change(base: float, new: float) -> float:
    """new / base - 1; from a base of 0, any increase is unbounded (+inf), else 0."""
    if base:
        return new / base - 1
    return math.inf if new > base else 0.0


@dataclasses.dataclass(frozen=True)
class Judged:
    """What one gate says of one comparison row: broken (why), or left open by an
    inconclusive verdict (why); neither when it holds."""

    broken: str | None = None
    open: str | None = None


@dataclasses.dataclass(frozen=True)
class GateName:
    """A gate a metric takes: its name (`slower>5%`), whether it takes a percentage, an
    absolute `amount` per run, or both, an example for messages, and the history series
    it judges when that is not its metric's own (`series`)."""

    name: str
    relative: bool = True
    absolute: bool = False
    example: str = ""
    amount: str = "an amount"
    series: str = ""

    @property
    def shown(self) -> str:
        """The example, or NAME>5%."""
        return self.example or f"{self.name}>5%"


def _no_figures(side: Any, name: str) -> bool:
    return False


def _no_judge(row: Any, gate: Any) -> Judged:
    return Judged()


@dataclasses.dataclass(frozen=True)
class Metric:
    """One metric as benchkit treats it.

    `name`: how files, databases and the command line name it; `unit`: its values' unit
    ("" where each benchmark declares its own); `title`: a chart's; `exact`: counted, not
    timed, so any change beyond the bands is a step (no statistics); `valued`: its figures
    are values a benchmark returns, kept in a results file's `values` under this name.

    Gates: `gates` are the gate names it takes; `holds(side, benchmark)` says whether a
    comparison side has the figures they read (`figures` names them, `hint` says how to get
    them); `judge(row, gate)` decides one gate on one comparison row.

    History: `history` (whether series follow it); `evidence`: the results-file section a
    point's stored evidence is read from (None: the step finder takes none); `axis`:
    (scale, unit) of a chart axis or a table cell for these values and a series' declared
    unit; `text`: a value in a line of text; `from_zero`: the chart's axis starts at 0;
    `counted`: a table cell shows the value as `text` writes it (a whole count)."""

    name: str
    unit: str
    title: str
    exact: bool
    axis: Callable[[Sequence[float], str], tuple[float, str]] = own_unit
    text: Callable[..., str] = plain_text
    gates: tuple[GateName, ...] = ()
    holds: Callable[[Any, str], bool] = _no_figures
    judge: Callable[[Any, Any], Judged] = _no_judge
    figures: str = ""
    hint: str = ""
    valued: bool = False
    history: bool = True
    evidence: str | None = None
    from_zero: bool = False
    counted: bool = False

    def __str__(self) -> str:
        return self.name

    def shown(self, value: float, unit: str = "") -> str:
        """A value in a line of text, in its series' declared unit or else the metric's."""
        return self.text(value, unit or self.unit)

    def scale(self, values: Sequence[float], unit: str = "") -> tuple[float, str]:
        """(scale, unit) of a chart axis for `values`, in their series' declared unit or
        else the metric's."""
        return self.axis(values, unit or self.unit)

    def cell(self, value: float, unit: str = "") -> str:
        """A value as a table shows it: in the unit that suits it (a count as `text`
        writes it)."""
        if self.counted:
            return self.shown(value, unit)
        scale, shown = self.scale([value], unit)
        return f"{value / scale:.4g}" + (f" {shown}" if shown else "")

    def chart_title(self, unit: str) -> str:
        """The chart's title, with the axis unit unless the title already names it."""
        return self.title + (f" ({unit})" if unit and unit not in self.title else "")


_METRICS: dict[str, Metric] = {}
_GATES: dict[str, tuple[Metric, GateName]] = {}


def register(metric: Metric) -> Metric:
    """Add `metric` to the registry (and return it). Its name and gate names must be new."""
    taken = [g.name for g in metric.gates if g.name in _GATES]
    if metric.name in _METRICS or taken:
        raise ValueError(f"metric {metric.name!r}: the name or gate {taken} is registered")
    _METRICS[metric.name] = metric
    _GATES.update({g.name: (metric, g) for g in metric.gates})
    return metric


def unregister(name: str) -> None:
    """Remove the metric `name` and its gates (a test's metric, when the test ends)."""
    metric = _METRICS.pop(name)
    for gate in metric.gates:
        _GATES.pop(gate.name, None)


def registered() -> tuple[Metric, ...]:
    """Every registered metric, in registration order."""
    return tuple(_METRICS.values())


def is_metric(name: object) -> bool:
    """Whether `name` names a registered metric."""
    return isinstance(name, str) and name in _METRICS


def metric_named(name: str) -> Metric:
    """The registered metric `name`; an UnknownMetricError (a ValueError) naming the known
    ones otherwise."""
    try:
        return _METRICS[str(name)]
    except KeyError:
        raise UnknownMetricError(f"unknown metric {name!r}: benchkit knows "
                         f"{', '.join(_METRICS)}") from None


def gate_name(name: str) -> tuple[Metric, GateName] | None:
    """The metric whose gate is called `name`, and that gate's forms (None: no such gate)."""
    return _GATES.get(name)


def gate_forms() -> str:
    """Every gate's example, for messages: 'slower>5%', 'instructions>1%', ..."""
    shown = [f"'{g.shown}'" for _, g in _GATES.values()]
    return ", ".join(shown[:-1]) + f" or {shown[-1]}" if len(shown) > 1 else "".join(shown)


def history_metrics() -> tuple[str, ...]:
    """The names of the registered metrics the history follows."""
    return tuple(m.name for m in _METRICS.values() if m.history)


def history_metric(name: object) -> str:
    """`name` if the history follows a registered metric of that name; an
    UnknownMetricError (a ValueError) naming those it follows otherwise."""
    if isinstance(name, str) and name in _METRICS and _METRICS[name].history:
        return name
    raise UnknownMetricError(f"unknown metric {name!r}: the history follows "
                     f"{', '.join(history_metrics())}")
