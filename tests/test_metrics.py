"""The metric seam (core.metrics): each metric is one registered object that owns its gates,
its comparison semantics, how its values read, and how the history treats its series."""
from __future__ import annotations

import pytest

from benchkit.core.metrics import Gate, metric_named, registered
from benchkit.core.metrics.metric import GateName, Metric, history_metrics, register, unregister
from benchkit.errors import GateError, UnknownMetricError


def test_the_built_in_metrics_in_registration_order():
    assert [m.name for m in registered()] == [
        "time", "instructions", "memory", "mem", "peakmem", "track"]
    assert history_metrics() == ("time", "instructions", "mem", "peakmem", "track")


def test_exact_metrics_are_the_counted_ones():
    assert {m.name for m in registered() if m.exact} == {"instructions", "memory", "mem"}


def test_evidence_is_read_where_a_step_finder_uses_it():
    assert {m: metric_named(m).evidence for m in history_metrics()} == {
        "time": "measurements", "instructions": "callgrind", "mem": None, "peakmem": None,
        "track": None}


def test_each_gate_belongs_to_one_metric():
    owners = {g: Gate.parse(g).of.name for g in (
        "slower>5%", "instructions>1%", "allocations>0", "bytes>10%", "peak>1024",
        "retained>0", "mem>5%", "peakmem>10%", "track>5%", "track>100")}
    assert owners == {"slower>5%": "time", "instructions>1%": "instructions",
                      "allocations>0": "memory", "bytes>10%": "memory", "peak>1024": "memory",
                      "retained>0": "memory", "mem>5%": "mem", "peakmem>10%": "peakmem",
                      "track>5%": "track", "track>100": "track"}
    assert Gate.parse("slower>5%").of.figures == "wall time"


@pytest.mark.parametrize("text, message", [
    ("faster>5%", "is not of the form 'slower>5%', 'instructions>1%'"),
    ("slower>5", "slower takes a percentage, e.g. 'slower>5%'"),
    ("retained>5%", "retained takes bytes per run, e.g. 'retained>0'"),
    ("Slower>5%", "is not of the form"),
])
def test_a_bad_gate_names_itself_and_the_forms(text, message):
    with pytest.raises(GateError, match=repr(text)) as caught:
        Gate.parse(text)
    assert message in str(caught.value)


def test_an_unknown_metric_names_the_known_ones():
    with pytest.raises(UnknownMetricError, match="'frobs': benchkit knows time, instructions"):
        metric_named("frobs")


def test_a_name_or_gate_cannot_be_registered_twice():
    with pytest.raises(ValueError, match="'time'"):
        register(Metric("time", "s", "again", exact=False))
    with pytest.raises(ValueError, match="slower"):
        register(Metric("other", "s", "other", exact=False, gates=(GateName("slower"),)))
    assert metric_named("time").title == "time per run"
    assert "other" not in [m.name for m in registered()]


def test_unregister_removes_the_metric_and_its_gates():
    register(Metric("scratch", "", "scratch", exact=True, gates=(GateName("scratch"),)))
    assert Gate.parse("scratch>1%").of.name == "scratch"
    unregister("scratch")
    with pytest.raises(GateError):
        Gate.parse("scratch>1%")


@pytest.mark.parametrize("metric, value, unit, text, cell", [
    ("time", 1.214e-5, "", "12.1 us", "12.14 us"),
    ("instructions", 1234567.0, "", "1,234,567", "1,234,567"),
    ("mem", 1536.0, "", "1.5 KiB", "1.5 KiB"),
    ("peakmem", 3 * (1 << 20), "", "3.0 MiB", "3 MiB"),
    ("track", 1234.5678, "rows/s", "1,234.57 rows/s", "1235 rows/s"),
])
def test_a_value_reads_the_same_wherever_it_is_shown(metric, value, unit, text, cell):
    kind = metric_named(metric)
    assert kind.text(value, unit) == text
    assert kind.cell(value, unit) == cell


@pytest.mark.parametrize("metric, values, unit, title", [
    ("time", [2e-3, 3e-3], "", "time per run (ms)"),
    ("instructions", [1e6], "", "instructions per run"),
    ("peakmem", [5e6], "", "peak memory (MiB)"),
    ("track", [1.0], "rows/s", "track (rows/s)"),
])
def test_a_chart_is_titled_in_its_axis_unit(metric, values, unit, title):
    kind = metric_named(metric)
    assert kind.chart_title(kind.axis(values, unit)[1]) == title
    assert kind.from_zero is (metric == "instructions")


@pytest.mark.parametrize("gate, base, new, broken", [
    ("track>5%", 100.0, 106.0, True), ("track>5%", 100.0, 104.0, False),
    ("track>5%", 100.0, 50.0, False),           # a fall breaks no rise limit
    ("track>5%", 0.0, 1.0, True), ("track>5%", 0.0, 0.0, False),   # from nothing
    ("track>100", 100.0, 201.0, True), ("track>100", 100.0, 200.0, False),
])
def test_a_value_gate_reads_the_change_of_the_medians(gate, base, new, broken):
    from types import SimpleNamespace

    from benchkit.core.records.values import ValueChange
    row = SimpleNamespace(values=(ValueChange("s.track_rows", "track", "rows", base, new),))
    parsed = Gate.parse(gate)
    judged = parsed.of.judge(row, parsed)
    assert (judged.broken is not None) is broken
    assert judged.broken is None or judged.broken.startswith(f"{gate}: {base:g} rows ->")
