"""benchkit results in asv's results format (pure): so an asv project's site (`asv publish`)
keeps working while it moves to benchkit, and `history import-asv` reads back what was
written. The inverse of core.history.asv.

A results file becomes one asv run (format 2: `result_columns`, one row per benchmark):
measurements of one asv benchmark's grid points (metadata `params`, task label the asv
name) become one row with its values in asv's order (the cartesian product of the values
seen, the last parameter fastest; combinations not measured are null, as asv writes a
failure, NaN a skip). The value is the median time per run in seconds, with the
quartiles, the runs per block (`number`) and the blocks (`repeat`); a track_, mem_ or
peakmem_ value (ValueStats) is its median over the processes, with asv's type and unit."""
from __future__ import annotations

import dataclasses
import itertools
import math
import re
from typing import Any

from benchkit.core.measure.measurement import Measurement
from benchkit.core.measure.stats import summarize
from benchkit.core.records.records import FailureKind, benchmark_name
from benchkit.core.records.schema import Results
from benchkit.core.records.values import ValueStats

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
