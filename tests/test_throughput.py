"""Throughput: the work a Timer states, shown as rates beside times and per unit beside
instruction counts; kept in results files."""
from __future__ import annotations

import pytest

import benchkit
from benchkit import Compare, Timer
from benchkit.core.measure.task import TaskSpec
from benchkit.core.measure.throughput import per_unit, rates
from benchkit.errors import InvalidArgumentError
from conftest import make_measurement


def test_rates_and_units_read_as_criterion_users_expect():
    spec = TaskSpec("x", "pass", elements=1000, bytes=8000)
    assert rates(spec, 1e-6) == ["1 Gelem/s", "7.451 GiB/s"]
    assert rates(TaskSpec("x", "pass", elements=3), 1.0) == ["3 elem/s"]
    assert rates(TaskSpec("x", "pass"), 1.0) == []
    assert per_unit(spec, 152722.0, "instructions") == [
        "152.7 instructions/element", "19.09 instructions/byte"]


def test_measurements_and_compare_show_throughput_only_where_stated():
    stated = make_measurement([2.0] * 8, elements=1000, label="sum", sub_label="n=1000",
                              description="numpy")
    plain = make_measurement([2.0] * 8, label="sum", sub_label="n=1000", description="list")
    assert "  Throughput: 500 Melem/s\n" in repr(stated)
    assert "Throughput" not in repr(plain)
    assert str(Compare([stated, plain])) == (
        "[------------------ sum ------------------]\n"
        "              |        numpy        |  list\n"
        "1 threads: --------------------------------\n"
        "      n=1000  |  2.0 (500 Melem/s)  |  2.0 \n"
        "\n"
        "Times are in microseconds (us).\n")


def test_the_work_travels_in_results_files_and_old_specs_are_unchanged(tmp_path):
    stated = make_measurement([2.0] * 4, elements=10, bytes=80)
    assert TaskSpec("x", "pass").to_dict() == {
        "stmt": "x", "setup": "pass", "global_setup": "", "label": None, "sub_label": None,
        "description": None, "env": None, "num_threads": 1}
    path = benchkit.save(tmp_path / "t.json", [stated], environment={})
    (loaded,) = benchkit.load(path).measurements
    assert (loaded.task_spec.elements, loaded.task_spec.bytes) == (10, 80)


@pytest.mark.parametrize("value", [0, -1, 1.5, True, "10"])
def test_bad_work_is_refused_naming_it(value):
    with pytest.raises(InvalidArgumentError, match="elements"):
        Timer("pass", elements=value)


def test_a_timer_measures_and_counts_with_its_work():
    m = Timer("sum(x)", "x = list(range(100))", elements=100).blocked_autorange(
        min_run_time=0.05)
    assert m.task_spec.elements == 100 and "elem/s" in repr(m)


def test_compare_shows_the_new_sides_throughput(tmp_path):
    from test_cli import cli
    for side, us in (("base", 2.0), ("new", 1.0)):
        m = make_measurement([us] * 30, metadata={"benchmark": "s::sum"}, elements=1000)
        benchkit.save(tmp_path / f"{side}.json", [m], environment={})
    out = cli("compare", "base.json", "new.json", cwd=tmp_path).stdout
    header, _, row = out.splitlines()[:3]
    assert "new throughput" in header and "1 Gelem/s" in row
    import json
    doc = json.loads(cli("compare", "base.json", "new.json", "--json", cwd=tmp_path).stdout)
    assert doc["rows"][0]["work"] == {"elements": 1000, "bytes": None}
