"""What a history holds (pure): one Observation per benchmark and metric of a results file,
and the Series of points, one per commit, that change points are found in."""
from __future__ import annotations

import dataclasses
import datetime
import statistics
from array import array
from typing import Any, Iterable, Iterator, NamedTuple, Sequence, overload

import numpy as np

from benchkit.core.decisions.bands import Band
from benchkit.core.enums import TextEnum
from benchkit.core.measure.measurement import speed_relative
from benchkit.core.measure.stats import summarize
from benchkit.core.metrics.metric import history_metric, metric_named
from benchkit.core.records.records import Side, benchmark_name
from benchkit.core.records.schema import Results, callgrind_to_dict, measurement_to_dict


class Status(TextEnum):
    """What became of a benchmark in one results file."""

    OK = "ok"
    FAILED = "failed"        # it raised, crashed or timed out: no value
    SKIPPED = "skipped"      # the suite skipped it (asv's NaN: SkipNotImplemented)


class Observation(NamedTuple):
    """One benchmark's figure in one results file. `value` is the median time per run
    (seconds) or the instructions per run; `low`/`high` the interquartile range of the times
    or the layout band of the counts; `units` the processes (or blocks) the time rests on, or
    the layouts counted. `evidence` is the item as a results file stores it. Immutable; a
    named tuple, as Point, because an import makes hundreds of thousands."""

    benchmark: str
    metric: str
    value: float | None
    low: float | None
    high: float | None
    units: int
    evidence: dict[str, Any] | None
    relative: float | None = None
    unit: str = ""
    status: Status = Status.OK

    @classmethod
    def failure(cls, benchmark: str, metric: str, status: Status,
                unit: str = "") -> "Observation":
        """A benchmark that ran and gave no value."""
        return cls(benchmark, metric, None, None, None, 0, None, None, unit, status)


def observations(results: Results) -> list[Observation]:
    """Every Measurement and CallgrindStats of `results`, as Observations. An A/B file's
    NEW side is what was measured at its revision; its BASE side is skipped."""
    out = []
    for m in results.measurements:
        if (m.metadata or {}).get("side") == Side.BASE:
            continue
        quartiles = summarize(m.times)
        units = len(m.processes) if m.processes else len(m.raw_times)
        out.append(Observation(benchmark_name(m), "time", m.median, quartiles.p25,
                               quartiles.p75, units, measurement_to_dict(m), speed_relative(m)))
    for v in results.values:
        # a returned value (asv's track_, mem_, peakmem_): its metric, and its unit where
        # the metric lets each benchmark declare one (track)
        metric = metric_named(history_metric(v.kind))
        out.append(Observation(benchmark_name(v), metric.name, v.median,
                               min(v.values), max(v.values), len(v.values), None, None,
                               "" if metric.unit else v.unit))
    for s in results.callgrind:
        if (s.metadata or {}).get("side") == Side.BASE:
            continue
        band = Band.of(s)
        out.append(Observation(benchmark_name(s), "instructions", band.median,
                               band.low, band.high, band.layouts, callgrind_to_dict(s)))
    return out


def utc_date(text: str) -> str:
    """An ISO 8601 date as UTC (`2026-01-01T05:00:00+00:00`), so that dates compare as text;
    "" for "" or anything that is not a date. A date without an offset is taken as UTC."""
    if not isinstance(text, str) or not text:
        return ""
    try:
        stamp = datetime.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return ""
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=datetime.timezone.utc)
    return stamp.astimezone(datetime.timezone.utc).isoformat(timespec="seconds")


@dataclasses.dataclass(frozen=True)
class Commit:
    """A git commit as the history orders them: by its position on the repository's
    first-parent line (`order`) when every point of a series has one, else by commit date
    in UTC, then by when it was first measured."""

    sha: str
    date: str            # ISO 8601 commit date in UTC ("" when unknown)
    order: int | None = None
    message: str = ""

    def key(self, measured_at: str = "") -> tuple:
        """The sort key of a point at this commit."""
        return (self.date, -1 if self.order is None else self.order, measured_at)


class Point(NamedTuple):
    """A series' value at one commit: the observations made there, merged. Time: the median
    of their medians, from the lowest first quartile to the highest third; instructions:
    the band over all layouts counted there. The observations themselves stay in the
    history (`HistoryDB.evidence`). Immutable; a named tuple because a history holds
    hundreds of thousands of them and a frozen dataclass costs 4x as much to make."""

    commit: Commit
    value: float
    low: float
    high: float
    units: int
    observations: int
    relative: float | None = None     # time over the speed probe (speed_relative)

    def band(self) -> Band:
        """The point as an instruction-count band (low, value, high)."""
        return Band(self.low, self.value, self.high, max(self.units, 1))

    @classmethod
    def of_values(cls, commit: Commit, values: Sequence[tuple]) -> "Point":
        """One point from (value, low, high, units, relative) of each observation at one
        commit."""
        if len(values) == 1:
            value, low, high, units, relative = values[0]
            return cls(commit, value, low, high, units, 1, relative)
        relatives = [v[4] for v in values]
        return cls(commit, statistics.median(v[0] for v in values), min(v[1] for v in values),
                   max(v[2] for v in values), sum(v[3] for v in values), len(values),
                   None if None in relatives else statistics.median(relatives))


def _column(kind: str, items: Iterable) -> array:
    """`items` as an array of `kind`: an array of that kind is taken as it is, not copied
    (the database reader hands over the columns it gathered and keeps none)."""
    return items if isinstance(items, array) and items.typecode == kind else array(kind, items)


