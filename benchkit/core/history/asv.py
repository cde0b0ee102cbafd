"""asv results as history observations, and benchkit results as asv results (pure: parsed
JSON in, typed records out, and back).

asv (airspeed velocity) keeps one JSON file per commit, machine and environment under
`results/<machine>/`. Format version 2: `commit_hash`, `date` (the commit's date, in
milliseconds since the epoch), `params` (the machine), `env_name`, `python`,
`requirements`, and `results`, which maps a benchmark name to a list laid out as
`result_columns` says: `result` (one value per point of the parameter grid, null where it
failed, NaN where it was skipped), `params` (the grid: one list of value reprs per
parameter), `stats_q_25`/`stats_q_75`, `samples`, `started_at`, ... Format version 1 (asv
before 0.5): `results` maps a name to a bare value, or to `{"result": ..., "params": ...,
"stats": [...]}`. `benchmarks.json` next to the machine folders gives each benchmark's
`type` (time, memory, peakmemory, track), `unit` and `param_names`.

Every benchmark type arrives with its metric (time, mem, peakmem, track with its unit); a
parameterised benchmark becomes one series per grid point, named as benchkit names grid
points: `name[n=1000,dtype='float32']`. A failed
benchmark is an Observation without a value (status failed), a skipped one likewise
(status skipped): both stay visible in the history.

Written too (`to_asv`): benchkit results in asv's results format, so an asv project's site
(`asv publish`) keeps working while it moves to benchkit, and `history import-asv` reads
back what was written.

A results file becomes one asv run (format 2: `result_columns`, one row per benchmark):
measurements of one asv benchmark's grid points (metadata `params`, task label the asv
name) become one row with its values in asv's order (the cartesian product of the values
seen, the last parameter fastest; combinations not measured are null, as asv writes a
failure, NaN a skip). The value is the median time per run in seconds, with the
quartiles, the runs per block (`number`) and the blocks (`repeat`); a track_, mem_ or
peakmem_ value (ValueStats) is its median over the processes, with asv's type and unit."""
from __future__ import annotations

import dataclasses
import datetime
import functools
import itertools
import math
import re
from typing import Any

from benchkit.core.history.series import Commit, Observation, Status
from benchkit.core.measure.measurement import Measurement
from benchkit.core.measure.stats import summarize
from benchkit.core.metrics.metric import metric_named
from benchkit.core.records.records import FailureKind, benchmark_name
from benchkit.core.records.schema import Results
from benchkit.core.records.values import ValueStats
from benchkit.errors import HistoryError

SUPPORTED_VERSIONS = (1, 2)
# asv's benchmark types -> the history's metrics
METRICS = {"time": "time", "memory": "mem",
           "peakmemory": "peakmem", "track": "track"}
PREFIXES = {"time_": "time", "timeraw_": "time", "mem_": "memory", "peakmem_": "peakmemory",
            "track_": "track"}
MAX_GRID = 100_000          # grid points of one benchmark in one file


@dataclasses.dataclass(frozen=True)
class AsvRun:
    """One asv results file: what benchkit's history takes from it."""

    commit: Commit
    machine: str
    measured_at: str
    environment: dict[str, Any]
    env_name: str
    observations: tuple[Observation, ...]
    ignored: tuple[str, ...]        # benchmarks of a type the history does not follow
    # benchmarks measured with code older than benchmarks.json's (another `version`): as
    # `asv publish` does, their results are left out, so a rewritten benchmark is not a step
    outdated: tuple[str, ...] = ()


def _fail(where: str, what: str) -> HistoryError:
    return HistoryError(f"{where}: {what}")


def _date(ms: Any) -> str:
    if isinstance(ms, bool) or not isinstance(ms, (int, float)) or not math.isfinite(ms):
        return ""
    try:
        stamp = datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc)
    except (OverflowError, OSError, ValueError):
        return ""
    return stamp.isoformat(timespec="seconds")


