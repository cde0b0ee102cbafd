"""The history database: real SQLite files, real processes adding at once, a real kill -9."""
from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import zlib

import pytest

import benchkit
from benchkit.core.history.series import Commit, observations
from benchkit.errors import HistoryError
from benchkit.system.history_db import HistoryDB



def _results(value: float = 1e-6, name: str = "bench"):
    m = benchkit.Measurement(10, [value * 10 * (1 + i / 100) for i in range(8)],
                             benchkit.TaskSpec("x", "", label=name), {"benchmark": name})
    return benchkit.Results([m], [], {"hostname": "box", "git": {"commit": "c0"}})


def _add(db: HistoryDB, sha: str, date: str, value: float, digest: str):
    return db.add(observations(_results(value)), commit=Commit(sha, date, None, f"msg {sha}"),
                  machine="box", measured_at="2026-01-01T00:00:00", source="f.json",
                  digest=digest, environment={})


def test_series_are_ordered_by_commit_date_and_adding_twice_changes_nothing(tmp_path):
    with HistoryDB(tmp_path / "h.db") as db:
        _add(db, "b", "2026-01-02", 2e-6, "d2")
        _add(db, "a", "2026-01-01", 1e-6, "d1")
        assert _add(db, "a", "2026-01-01", 1e-6, "d1").run is None
        (series,) = db.series()
        assert [p.commit.sha for p in series.points] == ["a", "b"]
        assert series.metric == "time" and series.machine == "box"
        assert series.points[0].value == pytest.approx(1.035e-6)
        evidence = db.evidence(series, series.points[1])
        assert evidence[0].task_spec.label == "bench"
        assert [s.commits for s in db.summaries()] == [2]


def test_a_point_keeps_its_own_interval_and_one_without_is_its_value(tmp_path):
    # a low and high equal to the value are stored as none and read back as the value; a
    # real interval comes back as it went in. The points are held as columns.
    from benchkit.core.history.series import Observation, Points
    with HistoryDB(tmp_path / "h.db") as db:
        for sha, (value, low, high) in (("a", (2.0, 1.5, 2.5)), ("b", (3.0, 3.0, 3.0))):
            db.add([Observation("bench", "time", value, low, high, 1, None)],
                   commit=Commit(sha, f"2026-01-0{'ab'.index(sha) + 1}", None, ""),
                   machine="box", measured_at="", source=f"{sha}.json", digest=sha,
                   environment={})
        (series,) = db.series()
        assert [(p.value, p.low, p.high) for p in series.points] == [(2.0, 1.5, 2.5),
                                                                      (3.0, 3.0, 3.0)]
        assert isinstance(series.points, Points)
        assert series.points[1].low == series.points[1].value == series.points[1].high


def test_two_values_at_a_commit_are_one_point_and_a_commit_that_only_failed_is_listed(tmp_path):
    from benchkit.core.history.series import Observation, Status
    with HistoryDB(tmp_path / "h.db") as db:
        def add(sha, day, observation, digest):
            db.add([observation], commit=Commit(sha, f"2026-01-0{day}", None, ""),
                   machine="box", measured_at=f"2026-02-0{day}", source=f"{digest}.json",
                   digest=digest, environment={})
        add("a", 1, Observation("bench", "time", 1.0, 1.0, 1.0, 1, None), "a1")
        add("a", 1, Observation("bench", "time", 3.0, 2.0, 4.0, 1, None), "a2")
        add("b", 2, Observation.failure("bench", "time", Status.FAILED), "b1")
        add("c", 3, Observation.failure("bench", "time", Status.FAILED), "c1")
        add("c", 3, Observation("bench", "time", 5.0, 5.0, 5.0, 1, None), "c2")
        (series,) = db.series()
        assert [(p.commit.sha, p.value, p.low, p.high, p.observations)
                for p in series.points] == [("a", 2.0, 1.0, 4.0, 2), ("c", 5.0, 5.0, 5.0, 1)]
        assert [(c.sha, status) for c, status in series.failed] == [("b", Status.FAILED)]


