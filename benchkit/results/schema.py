"""Versioned results-file schema: pure conversion between objects and JSON-able dicts.

Format history (bump FORMAT_VERSION and add a migration for every change):
  1 - measurements (task_spec, number_per_run, raw_times, metadata) + environment.
  2 - adds "callgrind": CallgrindStats (task_spec, counts per dump, baseline, metadata).
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable

from benchkit.measurement import Measurement
from benchkit.task import TASKSPEC_FIELDS, TaskSpec

FORMAT_NAME = "benchkit-results"
FORMAT_VERSION = 2


class SchemaError(ValueError):
    """The document is not a valid results document; the message says where."""


@dataclasses.dataclass
class Results:
    """The content of a results file."""

    measurements: list[Measurement] = dataclasses.field(default_factory=list)
    callgrind: list[Any] = dataclasses.field(default_factory=list)   # CallgrindStats
    environment: dict[str, Any] = dataclasses.field(default_factory=dict)
    # Per-benchmark name -> Measurement/CallgrindStats bookkeeping for suites (CLI).
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)

    def __iter__(self):
        return iter([*self.measurements, *self.callgrind])


def _jsonable_metadata(metadata: Any, where: str) -> Any:
    if metadata is None or isinstance(metadata, (str, int, float, bool)):
        return metadata
    if isinstance(metadata, dict):
        return {str(k): _jsonable_metadata(v, f"{where}.{k}") for k, v in metadata.items()}
    if isinstance(metadata, (list, tuple)):
        return [_jsonable_metadata(v, where) for v in metadata]
    raise SchemaError(f"{where} holds {type(metadata).__name__}, which JSON cannot store; "
                      "keep metadata to str/int/float/bool/list/dict, or pickle the object.")


def task_spec_to_dict(spec: TaskSpec) -> dict[str, Any]:
    return dataclasses.asdict(spec)


def task_spec_from_dict(d: Any, where: str) -> TaskSpec:
    if not isinstance(d, dict) or "stmt" not in d:
        raise SchemaError(f"{where}: expected an object with at least 'stmt'")
    unknown = set(d) - set(TASKSPEC_FIELDS)
    if unknown:
        raise SchemaError(f"{where}: unknown fields {sorted(unknown)}")
    return TaskSpec(**{**{"setup": "pass"}, **d})


def measurement_to_dict(m: Measurement) -> dict[str, Any]:
    return {"task_spec": task_spec_to_dict(m.task_spec), "number_per_run": m.number_per_run,
            "raw_times": [float(t) for t in m.raw_times],
            "metadata": _jsonable_metadata(m.metadata, "metadata")}


def measurement_from_dict(d: Any, where: str) -> Measurement:
    if not isinstance(d, dict):
        raise SchemaError(f"{where}: expected an object")
    n = d.get("number_per_run")
    times = d.get("raw_times")
    if not isinstance(n, int) or n < 1:
        raise SchemaError(f"{where}.number_per_run: expected a positive integer, got {n!r}")
    if not isinstance(times, list) or not all(
            isinstance(t, (int, float)) and math.isfinite(t) for t in times):
        raise SchemaError(f"{where}.raw_times: expected a list of finite numbers")
    return Measurement(n, [float(t) for t in times],
                       task_spec_from_dict(d.get("task_spec"), f"{where}.task_spec"),
                       d.get("metadata"))


def to_document(results: Results) -> dict[str, Any]:
    from benchkit.valgrind.serialize import callgrind_to_dict
    return {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "environment": results.environment,
        "measurements": [measurement_to_dict(m) for m in results.measurements],
        "callgrind": [callgrind_to_dict(s) for s in results.callgrind],
        "extra": results.extra,
    }


def _migrate_1_to_2(doc: dict[str, Any]) -> dict[str, Any]:
    return {**doc, "version": 2, "callgrind": [], "extra": doc.get("extra", {})}


MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: _migrate_1_to_2}


def from_document(doc: Any) -> Results:
    """Validate, migrate old versions forward, and build Results. Never executes code."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT_NAME:
        raise SchemaError("not a benchkit results file (no \"format\": \"benchkit-results\")")
    version = doc.get("version")
    if not isinstance(version, int) or version < 1:
        raise SchemaError(f"invalid format version {version!r}")
    if version > FORMAT_VERSION:
        raise SchemaError(f"written in format version {version}, newer than the {FORMAT_VERSION} "
                          "this benchkit reads; upgrade benchkit to read it")
    while version < FORMAT_VERSION:
        doc = MIGRATIONS[version](doc)
        version = doc["version"]
    from benchkit.valgrind.serialize import callgrind_from_dict
    measurements = doc.get("measurements", [])
    callgrind = doc.get("callgrind", [])
    if not isinstance(measurements, list) or not isinstance(callgrind, list):
        raise SchemaError("'measurements' and 'callgrind' must be lists")
    env = doc.get("environment") or {}
    if not isinstance(env, dict):
        raise SchemaError("'environment' must be an object")
    return Results(
        measurements=[measurement_from_dict(m, f"measurements[{i}]")
                      for i, m in enumerate(measurements)],
        callgrind=[callgrind_from_dict(c, f"callgrind[{i}]") for i, c in enumerate(callgrind)],
        environment=env, extra=doc.get("extra") or {})