def _number(value: Any) -> float | None:
    if type(value) is float:       # nearly every value: the fast path of an import
        return value if math.isfinite(value) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        value = float(value)
    except OverflowError:
        return None
    return value if math.isfinite(value) else None


def _kind(name: str, info: dict[str, Any]) -> str:
    kind = info.get("type")
    if isinstance(kind, str) and kind:
        return kind
    last = name.rsplit(".", 1)[-1]
    return next((k for prefix, k in PREFIXES.items() if last.startswith(prefix)), "other")


@functools.lru_cache(maxsize=4096)
def grid_point_names(name: str, param_names: tuple[str, ...],
                     grid: tuple[tuple[str, ...], ...]) -> tuple[str, ...]:
    """The name of each point of an asv benchmark's parameter grid (values as asv shows
    them, in asv's order: the last parameter varies fastest), `name[n=100,kind='a']`; one
    name when there is no grid. ValueError beyond MAX_GRID points."""
    # cached: the same benchmark has the same grid in each of thousands of files
    if not grid:
        return (name,)
    size = math.prod(len(g) for g in grid)
    if size > MAX_GRID:
        raise ValueError(f"{name}: a grid of {size} points (at most {MAX_GRID})")
    names = param_names if len(param_names) == len(grid) else [
        f"param{i + 1}" for i in range(len(grid))]
    return tuple(f"{name}[{','.join(f'{k}={v}' for k, v in zip(names, point))}]"
                 for point in itertools.product(*grid))


def env_name_of(document: dict[str, Any]) -> str:
    """asv's environment name of a results file: its `env_name`, or (format 1) one made of
    the Python version and the requirements, as asv names them."""
    name = document.get("env_name")
    if isinstance(name, str) and name:
        return name
    parts = [f"py{document.get('python')}"] if document.get("python") else []
    requirements = document.get("requirements")
    if isinstance(requirements, dict):
        parts += [f"{k}{v}" if v else k for k, v in sorted(requirements.items(),
                                                             key=lambda kv: str(kv[0]))
                  if isinstance(k, str) and isinstance(v, (str, type(None)))]
    return "-".join(str(p) for p in parts)


def _columns_1(value: Any) -> dict[str, Any]:
    """A format-1 result as format 2's named columns."""
    if not isinstance(value, dict):
        return {"result": [value], "params": []}
    result = value.get("result")
    stats = value.get("stats")
    stats = stats if isinstance(stats, list) else [stats]
    column = {"result": result if isinstance(result, list) else [result],
              "params": value.get("params") or [], "samples": value.get("samples")}
    column["stats_q_25"] = [s.get("q_25") if isinstance(s, dict) else None for s in stats]
    column["stats_q_75"] = [s.get("q_75") if isinstance(s, dict) else None for s in stats]
    return column


