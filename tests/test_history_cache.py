"""The steps found are kept in the history database for the state it is in: `report` after
`regressions` does not find them again, any write makes them stale, and a damaged or
foreign cache is found again rather than trusted."""
from __future__ import annotations

import sqlite3
import subprocess
import zlib

import pytest

from benchkit.core.history.series import Commit, Observation
from benchkit.core.history.step import steps_from_records, steps_to_records
from benchkit.orchestration import history
from benchkit.system.history_db import HistoryDB
from test_history_db import small_disk  # noqa: F401 (a fixture)


def _fill(db: HistoryDB, commits: int = 24, step_at: int = 12, start: int = 0) -> None:
    for i in range(start, start + commits):
        value = (2e-6 if i >= step_at else 1e-6) * (1 + 0.001 * (i % 3))
        db.add([Observation("bench", "time", value, value, value, 1, None)],
               commit=Commit(f"{i:04x}" + "a" * 36, f"2026-01-01T00:{i:02d}:00+00:00", i),
               machine="box", measured_at="", source=f"{i}.json", digest=f"d{i}",
               environment={"python": "3.11.7"})


def _count_finding(monkeypatch) -> list[int]:
    calls = []
    real = history._all_steps

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)
    monkeypatch.setattr(history, "_all_steps", counted)
    return calls


def test_steps_are_found_once_per_state_and_again_after_a_write(tmp_path, monkeypatch):
    calls = _count_finding(monkeypatch)
    with HistoryDB(tmp_path / "h.db") as db:
        _fill(db)
        first = history.find_steps(db)
        assert [(s.commit.sha[:4], round(s.change, 2)) for s in first] == [("000c", 1.0)]
        assert history.find_steps(db) == first
        assert len(calls) == 1
        # other options are another result
        history.find_steps(db, noise=0.5)
        assert len(calls) == 2
        # a narrower search takes its steps from the wider one kept (the same steps,
        # filtered): no series read again
        assert history.find_steps(db, machine="box") == first
        assert history.find_steps(db, benchmark="bench", metric="time") == first
        assert history.find_steps(db, machine="other") == []
        assert history.find_steps(db, benchmark="bench", metric="instructions") == []
        assert len(calls) == 2
        _fill(db, commits=1, start=24)
        (again,) = history.find_steps(db, benchmark="bench")
        assert len(calls) == 3
        assert "levels of 12 and 12 commits" in first[0].evidence
        assert "levels of 12 and 13 commits" in again.evidence


def test_a_damaged_or_foreign_cache_is_found_again_not_trusted(tmp_path, monkeypatch):
    with HistoryDB(tmp_path / "h.db") as db:
        _fill(db)
        expected = history.find_steps(db)
    calls = _count_finding(monkeypatch)
    for value in (b"garbage", zlib.compress(b"not json"), zlib.compress(b'[["x"]]'),
                  zlib.compress(b'[' * 100_000), zlib.compress(b"\0" * (80 << 20))):
        with sqlite3.connect(tmp_path / "h.db") as raw:
            raw.execute("UPDATE cache SET value = ?", (value,))
        with HistoryDB(tmp_path / "h.db") as db:
            assert history.find_steps(db) == expected
    assert len(calls) == 5


def test_step_records_round_trip_and_refuse_wrong_shapes():
    step = history.Step("b", "time", "box", Commit("a" * 40, "d", 1, "s"),
                        Commit("b" * 40, "e", None, ""), 1.0, 2.0, 1.0, float("nan"), 1.5,
                        (), "why", "env", "", True)
    (back,) = steps_from_records(steps_to_records([step]))
    assert back.commit == step.commit and back.transient and back.change == 1.0
    record = steps_to_records([step])[0]
    # transient, span and pending of the wrong type; a record of the version before
    # (no pending: a cache written by it is found again, not read)
    for bad in ({}, [1], [["b", "time"]], [[*record[:-3], "yes", None, False]],
                [[*record[:-2], ["x", "y"], False]], [[*record[:-2], 3, False]],
                [[*record[:-1], "no"]], [record[:-1]]):
        with pytest.raises(ValueError):
            steps_from_records(bad)


def test_a_read_only_database_finds_steps_and_keeps_none(small_disk):  # noqa: F811
    with HistoryDB(small_disk / "h.db") as db:
        _fill(db)
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    with HistoryDB(small_disk / "h.db") as db:
        assert [s.commit.sha[:4] for s in history.find_steps(db)] == ["000c"]
    with sqlite3.connect(f"file:{small_disk / 'h.db'}?mode=ro", uri=True) as raw:
        assert raw.execute("SELECT count(*) FROM cache").fetchone()[0] == 0


def test_the_cache_key_digests_every_module_that_finding_steps_imports():
    # a module of core/history or core/decisions left out of the digest would let a changed
    # detector read steps cached by the old one
    import ast
    import importlib.util
    from pathlib import Path

    decides = ("benchkit.core.history.", "benchkit.core.decisions.")
    # the steps of one series, and what the machine's other series tell of them
    seen, todo = set(), ["benchkit.core.history.steps", "benchkit.core.history.machine"]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        tree = ast.parse(Path(importlib.util.find_spec(name).origin).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                if node.module in ("benchkit.core.history", "benchkit.core.decisions"):
                    todo += [f"{node.module}.{alias.name}" for alias in node.names]
                elif node.module.startswith(decides):
                    todo.append(node.module)
    finders = seen - {"benchkit.core.history.series"}        # the data, not the detector
    assert "benchkit.core.decisions.rank_test" in finders
    assert finders <= set(history.STEP_FINDERS), finders - set(history.STEP_FINDERS)


def test_steps_found_in_forked_processes_are_the_ones_found_in_one(monkeypatch):
    """Past PARALLEL_POINTS the series are shared among processes (one per core): the same
    steps, in the same order, as one process finds."""
    import numpy as np

    from benchkit.core.history.series import Point, Series
    rng = np.random.default_rng(7)
    series_list = []
    for k in range(12):
        values = np.exp(rng.normal(0, 0.03, 1000)) * np.where(np.arange(1000) >= 70 * (k + 1),
                                                            1.3, 1.0)
        points = tuple(Point(Commit(f"{i:040x}", "", i), float(v), float(v), float(v), 1, 1)
                       for i, v in enumerate(values))
        series_list.append(Series(f"b{k:02d}", "time", "box", points))
    shared = history._all_steps(None, series_list, 0.01, 0.02)
    monkeypatch.setattr(history, "PARALLEL_POINTS", 10**9)
    alone = history._all_steps(None, series_list, 0.01, 0.02)
    assert shared == alone
    assert [s.benchmark for s in alone] == [f"b{k:02d}" for k in range(12)]
