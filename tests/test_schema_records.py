"""The results schema (benchkit/core/records/results.schema.json) and the record types it stores
cannot drift apart: each strict object of the schema (no additional properties) has exactly
the fields of the dataclass that is written into it, and the nested device counts likewise.
A field added to a record without the schema (or the reverse) fails here, before a results
file written with it is refused by the validator."""
from __future__ import annotations

import dataclasses
import json

import pytest

from benchkit.core.callgrind.callgrind_stats import CallgrindStats
from benchkit.core.measure.measurement import Measurement, ProcessSample
from benchkit.core.measure.memory import AllocationSite, BlockCounts, DeviceCounts, MemoryStats
from benchkit.core.records.records import Failure
from benchkit.core.measure.task import TaskSpec
from benchkit.core.records.values import ValueStats


RECORDS = {"task_spec": TaskSpec, "measurement": Measurement, "process": ProcessSample,
           "callgrind": CallgrindStats, "memory": MemoryStats, "memory_block": BlockCounts,
           "allocation_site": AllocationSite, "failure": Failure, "value": ValueStats}


def _defs() -> dict:
    from importlib import resources
    return json.loads(resources.files("benchkit.core.records").joinpath(
        "results.schema.json").read_text())["$defs"]


@pytest.mark.parametrize("name", sorted(RECORDS))
def test_each_strict_object_of_the_schema_is_its_record_type(name):
    definition = _defs()[name]
    assert definition.get("additionalProperties") is False
    fields = {f.name for f in dataclasses.fields(RECORDS[name])}
    assert set(definition["properties"]) == fields


def test_every_strict_object_of_the_schema_has_a_record_type_here():
    strict = {name for name, d in _defs().items() if d.get("additionalProperties") is False}
    assert strict - set(RECORDS) == {"per_source"}      # a dict keyed by Source, not a record
    device = _defs()["memory_block"]["properties"]["device"]
    shown = device.get("properties") or next(
        (o.get("properties") for o in device.get("anyOf", device.get("oneOf", []))
         if o.get("properties")), None)
    assert shown is not None and set(shown) == {f.name for f in dataclasses.fields(DeviceCounts)}
