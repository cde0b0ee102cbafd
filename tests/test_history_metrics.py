"""What the history knows about each metric lives in one place (core.history.metrics)."""
from __future__ import annotations

import pytest

from benchkit.core.history.metrics import KINDS, kind_of
from benchkit.core.history.series import HistoryMetric as M


def test_every_metric_has_a_kind():
    assert set(KINDS) == set(M)
    assert all(kind_of(m).metric is m for m in M)


def test_exact_metrics_are_the_counted_ones():
    assert {m for m in M if kind_of(m).exact} == {M.INSTRUCTIONS, M.MEM}


def test_evidence_is_read_where_a_step_finder_uses_it():
    assert {m: kind_of(m).evidence for m in M} == {
        M.TIME: "measurements", M.INSTRUCTIONS: "callgrind", M.MEM: None, M.PEAKMEM: None,
        M.TRACK: None}


@pytest.mark.parametrize("metric, value, unit, text, cell", [
    (M.TIME, 1.214e-5, "", "12.1 us", "12.14 us"),
    (M.INSTRUCTIONS, 1234567.0, "", "1,234,567", "1,234,567"),
    (M.MEM, 1536.0, "", "1.5 KiB", "1.5 KiB"),
    (M.PEAKMEM, 3 * (1 << 20), "", "3.0 MiB", "3 MiB"),
    (M.TRACK, 1234.5678, "rows/s", "1,234.57 rows/s", "1235 rows/s"),
])
def test_a_value_reads_the_same_wherever_it_is_shown(metric, value, unit, text, cell):
    kind = kind_of(metric)
    assert kind.text(value, unit) == text
    assert kind.cell(value, unit) == cell


@pytest.mark.parametrize("metric, values, unit, title", [
    (M.TIME, [2e-3, 3e-3], "", "time per run (ms)"),
    (M.INSTRUCTIONS, [1e6], "", "instructions per run"),
    (M.PEAKMEM, [5e6], "", "peak memory (MiB)"),
    (M.TRACK, [1.0], "rows/s", "track (rows/s)"),
])
def test_a_chart_is_titled_in_its_axis_unit(metric, values, unit, title):
    kind = kind_of(metric)
    assert kind.chart_title(kind.axis(values, unit)[1]) == title
    assert kind.from_zero is (metric is M.INSTRUCTIONS)