class Points(Sequence[Point]):
    """A series' points held as columns: its Commits, and arrays of the values, lows,
    highs, units and observations (and relatives where there are any). About 50 bytes a
    point where a tuple of Points holds about 180 (a Point and its three floats), so a
    history of millions of values is read whole. Indexing and iterating give Points;
    `values`, `commits` and `relatives` give a column without making any."""

    __slots__ = ("commits", "_value", "_low", "_high", "_units", "_observations",
                 "relatives")

    def __init__(self, commits: Sequence[Commit], value: Iterable[float],
                 low: Iterable[float], high: Iterable[float], units: Iterable[int],
                 observations: Iterable[int],
                 relatives: Sequence[float | None] | None = None) -> None:
        self.commits = tuple(commits)
        self._value, self._low, self._high = _column("d", value), _column("d", low), _column(
            "d", high)
        self._units, self._observations = _column("q", units), _column("q", observations)
        self.relatives = (None if relatives is None or all(r is None for r in relatives)
                          else tuple(relatives))

    @classmethod
    def of(cls, points: Iterable[Point]) -> "Points":
        """The points as columns."""
        points = list(points)
        return cls([p.commit for p in points], [p.value for p in points],
                   [p.low for p in points], [p.high for p in points],
                   [p.units for p in points], [p.observations for p in points],
                   [p.relative for p in points])

    @property
    def values(self) -> np.ndarray:
        """The values, a read-only array."""
        out = np.frombuffer(self._value, dtype=float) if self._value else np.zeros(0)
        out.flags.writeable = False
        return out

    def __len__(self) -> int:
        return len(self.commits)

    @overload
    def __getitem__(self, index: int) -> Point: ...
    @overload
    def __getitem__(self, index: slice) -> "Points": ...

    def __getitem__(self, index):
        relatives = self.relatives
        if isinstance(index, slice):
            return Points(self.commits[index], self._value[index], self._low[index],
                          self._high[index], self._units[index], self._observations[index],
                          None if relatives is None else relatives[index])
        return Point(self.commits[index], self._value[index], self._low[index],
                     self._high[index], self._units[index], self._observations[index],
                     None if relatives is None else relatives[index])

    def __iter__(self) -> Iterator[Point]:
        relatives = self.relatives or (None,) * len(self.commits)
        return map(Point, self.commits, self._value, self._low, self._high, self._units,
                   self._observations, relatives)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or len(other) != len(self):
            return NotImplemented if not isinstance(other, Sequence) else False
        return all(a == b for a, b in zip(self, other))

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"Points({list(self)!r})"


def values_of(points: Sequence[Point]) -> np.ndarray:
    """The points' values as an array (a Points hands over its column)."""
    if isinstance(points, Points):
        return points.values
    return np.array([p.value for p in points], dtype=float)


def relatives_of(points: Sequence[Point]) -> list[float] | None:
    """Each point's time over the speed probe; None unless every point (of one or more)
    has one."""
    found = points.relatives if isinstance(points, Points) else [p.relative for p in points]
    return list(found) if found and all(found) else None


def at_first_quartile(points: Sequence[Point]) -> "Points | None":
    """The points with each value its first quartile (`low`: the 25th percentile of the
    runs a commit's time rests on, asv's `stats_q_25`), or None where a point has no first
    quartile above zero apart from its value, or a speed probe (its relative is of the
    median). What a shared machine's steals slow is some of a commit's runs: its first
    quartile is often quieter than its median."""
    if relatives_of(points) is not None:
        return None
    columns = points if isinstance(points, Points) else Points.of(points)
    lows = np.frombuffer(columns._low, dtype=float) if len(columns) else np.zeros(0)
    if (not len(lows) or not np.all(lows > 0) or not np.all(columns.values > 0)
            or np.array_equal(lows, columns.values)):
        return None
    return Points(columns.commits, columns._low, columns._low, columns._high,
                  columns._units, columns._observations)


def values_at_one_speed(points: Sequence[Point]) -> np.ndarray:
    """The points' values in units of the machine's speed when each was measured (time over
    the speed probe), scaled back to seconds by their median ratio; the values as they are
    where not every point has a speed probe. What a wall-time series' steps are judged on."""
    values = np.array(values_of(points), dtype=float)
    relatives = relatives_of(points)
    if relatives is None:
        return values
    relatives = np.array(relatives, dtype=float)
    return relatives * float(np.median(values / relatives))


def observations_of(points: Sequence[Point]) -> int:
    """How many observations the points merge (a Points sums its column)."""
    return sum(points._observations if isinstance(points, Points) else
               (p.observations for p in points))


def commits_of(points: Sequence[Point]) -> tuple[Commit, ...]:
    """The points' commits (a Points hands over its column)."""
    return points.commits if isinstance(points, Points) else tuple(p.commit for p in points)


@dataclasses.dataclass(frozen=True)
class Series:
    """One benchmark's metric on one machine in one environment, a point per commit in
    commit order. `failed` are the commits where it ran and gave no value; `by_date` says
    the order came from commit dates (no repository position for every point)."""

    benchmark: str
    metric: str
    machine: str
    points: Sequence[Point]       # a tuple, or Points (columns) as a database reads them
    environment: str = ""
    unit: str = ""
    failed: tuple[tuple[Commit, Status], ...] = ()
    by_date: bool = False
    evidence: bool = False       # whether the database keeps results-file items for it

    @property
    def key(self) -> tuple:
        """(benchmark, metric, machine, environment): which series this is."""
        return (self.benchmark, self.metric, self.machine, self.environment)
