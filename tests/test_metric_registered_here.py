"""A metric defined in this file, registered from here, works end to end with no other change
to benchkit: its values load from a results file, `compare` states their change, a gate of its
name breaks on it, the history files its series and finds its step, and the dashboard charts
it (core.metrics)."""
from __future__ import annotations

import json

import pytest

import benchkit
from benchkit.cli.main import main
from benchkit.core.measure.task import TaskSpec
from benchkit.core.metrics import register, unregister
from benchkit.core.metrics.values import valued_metric
from benchkit.core.records.schema import Results
from benchkit.core.records.values import ValueStats
from benchkit.errors import ResultsFileError
from benchkit.system.history_db import HistoryDB

# frames a renderer draws per second: measured, with a unit of its own and a gate of its name
FRAMES = valued_metric("frames", "fps", "frames drawn per second", exact=False,
                       text=lambda value, unit="": f"{value:.1f} fps")


@pytest.fixture
def frames():
    register(FRAMES)
    yield FRAMES
    unregister(FRAMES.name)


def _results(fps: float, commit: str = "abcd1234", when: str = "") -> Results:
    spec = TaskSpec("render()", "", label="scene.draw")
    return Results(values=[ValueStats(spec, "frames", "fps", [fps, fps],
                                      {"benchmark": "scene.draw"})],
                   environment={"hostname": "box", "python": "3.11.7", "timestamp": when,
                                "git": {"commit": commit}})


def test_an_unregistered_metric_is_refused_where_the_file_is_read(tmp_path, frames):
    benchkit.save(tmp_path / "a.json", _results(60.0))
    unregister("frames")
    try:
        with pytest.raises(ResultsFileError, match="values\\[0\\].kind: 'frames' is not a metric"):
            benchkit.load(tmp_path / "a.json")
    finally:
        register(FRAMES)


def test_compare_and_its_gate_see_the_metric(tmp_path, capsys, frames):
    benchkit.save(tmp_path / "a.json", _results(60.0))
    benchkit.save(tmp_path / "b.json", _results(75.0))
    assert main(["compare", str(tmp_path / "a.json"), str(tmp_path / "b.json")]) == 0
    assert "scene.draw   frames  60.0 fps  75.0 fps  +25.0%" in capsys.readouterr().out

    assert main(["compare", str(tmp_path / "a.json"), str(tmp_path / "b.json"),
                 "--fail-on", "frames>10%"]) == 1
    assert "frames>10%: 60.0 fps -> 75.0 fps (+25.0%)" in capsys.readouterr().out
    assert main(["compare", str(tmp_path / "a.json"), str(tmp_path / "b.json"),
                 "--fail-on", "frames>30%", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["values"][0]["kind"] == "frames"
    # a wall-time gate asks nothing of a benchmark that only returns values
    assert main(["compare", str(tmp_path / "a.json"), str(tmp_path / "b.json"),
                 "--fail-on", "slower>5%"]) == 0


def test_the_history_files_its_series_and_finds_its_step(tmp_path, capsys, frames):
    db = str(tmp_path / "h.db")
    for i in range(24):
        fps = (60.0 if i < 12 else 45.0) * (1 + 0.004 * ((i * 7) % 5 - 2))
        path = tmp_path / f"r{i:02}.json"
        benchkit.save(path, _results(fps, f"{i + 1:040x}", f"2026-01-{i + 1:02}T00:00:00"))
        assert main(["history", "add", str(path), "--db", db]) == 0
    with HistoryDB(db) as history:
        (series,) = history.series()
    assert (series.benchmark, series.metric, len(series.points)) == ("scene.draw", "frames", 24)
    capsys.readouterr()
    main(["history", "regressions", "--db", db, "--json"])
    (step,) = json.loads(capsys.readouterr().out)
    assert (step["metric"], step["commit"], round(step["change"], 2)) == (
        "frames", f"{13:040x}", -0.25)
    main(["history", "regressions", "--db", db])
    assert "60.0 fps -> 45.0 fps" in capsys.readouterr().out
    # its gate judges the history's steps too: a fall breaks no `frames>N%` (a rise limit)
    assert main(["history", "regressions", "--db", db, "--fail-on", "frames>10%"]) == 0
    assert main(["history", "regressions", "--db", db, "--fail-on", "slower>10%"]) == 2
    # the dashboard charts it under its own title, in its own unit
    assert main(["report", str(tmp_path / "site"), "--db", db]) == 0
    page = next((tmp_path / "site").glob("benchmarks/*.html")).read_text()
    assert "frames drawn per second (fps)" in page and "60 fps" in page
