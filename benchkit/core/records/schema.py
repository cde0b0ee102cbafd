"""Versioned results-file schema: pure conversion between objects and JSON-able dicts.

The codecs of everything a results file holds (TaskSpec, Measurement, CallgrindStats) live
here; `results.schema.json` next to this file is the published JSON Schema of the current
version, and `from_document` checks every loaded file against it (after migrating older
versions) before building objects.

Format history (bump FORMAT_VERSION and add a migration for every change):
  1 - measurements (task_spec, number_per_run, raw_times, metadata) + environment.
  2 - adds "callgrind": CallgrindStats (task_spec, counts per dump, baseline, metadata).
  3 - measurements sampled across worker processes keep "processes": [{"chunks": [blocks
      per chunk], "probes": [speed-probe seconds per chunk], "layout": n}] (absent: one
      process);
      adds "ab": the design and both sides of an interleaved `benchkit ab` (or null).
  4 - adds "failures": benchmarks that could not be measured (name, suite file, phase,
      kind, error), and "partial": why a run stopped early (null when it finished).
  5 - adds "memory": MemoryStats (task_spec, number_per_run, the counted blocks long,
      short and empty, metadata); failures may be of phase "memory".
  6 - memory entries may hold "sites": the top allocation sites per run (kind, location,
      allocations, bytes); a task_spec may state the work of one run, "elements" and
      "bytes" (throughput). Files of version 5 hold neither; nothing else changed.
  7 - an A/B may be sequential: "ab.sequential" holds its plan (max_rounds, first_look,
      growth, and optionally equivalence_error, 0.10 where absent), and each benchmark has
      the rounds it ran until its verdict was clear. Files of version 6 are fixed-rounds
      A/Bs; nothing else changed.
  8 - a failure may be of kind "skipped": a benchmark its suite skips (an asv suite's
      setup raised NotImplementedError), kept so a later run can tell skipped from missing.
      Files of version 7 have none; nothing else changed.
  9 - adds "values": what asv's track_, mem_ and peakmem_ benchmarks report (task_spec,
      kind, unit, one value per process, metadata); a failure may be of phase "value".
      Files of version 8 have neither.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, Iterable

from benchkit.core.measure.measurement import Measurement, ProcessSample
from benchkit.core.measure.task import TaskSpec
from benchkit.core.records.records import AbRecord, Failure
from benchkit.errors import SchemaError

FORMAT_NAME = "benchkit-results"
FORMAT_VERSION = 9
_COUNTS = ("baseline_inclusive_stats", "baseline_exclusive_stats", "stmt_inclusive_stats",
           "stmt_exclusive_stats")


@dataclasses.dataclass
class Results:
    """The content of a results file: Measurements, CallgrindStats, MemoryStats, the environment
    fingerprint, free-form `extra` JSON data (saved as given; benchkit writes none), for an
    interleaved A/B (`benchkit ab`) its record (each measurement's metadata["side"] names
    its side), the benchmarks that failed, and why the run stopped early (None: it did
    not)."""

    measurements: list[Measurement] = dataclasses.field(default_factory=list)
    callgrind: list[Any] = dataclasses.field(default_factory=list)   # CallgrindStats
    environment: dict[str, Any] = dataclasses.field(default_factory=dict)
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)
    ab: AbRecord | None = None
    failures: list[Failure] = dataclasses.field(default_factory=list)
    partial: str | None = None
    memory: list[Any] = dataclasses.field(default_factory=list)      # MemoryStats
    values: list[Any] = dataclasses.field(default_factory=list)      # ValueStats

    def __iter__(self):
        return iter([*self.measurements, *self.callgrind, *self.memory])


# ----------------------------------------------------------------------------- objects -> JSON


NON_FINITE = {math.inf: "Infinity", -math.inf: "-Infinity"}
MAX_DEPTH = 32


def storable(value: Any, where: str = "value", depth: int = 0) -> Any:
    """`value` as a results file stores it: str, int, float, bool, None, and lists and dicts
    of them; numpy scalars become Python numbers, NaN and infinities the strings "NaN",
    "Infinity" and "-Infinity" (JSON has no such numbers). Anything else is a SchemaError
    naming `where` it sits."""
    if depth > MAX_DEPTH:
        raise SchemaError(f"{where} nests deeper than {MAX_DEPTH} levels, which a results "
                          "file does not store")
    if type(value).__module__ == "numpy" and hasattr(value, "item") and getattr(
            value, "shape", None) == ():
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return NON_FINITE.get(value, "NaN")
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, dict):
        return {str(k): storable(v, f"{where}.{k}", depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [storable(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value)]
    shown = repr(value)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    raise SchemaError(f"{where} holds {shown} ({type(value).__name__}), which a results file "
                      "(JSON) cannot store; store a number, a string, or a list or dict of them")


def _jsonable_metadata(metadata: Any, where: str) -> Any:
    return storable(metadata, where)


def measurement_to_dict(m: Measurement) -> dict[str, Any]:
    """A Measurement as results-file JSON."""
    out = {"task_spec": m.task_spec.to_dict(), "number_per_run": m.number_per_run,
           "raw_times": [float(t) for t in m.raw_times],
           "metadata": _jsonable_metadata(m.metadata, "metadata")}
    if m.processes is not None:
        out["processes"] = [{"chunks": list(p.chunks), "probes": [float(x) for x in p.probes],
                             **({"layout": p.layout} if p.layout is not None else {})}
                            for p in m.processes]
    return out


def callgrind_to_dict(stats: Any) -> dict[str, Any]:
    """A CallgrindStats as results-file JSON."""
    out = {"task_spec": stats.task_spec.to_dict(),
           "number_per_run": stats.number_per_run,
           "built_with_debug_symbols": stats.built_with_debug_symbols,
           "stmt_callgrind_out": stats.stmt_callgrind_out,
           "metadata": _jsonable_metadata(stats.metadata, "metadata")}
    for name in _COUNTS:
        out[name] = [[c, fn] for c, fn in getattr(stats, name)]
    return out


def memory_to_dict(stats: Any) -> dict[str, Any]:
    """A MemoryStats as results-file JSON."""
    return {**stats.to_dict(), "metadata": _jsonable_metadata(stats.metadata, "metadata")}


def to_document(results: Results) -> dict[str, Any]:
    """A whole results document of the current format version."""
    return {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "environment": results.environment,
        "measurements": [measurement_to_dict(m) for m in results.measurements],
        "callgrind": [callgrind_to_dict(s) for s in results.callgrind],
        "memory": [memory_to_dict(s) for s in results.memory],
        "values": [{**v.to_dict(), "metadata": _jsonable_metadata(v.metadata, "metadata")}
                   for v in results.values],
        "extra": results.extra,
        "ab": results.ab.to_dict() if results.ab is not None else None,
        "failures": [f.to_dict() for f in results.failures],
        "partial": results.partial,
    }


# ----------------------------------------------------------------------------- JSON -> objects
# Structure and types are the JSON Schema's job; these build objects from valid documents and
# check what a schema cannot say (the processes' blocks add up to raw_times).


def task_spec_from_dict(d: dict[str, Any], where: str = "task_spec") -> TaskSpec:
    """A TaskSpec from JSON, or a SchemaError naming `where`."""
    if not isinstance(d, dict) or not isinstance(d.get("stmt"), str):
        raise SchemaError(f"{where}: expected an object with a string 'stmt'")
    return TaskSpec.from_dict(d)


def _processes(d: list | None, where: str, blocks: int) -> list[ProcessSample] | None:
    if d is None:
        return None
    out = []
    for i, p in enumerate(d):
        probes = p.get("probes", [])
        if probes and len(probes) != len(p["chunks"]):
            raise SchemaError(f"{where}[{i}].probes: {len(probes)} probes for "
                              f"{len(p['chunks'])} chunks; expected one per chunk")
        out.append(ProcessSample(tuple(p["chunks"]), tuple(float(x) for x in probes),
                                 p.get("layout")))
    total = sum(p.blocks for p in out)
    if total != blocks:
        raise SchemaError(f"{where}: the processes hold {total} blocks but raw_times has "
                          f"{blocks}")
    return out


def measurement_from_dict(d: dict[str, Any], where: str) -> Measurement:
    """A Measurement from valid results-file JSON."""
    times = [float(t) for t in d["raw_times"]]
    return Measurement(d["number_per_run"], times, task_spec_from_dict(d["task_spec"]),
                       d.get("metadata"),
                       _processes(d.get("processes"), f"{where}.processes", len(times)))


def callgrind_from_dict(d: dict[str, Any], where: str) -> Any:
    """A CallgrindStats from valid results-file JSON."""
    from benchkit.core.callgrind.callgrind_stats import CallgrindStats
    from benchkit.core.callgrind.counts import FunctionCount, FunctionCounts
    counts = {name: FunctionCounts(tuple(FunctionCount(c, fn) for c, fn in d[name]),
                                   inclusive="inclusive" in name) for name in _COUNTS}
    return CallgrindStats(task_spec=task_spec_from_dict(d["task_spec"]),
                          number_per_run=d["number_per_run"],
                          built_with_debug_symbols=d.get("built_with_debug_symbols", True),
                          stmt_callgrind_out=d.get("stmt_callgrind_out"),
                          metadata=d.get("metadata") or {}, **counts)


def memory_from_dict(d: dict[str, Any], where: str) -> Any:
    """A MemoryStats from valid results-file JSON."""
    from benchkit.core.measure.memory import MemoryStats
    task_spec_from_dict(d["task_spec"], f"{where}.task_spec")
    return MemoryStats.from_dict(d)


def _value_from_dict(d: dict[str, Any], where: str) -> Any:
    from benchkit.core.records.values import ValueStats
    try:
        return ValueStats.from_dict(d)
    except ValueError as exc:
        raise SchemaError(f"{where}.kind: {exc}") from None


def _check_gates(doc: dict[str, Any]) -> None:
    """Every stored gate names a registered gate in a form it takes (the schema checks only
    the shape: which gates exist is the metric registry's to say)."""
    from benchkit.core.metrics.gates import Gate
    from benchkit.errors import GateError
    for section in ("measurements", "callgrind", "memory", "values"):
        for i, item in enumerate(doc.get(section) or []):
            for j, gate in enumerate((item.get("metadata") or {}).get("gates") or []):
                try:
                    Gate.parse(gate)
                except GateError as exc:
                    raise SchemaError(f"{section}[{i}].metadata.gates[{j}]: {exc}") from None


def _migrate_1_to_2(doc: dict[str, Any]) -> dict[str, Any]:
    return {**doc, "version": 2, "callgrind": [], "extra": doc.get("extra", {})}


def _migrate_2_to_3(doc: dict[str, Any]) -> dict[str, Any]:
    return {**doc, "version": 3, "ab": None}


def _migrate_3_to_4(doc: dict[str, Any]) -> dict[str, Any]:
    return {**doc, "version": 4, "failures": [], "partial": None}


def _migrate_4_to_5(doc: dict[str, Any]) -> dict[str, Any]:
    return {**doc, "version": 5, "memory": []}


def _migrate_5_to_6(doc: dict[str, Any]) -> dict[str, Any]:
    return {**doc, "version": 6}


def _migrate_6_to_7(doc: dict[str, Any]) -> dict[str, Any]:
    return {**doc, "version": 7}


def _migrate_7_to_8(doc: dict[str, Any]) -> dict[str, Any]:
    return {**doc, "version": 8}


def _migrate_8_to_9(doc: dict[str, Any]) -> dict[str, Any]:
    return {**doc, "version": 9, "values": []}


MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {
    1: _migrate_1_to_2, 2: _migrate_2_to_3, 3: _migrate_3_to_4, 4: _migrate_4_to_5,
    5: _migrate_5_to_6, 6: _migrate_6_to_7, 7: _migrate_7_to_8, 8: _migrate_8_to_9}


def json_path(path: Iterable[Any]) -> str:
    """jsonschema's error path as `measurements[0].raw_times[2]`."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(the document)"


def from_document(doc: Any, validator: Any) -> Results:
    """Migrate old versions forward, check against the JSON Schema (`validator`: a
    jsonschema validator of results.schema.json), and build Results. Never executes code."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT_NAME:
        raise SchemaError("not a benchkit results file (no \"format\": \"benchkit-results\")")
    version = doc.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise SchemaError(f"invalid format version {version!r}")
    if version > FORMAT_VERSION:
        raise SchemaError(f"written in format version {version}, newer than the {FORMAT_VERSION} "
                          "this benchkit reads; upgrade benchkit to read it")
    while version < FORMAT_VERSION:
        doc = MIGRATIONS[version](doc)
        version = doc["version"]
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    if errors:
        first = errors[0]
        more = f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""
        raise SchemaError(f"{json_path(first.absolute_path)}: {first.message}{more}")
    _check_gates(doc)
    return Results(
        measurements=[measurement_from_dict(m, f"measurements[{i}]")
                      for i, m in enumerate(doc.get("measurements", []))],
        callgrind=[callgrind_from_dict(c, f"callgrind[{i}]")
                   for i, c in enumerate(doc.get("callgrind", []))],
        memory=[memory_from_dict(m, f"memory[{i}]") for i, m in enumerate(doc.get("memory", []))],
        values=[_value_from_dict(v, f"values[{i}]")
                for i, v in enumerate(doc.get("values") or [])],
        environment=doc.get("environment") or {}, extra=doc.get("extra") or {},
        ab=AbRecord.from_dict(doc["ab"]) if doc.get("ab") else None,
        failures=[Failure.from_dict(f) for f in doc.get("failures") or []],
        partial=doc.get("partial"))


Results.__module__ = "benchkit"   # pickles name the public path
