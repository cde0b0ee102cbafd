"""Every reader, given arbitrary bytes or arbitrary JSON trees: a valid object or one clear
error (a BenchkitError), never another exception. A results file that loads must also show
and compare; a trace that reads must also analyze, diff and validate."""
from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path

import pytest

from hypothesis import HealthCheck, given, settings, strategies as st

import benchkit
from benchkit.api.compare import Compare
from benchkit.core.compare import comparison
from benchkit.core.metrics.gates import Gate
from benchkit.core.records.keywords import keyword_filter
from benchkit.core.compare.report import (comparison_to_json, format_callgrind, format_comparison,
                                  format_environment, format_memory)
from benchkit.core.trace.analysis import analyze, format_analysis
from benchkit.core.trace.diff import diff_traces, format_trace_diff
from benchkit.core.trace.merge import add_device_events
from benchkit.core.trace.validate import validate
from benchkit.errors import BenchkitError
from benchkit.system.trace_files import load_trace, read_slices

FIXTURES = Path(__file__).parent / "fixtures"
FUZZ = settings(max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

json_leaves = (st.none() | st.booleans() | st.integers(-2**70, 2**70) |
               st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20))
json_trees = st.recursive(json_leaves, lambda children: st.lists(children, max_size=5) |
                          st.dictionaries(st.text(max_size=10), children, max_size=5),
                          max_leaves=30)


_SCRATCH = tempfile.TemporaryDirectory(prefix="benchkit-fuzz-")


def _file(data: bytes, name: str) -> Path:
    """One scratch directory for the module, each example overwriting its file (a directory per
    example left tens of thousands behind in /tmp)."""
    path = Path(_SCRATCH.name) / name
    path.write_bytes(data)
    return path


def _use_results(results) -> None:
    """What `show` and `compare` do with a loaded file must work too."""
    format_environment(results.environment)
    if results.measurements:
        str(Compare(results.measurements))
    if results.callgrind:
        format_callgrind(results.callgrind)
    if results.memory:
        format_memory(results.memory)
    if results.ab:
        format_comparison(comparison.of_ab(results))
    else:
        compared = comparison.of_runs(results, results)
        format_comparison(compared)
        json.dumps(comparison_to_json(compared), allow_nan=False)
    for failure in results.failures:
        failure.summary()


def _load(data: bytes, name: str = "r.json"):
    try:
        results = benchkit.load(_file(data, name))
    except BenchkitError:
        return None
    _use_results(results)
    return results


@FUZZ
@given(st.binary(max_size=400))
def test_any_bytes_are_a_results_file_or_one_clear_error(data):
    _load(data)
    _load(b"\x1f\x8b" + data, "r.json.gz")


def _documents():
    """Valid documents of every kind to mutate: an A/B (version 3), a run with counts, layout
    bands, a failure and a partial mark (version 4), memory with a gate (version 5)."""
    return [json.loads((FIXTURES / "results" / name).read_text())
            for name in ("v3_ab.json", "v4_run.json", "v5_memory.json")]


def _paths(tree, prefix=()):
    yield prefix
    if isinstance(tree, dict):
        for key, value in tree.items():
            yield from _paths(value, prefix + (key,))
    elif isinstance(tree, list):
        for i, value in enumerate(tree[:3]):
            yield from _paths(value, prefix + (i,))


def _replace(tree, path, value):
    if not path:
        return value
    tree = copy.copy(tree)
    tree[path[0]] = _replace(tree[path[0]], path[1:], value)
    return tree


DOCUMENTS = _documents()
PATHS = [list(_paths(doc)) for doc in DOCUMENTS]


@FUZZ
@given(st.data(), json_trees)
@pytest.mark.slow
def test_a_results_document_with_any_part_replaced_loads_valid_or_is_one_clear_error(
        data, value):
    which = data.draw(st.integers(0, len(DOCUMENTS) - 1))
    path = data.draw(st.sampled_from(PATHS[which]))
    doc = _replace(DOCUMENTS[which], path, value)
    _load(json.dumps(doc).encode())


@FUZZ
@given(json_trees)
def test_any_json_is_a_results_file_or_one_clear_error(tree):
    _load(json.dumps(tree).encode())
    _load(json.dumps({"format": "benchkit-results", "version": 4, "measurements": tree})
          .encode())


def _read_trace(data: bytes, name: str = "t.json"):
    path = _file(data, name)
    try:
        items = read_slices(path)
    except BenchkitError:
        items = None
    if items is not None:
        format_analysis(analyze(items))
        format_analysis(analyze(items, aggregate_by="name+shapes"))
        format_trace_diff(diff_traces(items, items))
    try:
        trace = load_trace(path)
    except BenchkitError:
        return
    for problem in validate(trace):
        str(problem)


@FUZZ
@given(st.binary(max_size=400))
def test_any_bytes_are_a_trace_or_one_clear_error(data):
    _read_trace(data)
    _read_trace(b"\x1f\x8b" + data, "t.json.gz")


events = st.lists(st.dictionaries(
    st.sampled_from(["ph", "name", "cat", "pid", "tid", "ts", "dur", "args", "id", "bp"]),
    st.sampled_from(["X", "B", "E", "i", "s", "f", "M", "aten::mm"]) | json_trees,
    max_size=8), max_size=8)
arguments = st.fixed_dictionaries({}, optional={
    "Input Dims": json_trees, "Input type": json_trees | st.lists(
        st.sampled_from(["float", "double", "c10::Half", "int"]), max_size=3),
    "Concrete Inputs": json_trees | st.lists(st.text(max_size=12), max_size=7)})


@FUZZ
@given(events, st.lists(arguments, max_size=4))
@pytest.mark.slow
def test_any_events_are_a_trace_or_one_clear_error(trace_events, args):
    for event, extra in zip(trace_events, args):
        event.setdefault("ph", "X")
        event["args"] = extra
    _read_trace(json.dumps({"traceEvents": trace_events}).encode())


@FUZZ
@given(json_trees)
def test_any_device_events_merge_or_are_one_clear_error(device_events):
    trace = {"traceEvents": [{"ph": "X", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1,
                              "dur": 5, "args": {"External id": 7}}]}
    try:
        merged = add_device_events(trace, device_events if isinstance(device_events, list)
                                   else [device_events])
    except BenchkitError:
        return
    validate(merged)


@FUZZ
@given(st.text(max_size=40))
def test_any_gate_text_parses_or_is_one_clear_error(text):
    try:
        gate = Gate.parse(text)
    except BenchkitError:
        return
    assert Gate.parse(str(gate)) == gate


@FUZZ
@given(st.lists(st.sampled_from(["a", "b", "(", ")", "and", "or", "not", "-k", "x y"]),
                max_size=10).map(" ".join) | st.text(max_size=30), st.text(max_size=10))
def test_any_keyword_expression_parses_or_is_one_clear_error(expression, name):
    try:
        matches = keyword_filter(expression)
    except BenchkitError:
        return
    assert matches(name) in (True, False)