def test_foreign_corrupt_and_newer_files_are_one_clear_error(tmp_path):
    foreign = tmp_path / "foreign.db"
    with sqlite3.connect(foreign) as other:
        other.execute("CREATE TABLE t (x)")
    with pytest.raises(HistoryError, match="not a benchkit history database"):
        HistoryDB(foreign)
    corrupt = tmp_path / "corrupt.db"
    corrupt.write_bytes(b"SQLite format 3\0" + os.urandom(4000))
    with pytest.raises(HistoryError, match="not a usable history database"):
        HistoryDB(corrupt)
    for name, change, message in [
            ("newer", "PRAGMA user_version = 99", "newer benchkit"),
            ("gutted", "ALTER TABLE observations DROP COLUMN relative",
             r"damaged: table observations lacks \['relative'\]")]:
        path = tmp_path / f"{name}.db"
        HistoryDB(path).close()
        with sqlite3.connect(path) as raw:
            raw.execute(change)
        with pytest.raises(HistoryError, match=message):
            HistoryDB(path)
    with pytest.raises(HistoryError, match="no history database here"):
        HistoryDB(tmp_path / "missing.db", create=False)


def test_damaged_evidence_is_an_error_not_code(tmp_path):
    path = tmp_path / "h.db"
    with HistoryDB(path) as db:
        _add(db, "a", "2026-01-01", 1e-6, "d1")
    with sqlite3.connect(path) as raw:
        raw.execute("UPDATE observations SET evidence = ?",
                    (zlib.compress(b'{"raw_times": "os.system"}'),))
    with HistoryDB(path) as db:
        (series,) = db.series()
        with pytest.raises(HistoryError, match="damaged"):
            db.evidence(series, series.points[0])


ADDER = textwrap.dedent('''
    import sys, time
    import benchkit
    from benchkit.core.history.series import Commit, observations
    from benchkit.system.history_db import HistoryDB
    path, sha, mode = sys.argv[1:4]
    m = benchkit.Measurement(10, [1e-5] * 8, benchkit.TaskSpec("x", "", label="b"),
                             {"benchmark": "b"})
    items = observations(benchkit.Results([m], []))
    def stalled():
        yield from items
        print("inside", flush=True)
        time.sleep(600)
    with HistoryDB(path) as db:
        for i in range(int(mode) if mode != "stall" else 1):
            db.add(stalled() if mode == "stall" else items, commit=Commit(f"{sha}{i}", "d"),
                   machine="m", measured_at="t", source="s", digest=f"{sha}{i}",
                   environment={})
''')


def test_two_writers_at_once_lose_nothing(tmp_path):
    path = tmp_path / "h.db"
    script = tmp_path / "adder.py"
    script.write_text(ADDER)
    procs = [subprocess.Popen([sys.executable, str(script), str(path), sha, "40"])
             for sha in ("x", "y")]
    assert [p.wait(timeout=300) for p in procs] == [0, 0]
    with HistoryDB(path) as db:
        (series,) = db.series()
        assert len(series.points) == 80


