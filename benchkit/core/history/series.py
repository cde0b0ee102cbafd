"""What a history holds (pure): one Observation per benchmark and metric of a results file,
and the Series of points, one per commit, that change points are found in."""
from __future__ import annotations

import dataclasses
import statistics
from typing import Any, Sequence

from benchkit.core.bands import Band
from benchkit.core.enums import TextEnum
from benchkit.core.records import Side, benchmark_name
from benchkit.core.schema import Results, callgrind_to_dict, measurement_to_dict
from benchkit.core.stats import summarize


class HistoryMetric(TextEnum):
    """What a series follows: wall time per run (seconds) or instructions per run."""

    TIME = "time"
    INSTRUCTIONS = "instructions"


@dataclasses.dataclass(frozen=True)
class Observation:
    """One benchmark's figure in one results file. `value` is the median time per run
    (seconds) or the instructions per run; `low`/`high` the interquartile range of the times
    or the layout band of the counts; `units` the processes (or blocks) the time rests on, or
    the layouts counted. `evidence` is the item as a results file stores it."""

    benchmark: str
    metric: HistoryMetric
    value: float
    low: float
    high: float
    units: int
    evidence: dict[str, Any]
    relative: float | None = None


def probe_relative_times(m: Any) -> list[list[float]] | None:
    """Per process, each run's time over the speed probe taken just before its chunk: times
    in units of the machine's speed at that moment. None unless every process has probes."""
    if not m.processes or not all(p.probes and min(p.probes) > 0 for p in m.processes):
        return None
    return [[t / probe for probe, chunk in zip(sample.probes, chunks) for t in chunk]
            for sample, chunks in zip(m.processes, m.chunk_times())]


def speed_relative(m: Any) -> float | None:
    """The median of probe_relative_times: a machine that ran 1.6x slower for a while (seen
    on this VM) does not look like a step. None without probes."""
    relative = probe_relative_times(m)
    flat = [t for process in relative or [] for t in process]
    return statistics.median(flat) if flat else None


def observations(results: Results) -> list[Observation]:
    """Every Measurement and CallgrindStats of `results`, as Observations. An A/B file's
    NEW side is what was measured at its revision; its BASE side is skipped."""
    out = []
    for m in results.measurements:
        if (m.metadata or {}).get("side") == Side.BASE:
            continue
        quartiles = summarize(m.times)
        units = len(m.processes) if m.processes else len(m.raw_times)
        out.append(Observation(benchmark_name(m), HistoryMetric.TIME, m.median, quartiles.p25,
                               quartiles.p75, units, measurement_to_dict(m), speed_relative(m)))
    for s in results.callgrind:
        if (s.metadata or {}).get("side") == Side.BASE:
            continue
        band = Band.of(s)
        out.append(Observation(benchmark_name(s), HistoryMetric.INSTRUCTIONS, band.median,
                               band.low, band.high, band.layouts, callgrind_to_dict(s)))
    return out


@dataclasses.dataclass(frozen=True)
class Commit:
    """A git commit as the history orders them: by commit date, then by its number of
    ancestors (`order`, None when unknown), then by when it was first measured."""

    sha: str
    date: str            # ISO 8601 commit date ("" when unknown)
    order: int | None = None
    message: str = ""

    def key(self, measured_at: str = "") -> tuple:
        """The sort key of a point at this commit."""
        return (self.date, -1 if self.order is None else self.order, measured_at)


@dataclasses.dataclass(frozen=True)
class Point:
    """A series' value at one commit: the observations made there, merged. Time: the median
    of their medians, from the lowest first quartile to the highest third; instructions:
    the band over all layouts counted there. The observations themselves stay in the
    history (`HistoryDB.evidence`)."""

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


@dataclasses.dataclass(frozen=True)
class Series:
    """One benchmark's metric on one machine, a point per commit in commit order."""

    benchmark: str
    metric: HistoryMetric
    machine: str
    points: tuple[Point, ...]
