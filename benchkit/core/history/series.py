"""What a history holds (pure): one Observation per benchmark and metric of a results file,
and the Series of points, one per commit, that change points are found in."""
from __future__ import annotations

import dataclasses
import datetime
import statistics
from typing import Any, Iterable, NamedTuple, Sequence

from benchkit.core.decisions.bands import Band
from benchkit.core.enums import TextEnum
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


@dataclasses.dataclass(frozen=True)
class Series:
    """One benchmark's metric on one machine in one environment, a point per commit in
    commit order. `failed` are the commits where it ran and gave no value; `by_date` says
    the order came from commit dates (no repository position for every point)."""

    benchmark: str
    metric: str
    machine: str
    points: tuple[Point, ...]
    environment: str = ""
    unit: str = ""
    failed: tuple[tuple[Commit, Status], ...] = ()
    by_date: bool = False
    evidence: bool = False       # whether the database keeps results-file items for it


def _series_from_points(key: tuple, points: Sequence[Point], measured: Sequence[str],
                        failures: Sequence[tuple] = (), *, unit: str = "",
                        evidence: bool = False) -> Series:
    """One series from the history database's observations of it (`key`: benchmark,
    metric, machine, environment; `points`: a Point of each observation with a value, and
    `measured` when each was measured; `failures`: Commit, measured_at, status of each
    without; `evidence`: whether results-file items are stored for it): a point per commit
    that has values (the observation's own Point where it is the only one), in commit order
    (first-parent position when every commit has one, else UTC date, then first measured),
    and the commits where it only failed."""
    benchmark, metric, machine, env = key
    at: dict[str, list[int]] = {}              # sha -> its observations, in the order given
    commits: dict[str, Commit] = {}
    first: dict[str, str] = {}
    for i, point in enumerate(points):
        sha = point.commit.sha
        found = at.get(sha)
        if found is None:
            at[sha] = [i]
            commits[sha] = point.commit
            first[sha] = measured[i]
        else:
            found.append(i)
            first[sha] = min(first[sha], measured[i])
    statuses: dict[str, str] = {}
    for commit, measured_at, status in failures:
        statuses.setdefault(commit.sha, status)
        if commit.sha not in commits:
            commits[commit.sha] = commit
            first[commit.sha] = measured_at
        else:
            first[commit.sha] = min(first[commit.sha], measured_at)
    by_date = any(c.order is None for c in commits.values())
    if by_date:
        ordered = sorted(commits, key=lambda sha: (
            commits[sha].date, -1 if commits[sha].order is None else commits[sha].order,
            first[sha]))
    else:
        ordered = sorted(commits, key=lambda sha: (commits[sha].order, commits[sha].date,
                                                   first[sha]))
    merged = []
    for sha in ordered:
        found = at.get(sha)
        if found is None:
            continue
        if len(found) == 1:
            merged.append(points[found[0]])
        else:
            merged.append(Point.of_values(commits[sha], [
                (p.value, p.low, p.high, p.units, p.relative)
                for p in (points[i] for i in found)]))
    failed = tuple((commits[sha], Status(statuses[sha])) for sha in ordered
                   if sha in statuses and sha not in at)
    return Series(benchmark, history_metric(metric), machine, tuple(merged), env, unit, failed,
                  by_date, evidence)


def series_from_observations(values: Iterable[tuple], failures: Iterable[tuple],
                             extras: Iterable[tuple], runs: dict[int, tuple],
                             names: dict[int, tuple[str, str]]) -> list[Series]:
    """Every series of a history database's observations, sorted by benchmark, metric,
    machine and environment. The rows, read by the caller: `values` (bench, run, value,
    low, high, units, relative) of each observation with a value, low or high None where it
    is the value; `failures` (bench, run, status) of each without; `extras` (bench, run,
    unit, whether evidence is stored) of the few that carry them. `runs`: run id -> (Commit,
    machine, environment, measured_at); `names`: benchmark id -> (name, metric). Rows of
    other runs or benchmarks are passed over. Each value is made its Point as it is read,
    and that Point is the series' own where its commit has one value: one object a value
    at the peak, not a row and then a point (4,000,000 values: 0.7 GiB)."""
    groups: dict[tuple, tuple[list, list, list, list]] = {}

    def lists_of(bench: int, at: tuple) -> tuple[list, list, list, list]:
        key = (bench, at[1], at[2])
        return groups.get(key) or groups.setdefault(key, ([], [], [], []))

    for bench, run, value, low, high, units, relative in values:
        at = runs.get(run)
        if at is not None and bench in names:
            lists = lists_of(bench, at)
            lists[0].append(Point(at[0], value, value if low is None else low,
                                  value if high is None else high, units, 1, relative))
            lists[1].append(at[3])
    for bench, run, status in failures:
        at = runs.get(run)
        if at is not None and bench in names:
            lists_of(bench, at)[2].append((at[0], at[3], status))
    for bench, run, unit, has_evidence in extras:
        at = runs.get(run)
        if at is not None and bench in names:
            lists_of(bench, at)[3].append((unit, has_evidence))
    out = []
    for key in sorted(groups, key=lambda k: (*names[k[0]], k[1], k[2])):
        points, measured, failed, extra = groups.pop(key)   # each let go of as it is made
        out.append(_series_from_points(
            (*names[key[0]], key[1], key[2]), points, measured, failed,
            unit=next((u for u, _ in reversed(extra) if u), ""),
            evidence=any(e for _, e in extra)))
    return out


@dataclasses.dataclass(frozen=True)
class Summary:
    """What `history list` prints: per benchmark and metric, the machines, commits and
    observations held, and the commits where it only failed or was skipped."""

    benchmark: str
    metric: str
    machines: tuple[str, ...]
    commits: int
    observations: int
    first: str
    last: str
    failed: int = 0


def summaries(series_list: Sequence[Series]) -> list[Summary]:
    """Per benchmark and metric of `series_list`: machines, commits and observations."""
    merged: dict[tuple[str, str], Summary] = {}
    for series in series_list:
        # a benchmark that never gave a value is held too: its failures are what there is
        ends = [p.commit for p in series.points] or [c for c, _ in series.failed]
        if not ends:
            continue
        key = (series.benchmark, str(series.metric))
        count = sum(p.observations for p in series.points)
        prior = merged.get(key) or Summary(*key, (), 0, 0, ends[0].sha, ends[-1].sha)
        machines = prior.machines + ((series.machine,) if series.machine not in
                                     prior.machines else ())
        merged[key] = dataclasses.replace(
            prior, machines=machines, commits=max(prior.commits, len(series.points)),
            observations=prior.observations + count,
            failed=max(prior.failed, len(series.failed)))
    return list(merged.values())


def shared_places(series_list: Iterable[Series]) -> dict[int, set[str]]:
    """The places on the first-parent line that more than one commit of a series holds, and
    those commits: results of two lines of history in one database (a branch's beside
    main's, each counted on its own line), which a series can only order by date."""
    shared: dict[int, set[str]] = {}
    for series in series_list:
        if series.by_date:
            continue
        holders: dict[int, set[str]] = {}
        for point in series.points:
            holders.setdefault(point.commit.order, set()).add(point.commit.sha)
        for place, shas in holders.items():
            if len(shas) > 1:
                shared.setdefault(place, set()).update(shas)
    return shared
