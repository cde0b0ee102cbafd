"""Values a benchmark reports (asv's track_, mem_ and peakmem_): kept in results files
(format 9; a format 8 file migrates), compared by `compare` (text and JSON), filed in the
history under their metric and unit."""
from __future__ import annotations

import json
import pickle

import benchkit
from benchkit.core.records.schema import Results
from benchkit.core.measure.task import TaskSpec
from benchkit.core.records.values import ValueStats, compare_values
from benchkit.system.history_db import HistoryDB
from test_cli import cli


def _values(items: int, size: float) -> list[ValueStats]:
    return [ValueStats(TaskSpec("asv TrackBenchmark", "", label="s.track_items"),
                       "track", "items", [items, items], {"benchmark": "s.track_items"}),
            ValueStats(TaskSpec("asv MemBenchmark", "", label="s.mem_list"), "mem",
                       "bytes", [size], {"benchmark": "s.mem_list"})]


def _results(items, size, commit="abcd1234"):
    return Results(values=_values(items, size), environment={
        "hostname": "box", "python": "3.11.7", "git": {"commit": commit}})


def test_values_round_trip_through_json_and_pickle(tmp_path):
    benchkit.save(tmp_path / "v.json", _results(10, 136))
    loaded = benchkit.load(tmp_path / "v.json")
    assert loaded.values == _values(10, 136)
    assert pickle.loads(pickle.dumps(loaded)).values == _values(10, 136)
    document = json.loads((tmp_path / "v.json").read_text())
    assert document["version"] == 9 and document["values"][0]["kind"] == "track"


def test_a_format_8_file_has_no_values_after_migration(tmp_path):
    benchkit.save(tmp_path / "v.json", _results(10, 136))
    document = json.loads((tmp_path / "v.json").read_text())
    document["version"] = 8
    del document["values"]
    (tmp_path / "old.json").write_text(json.dumps(document))
    assert benchkit.load(tmp_path / "old.json").values == []


def test_compare_states_each_values_change(tmp_path):
    benchkit.save(tmp_path / "a.json", _results(10, 136))
    benchkit.save(tmp_path / "b.json", _results(12, 136))
    changes = compare_values(_values(10, 136), _values(12, 136))
    assert [(c.benchmark, round(c.change, 12)) for c in changes] == [("s.track_items", 0.2),
                                                                        ("s.mem_list", 0.0)]
    out = cli("compare", tmp_path / "a.json", tmp_path / "b.json", cwd=tmp_path, check_code=0)
    assert [line.split() for line in out.stdout.splitlines()[-2:]] == [
        ["s.track_items", "track", "10", "items", "12", "items", "+20.0%"],
        ["s.mem_list", "mem", "136", "B", "136", "B", "+0.0%"]]
    listed = json.loads(cli("compare", tmp_path / "a.json", tmp_path / "b.json", "--json",
                            cwd=tmp_path, check_code=0).stdout)["values"]
    assert listed[0] == {"benchmark": "s.track_items", "kind": "track", "unit": "items",
                         "base": 10.0, "new": 12.0, "change": 0.19999999999999996}


def test_values_are_filed_in_the_history_under_their_metric_and_unit(tmp_path):
    benchkit.save(tmp_path / "a.json", _results(10, 136, "abcd1234"))
    cli("history", "add", tmp_path / "a.json", "--db", tmp_path / "h.db", cwd=tmp_path,
        check_code=0)
    with HistoryDB(tmp_path / "h.db") as history:
        found = sorted((s.benchmark, str(s.metric), s.unit, s.points[0].value)
                       for s in history.series())
    assert found == [("s.mem_list", "mem", "", 136.0), ("s.track_items", "track", "items", 10.0)]
