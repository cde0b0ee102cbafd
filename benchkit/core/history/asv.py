"""asv results as history observations (pure: parsed JSON in, typed records out).

asv (airspeed velocity) keeps one JSON file per commit, machine and environment under
`results/<machine>/`, format version 2: `commit_hash`, `date` (the commit's date, in
milliseconds since the epoch), `params` (the machine), `env_name`, and `results`, which maps a
benchmark name to a list laid out as `result_columns` says: `result` (one value per point of
the parameter grid, null where it failed), `params` (the grid: one list of value reprs per
parameter), `stats_q_25`/`stats_q_75`, `stats_number`, `samples`, ... `benchmarks.json` next to
the machine folders gives each benchmark's `type` and `param_names`.

Only `time` benchmarks become observations (benchkit's history follows time and instruction
counts); the others are counted as skipped. A parameterised benchmark becomes one series per
grid point, named as benchkit names grid points: `name[n=1000,dtype='float32']`."""
from __future__ import annotations

import dataclasses
import datetime
import itertools
import math
from typing import Any

from benchkit.core.history.series import Commit, HistoryMetric, Observation
from benchkit.core.measurement import Measurement
from benchkit.core.schema import measurement_to_dict
from benchkit.core.task import TaskSpec
from benchkit.errors import HistoryError

SUPPORTED_VERSIONS = (2,)


@dataclasses.dataclass(frozen=True)
class AsvRun:
    """One asv results file: what benchkit's history takes from it."""

    commit: Commit
    machine: str
    measured_at: str
    environment: dict[str, Any]
    observations: tuple[Observation, ...]
    skipped: tuple[str, ...]        # benchmarks that are not `time` benchmarks, or failed


def _fail(where: str, what: str) -> HistoryError:
    return HistoryError(f"{where}: {what}; is this an asv results file (format version 2)?")


def _date(ms: Any) -> str:
    if not isinstance(ms, (int, float)) or not math.isfinite(ms):
        return ""
    stamp = datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc)
    return stamp.isoformat(timespec="seconds")


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _grid_names(name: str, param_names: list[str], grid: list[list[str]]) -> list[str]:
    if not grid:
        return [name]
    names = param_names if len(param_names) == len(grid) else [
        f"param{i + 1}" for i in range(len(grid))]
    return [f"{name}[{','.join(f'{k}={v}' for k, v in zip(names, point))}]"
            for point in itertools.product(*grid)]


def parse_run(document: Any, benchmarks: dict[str, Any], where: str) -> AsvRun:
    """One asv results document (`where` names it in errors); `benchmarks` is the parsed
    benchmarks.json of its results directory ({} when missing: every benchmark whose name
    starts with `time_` after its last dot is then taken as a time benchmark)."""
    if not isinstance(document, dict):
        raise _fail(where, "not a JSON object")
    if document.get("version") not in SUPPORTED_VERSIONS:
        raise _fail(where, f"results format version {document.get('version')!r} is not "
                           f"supported")
    sha, columns, results = (document.get("commit_hash"), document.get("result_columns"),
                             document.get("results"))
    if not isinstance(sha, str) or not sha:
        raise _fail(where, "no commit_hash")
    if not isinstance(columns, list) or not isinstance(results, dict):
        raise _fail(where, "no result_columns/results")
    machine_params = document.get("params") if isinstance(document.get("params"), dict) else {}
    machine = str(machine_params.get("machine") or "unknown")
    observations, skipped = [], []
    for name, row in sorted(results.items()):
        info = benchmarks.get(name) if isinstance(benchmarks.get(name), dict) else {}
        kind = info.get("type") or ("time" if name.rsplit(".", 1)[-1].startswith("time_")
                                    else "other")
        if kind != "time" or not isinstance(row, list):
            skipped.append(name)
            continue
        column = dict(zip(columns, row))
        values = column.get("result")
        grid = column.get("params") or []
        if not isinstance(values, list) or not isinstance(grid, list) or not all(
                isinstance(g, list) for g in grid):
            raise _fail(where, f"{name}: result/params are not lists")
        names = _grid_names(name, [str(p) for p in info.get("param_names") or []],
                            [[str(v) for v in g] for g in grid])
        if len(names) != len(values):
            raise _fail(where, f"{name}: {len(values)} results for {len(names)} grid points")
        for i, (series_name, value) in enumerate(zip(names, values)):
            value = _number(value)
            if value is None or value <= 0:
                skipped.append(series_name)          # failed, skipped or not run
                continue
            low, high, samples = (_at(column.get("stats_q_25"), i), _at(column.get(
                "stats_q_75"), i), column.get("samples"))
            times = [t for t in (samples[i] if isinstance(samples, list) and i < len(samples)
                                 and isinstance(samples[i], list) else [])
                     if _number(t) and t > 0] or [value]
            evidence = Measurement(1, times, TaskSpec(stmt=series_name, setup="",
                                                      label=series_name),
                                   {"source": "asv", "benchmark": series_name})
            observations.append(Observation(
                series_name, HistoryMetric.TIME, value, low if low and low <= value else value,
                high if high and high >= value else value, len(times),
                measurement_to_dict(evidence)))
    environment = {"source": "asv", "env_name": document.get("env_name"),
                   "python": document.get("python"), "machine": machine_params,
                   "requirements": document.get("requirements")}
    started = [_number(dict(zip(columns, r)).get("started_at")) for r in results.values()
               if isinstance(r, list)]
    started = [s for s in started if s is not None]
    return AsvRun(Commit(sha, _date(document.get("date")), None, ""), machine,
                  _date(min(started)) if started else "", environment, tuple(observations),
                  tuple(skipped))


def _at(values: Any, i: int) -> float | None:
    return _number(values[i]) if isinstance(values, list) and i < len(values) else None