def parse_run(document: Any, benchmarks: dict[str, Any], where: str) -> AsvRun:
    """One asv results document (`where` names it in errors); `benchmarks` is the parsed
    benchmarks.json of its results directory ({} when missing: a benchmark's type then
    comes from its name, as asv names them). Damaged entries of single benchmarks are
    failures of those benchmarks; a document without a commit or results is an error."""
    if not isinstance(document, dict):
        raise _fail(where, "not a JSON object")
    version = document.get("version")
    if version not in SUPPORTED_VERSIONS:
        raise _fail(where, f"results format version {version!r} (benchkit reads asv's "
                           f"versions {', '.join(map(str, SUPPORTED_VERSIONS))})")
    sha, results = document.get("commit_hash"), document.get("results")
    if not isinstance(sha, str) or not sha:
        raise _fail(where, "no commit_hash")
    if not isinstance(results, dict):
        raise _fail(where, "no results")
    columns = document.get("result_columns")
    if version == 2 and not (isinstance(columns, list) and "result" in columns
                             and all(isinstance(c, str) for c in columns)):
        raise _fail(where, "no result_columns")
    machine_params = document.get("params") if isinstance(document.get("params"), dict) else {}
    machine = str(machine_params.get("machine") or "unknown")
    observations, ignored, outdated = [], [], []
    started = []
    versions_1 = document.get("benchmark_version") if version == 1 else None
    for name, row in results.items():
        if not isinstance(name, str) or not name:
            continue
        info = benchmarks.get(name) if isinstance(benchmarks.get(name), dict) else {}
        metric = METRICS.get(_kind(name, info))
        if metric is None:
            ignored.append(name)
            continue
        unit = info.get("unit") if isinstance(info.get("unit"), str) else ""
        if metric_named(metric).unit:        # its own unit; track's is the benchmark's
            unit = ""
        column = (_columns_1(row) if version == 1 else
                  dict(zip(columns, row)) if isinstance(row, list) else None)
        measured_with = (versions_1.get(name) if isinstance(versions_1, dict) else
                         column.get("version") if isinstance(column, dict) else None)
        current = info.get("version")
        if isinstance(current, str) and isinstance(measured_with, str) \
                and measured_with != current:
            outdated.append(name)
            continue
        declared = info.get("param_names")
        param_names = [str(p) for p in declared if isinstance(p, (str, int))] if isinstance(
            declared, list) else []
        observations += _observations(name, metric, unit, column, param_names)
        if column is not None:
            value = _number(column.get("started_at"))
            if value is not None:
                started.append(value)
    environment = {"source": "asv", "env_name": env_name_of(document),
                   "python": document.get("python"), "machine": machine_params,
                   "requirements": document.get("requirements")}
    return AsvRun(Commit(sha, _date(document.get("date")), None, ""), machine,
                  _date(min(started)) if started else "", environment,
                  environment["env_name"], tuple(observations), tuple(ignored),
                  tuple(outdated))


def _observations(name: str, metric: str, unit: str, column: dict | None,
                  param_names: list[str]) -> list[Observation]:
    """The observations of one benchmark's entry; an entry that cannot be read is one
    failed observation under the benchmark's name."""
    values = None if column is None else column.get("result")
    grid = [] if column is None else (column.get("params") or [])
    if values is None:
        # asv: [None, [], ...] -- the benchmark (or its setup) failed as a whole
        return [Observation.failure(name, metric, Status.FAILED, unit)]
    try:
        if not isinstance(values, list) or not isinstance(grid, list) or not all(
                isinstance(g, list) for g in grid):
            raise ValueError("result/params are not lists")
        names = grid_point_names(name, tuple(param_names), tuple(tuple(str(v) for v in g)
                                                            for g in grid))
        if len(names) != len(values):
            raise ValueError(f"{len(values)} results for {len(names)} grid points")
    except ValueError:
        return [Observation.failure(name, metric, Status.FAILED, unit)]
    q25, q75, samples = (_list(column.get(k)) for k in ("stats_q_25", "stats_q_75", "samples"))
    out = []
    for i, (series_name, raw) in enumerate(zip(names, values)):
        value = _number(raw)
        if value is None:
            nan = isinstance(raw, float) and math.isnan(raw)
            out.append(Observation.failure(series_name, metric,
                                           Status.SKIPPED if nan else Status.FAILED, unit))
            continue
        low = _number(q25[i]) if i < len(q25) else None
        high = _number(q75[i]) if i < len(q75) else None
        count = len(samples[i]) if i < len(samples) and isinstance(samples[i], list) else 1
        out.append(Observation(
            series_name, metric, value,
            low if low is not None and low <= value else value,
            high if high is not None and high >= value else value,
            max(count, 1), None, None, unit))
    return out


def _list(values: Any) -> list:
    return values if isinstance(values, list) else []


COLUMNS = ["result", "params", "version", "started_at", "duration", "stats_ci_99_a",
           "stats_ci_99_b", "stats_q_25", "stats_q_75", "stats_number", "stats_repeat"]
VERSION = "benchkit"     # asv's per-benchmark code version; the same in benchmarks.json
_ASV_TYPE = {"track": "track", "mem": "memory", "peakmem": "peakmemory"}     # asv's names
_PAIRS = re.compile(r",(?=[A-Za-z_]\w*=)")     # between the k=v of a grid point's name