def test_a_writer_killed_in_the_middle_leaves_the_database_as_it_was(tmp_path):
    path = tmp_path / "h.db"
    script = tmp_path / "adder.py"
    script.write_text(ADDER)
    subprocess.run([sys.executable, str(script), str(path), "before", "3"], check=True)
    proc = subprocess.Popen([sys.executable, str(script), str(path), "killed", "stall"],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "inside"     # holds the write transaction
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    with HistoryDB(path) as db:
        (series,) = db.series()
        assert [p.commit.sha for p in series.points] == ["before0", "before1", "before2"]
        assert not db.has_commit("killed0", "m")
    subprocess.run([sys.executable, str(script), str(path), "after", "1"], check=True,
                   timeout=120)
    with HistoryDB(path) as db:
        assert db.has_commit("after0", "m")


@pytest.fixture
def small_disk(tmp_path):
    """A 256 KiB tmpfs of our own (root only: CI runs as root), unmounted afterwards."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root (CI runs as root)")
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def test_a_read_only_directory_reads_and_refuses_writes_in_one_line(small_disk):
    with HistoryDB(small_disk / "h.db") as db:
        _add(db, "a", "2026-01-01", 1e-6, "d1")
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    with HistoryDB(small_disk / "h.db") as db:
        assert [p.commit.sha for p in db.series()[0].points] == ["a"]
        with pytest.raises(HistoryError, match="could not (add to|write to) the history "
                                               "database") as caught:
            _add(db, "b", "2026-01-02", 1e-6, "d2")
    assert "\n" not in str(caught.value)


def test_a_full_disk_while_adding_leaves_the_database_intact(small_disk):
    added = 0
    with HistoryDB(small_disk / "h.db") as db:
        with pytest.raises(HistoryError, match="could not (add to|write to) the history "
                                               "database"):
            for i in range(10_000):
                results = _results(1e-6 * (1 + i), name=f"bench{i}" + "x" * 200)
                db.add(observations(results), commit=Commit(f"{i:04x}", "2026-01-01"),
                       machine="box", measured_at="", source="f.json", digest=f"d{i}",
                       environment={"padding": "y" * 2000})
                added += 1
    assert added > 0
    with HistoryDB(small_disk / "h.db") as db:
        assert len(db.series()) == added


def test_a_page_overwritten_mid_file_is_one_clear_error(tmp_path):
    path = tmp_path / "h.db"
    with HistoryDB(path) as db:
        for i in range(40):
            _add(db, f"{i:04x}", f"2026-01-{i % 28 + 1:02d}", 1e-6, f"d{i}")
    data = bytearray(path.read_bytes())
    page = 4096
    assert len(data) > 4 * page
    data[2 * page:4 * page] = os.urandom(2 * page)
    path.write_bytes(bytes(data))
    with pytest.raises(HistoryError) as caught:
        with HistoryDB(path) as db:
            db.series()
            _add(db, "ffff", "2026-02-01", 1e-6, "new")
    assert str(path) in str(caught.value) and "\n" not in str(caught.value)


def test_a_batch_leaves_reference_checks_and_the_collector_as_they_were(tmp_path):
    """batch() turns SQLite's reference checks off for its own inserts and the reads and
    imports pause Python's cycle collector; both are back on afterwards, after a failed
    batch too, and a collector the caller had turned off stays off."""
    import gc

    from benchkit.system.bulk import paused_gc
    with HistoryDB(tmp_path / "h.db") as db:
        with db.batch():
            _add(db, "a", "2026-01-01", 1e-6, "d1")
        with pytest.raises(RuntimeError), db.batch():
            _add(db, "b", "2026-01-02", 1e-6, "d2")
            raise RuntimeError("stop")
        assert [p.commit.sha for s in db.series() for p in s.points] == ["a"]
        with pytest.raises(sqlite3.IntegrityError):
            db._db.execute("INSERT INTO observations (run, bench, units, format) "
                           "VALUES (999, 999, 1, 8)")
    assert gc.isenabled()
    with paused_gc():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_plain_and_full_observations_are_stored_alike(tmp_path):
    """A value with nothing after its units (an asv import's) takes the short insert; it
    reads back as the full insert would have stored it, beside one that needs every column
    (a unit, a failure), in one run whose count holds all three."""
    from benchkit.core.history.series import Observation, Status
    from benchkit.system.history_schema import observation_rows
    plain = Observation("p", "time", 2.0, 1.5, 2.5, 3, None)
    tracked = Observation("t", "track", 7.0, 7.0, 7.0, 1, None, unit="widgets")
    failed = Observation.failure("f", "time", Status.FAILED)
    assert [len(rows) for rows in observation_rows([plain, tracked, failed])] == [1, 2]
    with HistoryDB(tmp_path / "h.db") as db:
        added = db.add([plain, tracked, failed], commit=Commit("a", "2026-01-01", None, ""),
                       machine="box", measured_at="2026-01-01T00:00:00", source="f.json",
                       digest="d", environment={})
        assert added.observations == 3
    stored = sqlite3.connect(tmp_path / "h.db").execute(
        "SELECT b.name, o.value, o.low, o.high, o.units, o.relative, o.unit, o.status, "
        "o.format, o.evidence FROM observations o JOIN benchmarks b ON b.id = o.bench "
        "ORDER BY b.name").fetchall()
    from benchkit.core.records.schema import FORMAT_VERSION
    assert stored == [("f", None, None, None, 0, None, "", "failed", FORMAT_VERSION, None),
                      ("p", 2.0, 1.5, 2.5, 3, None, "", "ok", FORMAT_VERSION, None),
                      ("t", 7.0, 7.0, 7.0, 1, None, "widgets", "ok", FORMAT_VERSION, None)]
