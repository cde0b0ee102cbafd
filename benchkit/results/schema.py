"""Versioned results-file schema: pure conversion between objects and JSON-able dicts.

Format history (bump FORMAT_VERSION and add a migration for every change):
  1 - measurements (task_spec, number_per_run, raw_times, metadata) + environment.
  2 - adds "callgrind": CallgrindStats (task_spec, counts per dump, baseline, metadata).
  3 - measurements sampled across worker processes keep "processes": [{"chunks": [blocks
      per chunk], "probes": [speed-probe seconds per chunk]}] (absent: one process);
      adds "ab": the design and both sides of an interleaved `benchkit ab` (or null).
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable

from benchkit.measurement import Measurement, ProcessSample
from benchkit.task import TASKSPEC_FIELDS, TaskSpec

FORMAT_NAME = "benchkit-results"
FORMAT_VERSION = 3


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
    # An interleaved A/B (`benchkit ab`): design and both sides; measurements carry
    # metadata["side"] = "base" | "new".
    ab: dict[str, Any] | None = None

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
    out = {"task_spec": task_spec_to_dict(m.task_spec), "number_per_run": m.number_per_run,
           "raw_times": [float(t) for t in m.raw_times],
           "metadata": _jsonable_metadata(m.metadata, "metadata")}
    if m.processes is not None:
        out["processes"] = [{"chunks": list(p.chunks), "probes": [float(x) for x in p.probes]}
                            for p in m.processes]
    return out


def _processes_from(d: Any, where: str, blocks: int) -> list[ProcessSample] | None:
    if d is None:
        return None
    if not isinstance(d, list) or not d:
        raise SchemaError(f"{where}: expected a non-empty list of processes")
    out = []
    for i, p in enumerate(d):
        here = f"{where}[{i}]"
        if not isinstance(p, dict):
            raise SchemaError(f"{here}: expected an object with 'chunks' and 'probes'")
        chunks, probes = p.get("chunks"), p.get("probes", [])
        if not isinstance(chunks, list) or not chunks or not all(
                isinstance(c, int) and not isinstance(c, bool) and c >= 1 for c in chunks):
            raise SchemaError(f"{here}.chunks: expected a non-empty list of positive integers")
        if not isinstance(probes, list) or (probes and len(probes) != len(chunks)) or not all(
                isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
                and x > 0 for x in probes):
            raise SchemaError(f"{here}.probes: expected one positive number per chunk")
        out.append(ProcessSample(tuple(chunks), tuple(float(x) for x in probes)))
    if sum(p.blocks for p in out) != blocks:
        raise SchemaError(f"{where}: the processes hold {sum(p.blocks for p in out)} blocks "
                          f"but raw_times has {blocks}")
    return out


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
                       d.get("metadata"),
                       _processes_from(d.get("processes"), f"{where}.processes", len(times)))


def to_document(results: Results) -> dict[str, Any]:
    from benchkit.valgrind.serialize import callgrind_to_dict
    return {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "environment": results.environment,
        "measurements": [measurement_to_dict(m) for m in results.measurements],
        "callgrind": [callgrind_to_dict(s) for s in results.callgrind],
        "extra": results.extra,
        "ab": results.ab,
    }


def _migrate_1_to_2(doc: dict[str, Any]) -> dict[str, Any]:
    return {**doc, "version": 2, "callgrind": [], "extra": doc.get("extra", {})}


def _migrate_2_to_3(doc: dict[str, Any]) -> dict[str, Any]:
    return {**doc, "version": 3, "ab": None}


MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {
    1: _migrate_1_to_2, 2: _migrate_2_to_3}


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
        environment=env, extra=doc.get("extra") or {}, ab=_ab_from(doc.get("ab")))


def _ab_from(ab: Any) -> dict[str, Any] | None:
    if ab is None:
        return None
    if not isinstance(ab, dict) or not isinstance(ab.get("sides"), dict) or not all(
            isinstance(ab["sides"].get(k), dict) for k in ("base", "new")):
        raise SchemaError("'ab': expected an object with 'sides': {'base': {...}, 'new': {...}}")
    return ab