@dataclasses.dataclass(frozen=True)
class AsvExport:
    """What to write under asv's results directory: `machine_json` as MACHINE/machine.json,
    `run` as MACHINE/`file_name`, and `benchmarks` merged into benchmarks.json (entries
    there already are kept)."""

    machine: str
    machine_json: dict[str, Any]
    file_name: str
    run: dict[str, Any]
    benchmarks: dict[str, dict[str, Any]]


def _grid(points: list[tuple[dict[str, str], Any]]) -> tuple[list[str], list[list[str]]]:
    names: list[str] = []
    for params, _ in points:
        names += [n for n in params if n not in names]
    values = [list(dict.fromkeys(params[n] for params, _ in points if n in params))
              for n in names]
    return names, values


def to_asv(results: Results, *, commit: str, commit_date_ms: int, started_ms: int,
           machine: str, env_name: str) -> AsvExport:
    """The asv documents of one results file measured at `commit` on `machine`."""
    groups: dict[str, list[tuple[dict[str, str], Any]]] = {}
    for m in [*results.measurements, *results.values]:
        params = (m.metadata or {}).get("params")
        name = benchmark_name(m)
        if isinstance(params, dict) and params:
            base = name.split("[", 1)[0]         # a grid point's name is base[k=v,...]
            groups.setdefault(base, []).append(({str(k): str(v) for k, v in params.items()},
                                                m))
        else:
            groups.setdefault(name, []).append(({}, m))
    for failure in results.failures:
        # a grid point asv skipped or that failed: NaN or null in its place, as asv writes it
        base, _, inner = failure.benchmark.partition("[")
        value = math.nan if failure.kind is FailureKind.SKIPPED else None
        params = dict(pair.split("=", 1) for pair in _PAIRS.split(inner[:-1]) if "=" in pair)
        groups.setdefault(base, []).append((params, value))
    rows: dict[str, list[Any]] = {}
    benchmarks: dict[str, dict[str, Any]] = {}
    for name, points in groups.items():
        names, values = _grid(points)
        combos = list(itertools.product(*values)) if names else [()]
        at = {tuple(params.get(n) for n in names): m for params, m in points}
        chosen = [at.get(combo) for combo in combos]

        timed = [(m, summarize(m.times)) if isinstance(m, Measurement) else None
                 for m in chosen]

        def column(read):
            return [None if t is None else read(*t) for t in timed]
        rows[name] = [[m if m is None or isinstance(m, float) else m.median for m in chosen],
                      values, VERSION, started_ms, None,
                      [None] * len(chosen), [None] * len(chosen),
                      column(lambda m, s: s.p25), column(lambda m, s: s.p75),
                      column(lambda m, s: m.number_per_run),
                      column(lambda m, s: len(m.raw_times))]
        kind, unit = next(((_ASV_TYPE[str(m.kind)], m.unit) for m in chosen
                           if isinstance(m, ValueStats)), ("time", "seconds"))
        benchmarks[name] = {"name": name, "type": kind, "unit": unit, "code": "",
                            "params": values, "param_names": names, "version": VERSION,
                            "timeout": 60.0, "number": 0, "repeat": 0}
    env = results.environment
    python = ".".join(str(env.get("python", "")).split(".")[:2])
    machine_json = {"machine": machine, "arch": str(env.get("machine", "")),
                    "cpu": str(env.get("cpu_model", "")), "num_cpu": str(env.get("cpu_count", "")),
                    "os": str(env.get("os", "")), "ram": "", "version": 1}
    run = {"commit_hash": commit, "env_name": env_name, "date": commit_date_ms,
           "params": {**{k: v for k, v in machine_json.items() if k != "version"},
                      "python": python},
           "python": python, "requirements": {}, "env_vars": {}, "result_columns": COLUMNS,
           "results": rows, "durations": {}, "version": 2}
    return AsvExport(machine, machine_json, f"{commit[:8]}-{env_name}.json", run, benchmarks)
