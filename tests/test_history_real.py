"""The history on data no one here wrote: an excerpt of real astropy asv results (asv format
1, real failures, two environments, a second machine, files asv's authors broke on purpose;
tests/fixtures/asv-real/README.md), a history database written by the previous schema, and
hostile asv files. CLI as a subprocess, real SQLite."""
from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

import benchkit
from benchkit.core.metrics.metric import history_metrics
from benchkit.core.history.series import Commit, Status, observations
from benchkit.core.history.steps import steps_of
from benchkit.orchestration.asv_import import import_asv
from benchkit.system.history_db import HistoryDB
from benchkit.system.history_schema import VERSION
from test_cli import cli

FIXTURES = Path(__file__).parent / "fixtures"
ASTROPY = FIXTURES / "asv-real" / "astropy-cheetah"


def _imported(tmp_path) -> Path:
    db = tmp_path / "h.db"
    cli("history", "import-asv", ASTROPY, "--db", db, cwd=tmp_path, check_code=0)
    return db


def test_real_astropy_results_import_with_failures_environments_and_machines(tmp_path):
    db = tmp_path / "h.db"
    out = cli("history", "import-asv", ASTROPY, "--db", db, cwd=tmp_path, check_code=0)
    assert out.stdout.splitlines()[0].startswith(
        "19 asv results files: 17 added (176 values, 20 failed or skipped benchmarks), 0 "
        "already there, 2 skipped")
    # asv's authors' version-mismatch case: results of an older benchmark code, left out
    assert ("left out, as asv publish leaves them out: 2 results of benchmarks measured "
            "with older code") in out.stdout
    # the two files asv's authors broke on purpose are skipped, each with its reason
    assert "1 not JSON (e.g. cheetah/aaaaaaaa-py2.7-Cython-numpy1.8.json" in out.stdout
    assert "1 no commit_hash (e.g. cheetah/bbbbbbbb-py2.7-Cython-numpy1.8.json" in out.stdout
    assert "ordered by commit date (UTC)" in out.stderr
    with HistoryDB(db) as history:
        series = history.series(benchmark="time_units.time_unit_parse")
        envs = {(s.machine, s.environment): len(s.points) for s in series}
        assert envs == {("cheetah", "py2.7-Cython-numpy1.8"): 14,
                        ("cheetah", "py2.7-numpy1.8"): 1}
        # a benchmark that failed at a commit is kept as a failure, in its place
        (compose,) = history.series(benchmark="time_units.time_unit_compose",
                                    environment="py2.7-Cython-numpy1.8")
        assert [(c.sha[:8], s) for c, s in compose.failed] == [("60cab3e8", Status.FAILED)]
        # the other machine's file is its own series, never pooled
        other = history.series(machine="not-cheetah")
        assert {s.benchmark for s in other} == {"time_coordinates.time_latitude"}
        # points in UTC date order
        dates = [p.commit.date for p in series[0].points]
        assert dates == sorted(dates) and dates[0] == "2013-01-18T02:17:30+00:00"
    again = cli("history", "import-asv", ASTROPY, "--db", db, cwd=tmp_path, check_code=0)
    assert "0 added (0 values, 0 failed or skipped benchmarks), 17 already there" \
        in again.stdout


def test_a_newer_copy_adds_only_its_new_files(tmp_path):
    copy = tmp_path / "results"
    shutil.copytree(ASTROPY, copy)
    newest = copy / "cheetah" / "c1a0773e-py2.7-Cython-numpy1.8.json"
    newest.unlink()
    db = tmp_path / "h.db"
    with HistoryDB(db) as history:
        first = import_asv(history, copy)
    shutil.copy(ASTROPY / "cheetah" / newest.name, newest)
    with HistoryDB(db) as history:
        second = import_asv(history, copy)
    assert (first.added, second.added, second.already) == (16, 1, 16)


@pytest.mark.slow
def test_the_real_steps_of_astropy_are_found_on_the_commit_that_made_them(tmp_path):
    """astropy's unit parser got ~30x faster at 6c188c11 and unit composition ~15x at
    2b12eec5 (both plain in the data); Quantity(scalar) ran at 41 us for the first three
    commits of the excerpt and at 58 us from f5c0b8ed on, and np.sin of a Quantity at
    0.5 ms, then 6-12 ms from f5c0b8ed for eight commits, then 1.1 ms from faae7f3b (plain
    in the data too: three commits at either end are too few for the rank test to reach
    alpha, but the two sides do not overlap at all). Nothing else in these series is a
    step that stays (two more excursions from f5c0b8ed come back and are transient)."""
    db = _imported(tmp_path)
    out = cli("history", "regressions", "--metric", "time", "--json", "--db", db,
              cwd=tmp_path, check_code=0)
    found = {(s["benchmark"], s["commit"][:8], round(s["change"], 2))
             for s in json.loads(out.stdout) if s.get("kind") != "environment"}
    assert found == {("time_units.time_unit_parse", "6c188c11", -0.97),
                     ("time_units.time_simple_unit_parse", "6c188c11", -0.97),
                     ("time_units.time_unit_compose", "2b12eec5", -0.93),
                     ("time_quantity.time_quantity_init_scalar", "f5c0b8ed", 0.42),
                     ("time_quantity.time_quantity_ufunc_sin", "f5c0b8ed", 11.38),
                     ("time_quantity.time_quantity_ufunc_sin", "faae7f3b", -0.81)}
    # the last, three commits from the newest end, is not held back as pending: none of
    # the eight commits before it stood half as far out, so no spell of this series reaches
    # it (a step that close to the end in a series with such spells is: test_history_steps)
    assert {s["commit"][:8] for s in json.loads(out.stdout)
            if s.get("kind") != "environment" and s["pending"]} == set()
    assert "not pending: no commit before it stood half as far out" in out.stdout
    # asv's results carry no commit subject: the commit is shown without empty quotes
    out = cli("history", "regressions", "--metric", "time", "--db", db, cwd=tmp_path,
              check_code=0)
    assert "at 6c188c11" in out.stdout and "''" not in out.stdout
    # the last line says what was found, in how many of the series (on stderr: the table
    # on stdout stays as it was)
    assert out.stderr.splitlines()[-1] == (
        "6 step(s) in 5 of 37 series (2 up, 4 down; 1 not placed); 4 transient not shown "
        "(--all lists them); 2 environment change(s)")


def test_a_database_of_the_previous_schema_migrates_and_orders_by_utc(tmp_path):
    """tests/fixtures/history/v1.db was written by schema 1, whose dates kept git's offsets:
    as text 10:00+05:00 (05:00 UTC) sorted after 06:00+00:00."""
    copy = tmp_path / "v1.db"
    shutil.copy(FIXTURES / "history" / "v1.db", copy)
    with HistoryDB(copy) as history:
        (series,) = history.series()
        assert [p.commit.sha[0] for p in series.points] == ["b", "a", "c"]
        assert series.points[0].commit.date == "2026-01-01T05:00:00+00:00"
        assert series.environment == "py3.11.7"
        assert history.evidence(series, series.points[0])[0].task_spec.label == "bench"
    with sqlite3.connect(copy) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == VERSION


def test_a_schema_2_database_migrates_with_every_series_unchanged(tmp_path):
    """tests/fixtures/history/v2.db was written by schema 2 (names on every observation):
    the real astropy excerpt imported (failures, two environments) plus a benchkit run with
    evidence. v2-series.json is what schema 2's reader returned from it."""
    copy = tmp_path / "v2.db"
    shutil.copy(FIXTURES / "history" / "v2.db", copy)
    with HistoryDB(copy) as history:
        found = [[s.benchmark, str(s.metric), s.machine, s.environment, s.unit, s.by_date,
                  s.evidence, [[p.commit.sha, p.commit.date, p.value, p.low, p.high, p.units,
                                p.observations] for p in s.points],
                  [[c.sha, str(status)] for c, status in s.failed]]
                 for s in history.series()]
        (own,) = history.series(machine="box")
        assert history.evidence(own, own.points[0])[0].task_spec.label == "bench"
    expected = json.loads((FIXTURES / "history" / "v2-series.json").read_text())
    assert json.loads(json.dumps(found)) == expected
    with sqlite3.connect(copy) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == VERSION
        assert raw.execute("SELECT count(*) FROM benchmarks").fetchone()[0] == len(
            {(s[0], s[1]) for s in expected})


def test_a_schema_3_database_counts_imported_places_from_1_as_history_add_does(tmp_path):
    """tests/fixtures/history/v3.db was written by schema 3 (benchkit b040fbb): asv results of
    a repository's commits c0 and c1 imported with --repo (places 0 and 1, counted from 0),
    then `history add` of a run at c2 (place 3: `git rev-list --count` counts from 1)."""
    copy = tmp_path / "v3.db"
    shutil.copy(FIXTURES / "history" / "v3.db", copy)
    with HistoryDB(copy) as history:
        places = {p.commit.message: p.commit.order for series in history.series()
                  for p in series.points}
        assert places == {"c0": 1, "c1": 2, "c2": 3}
    with sqlite3.connect(copy) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == VERSION


def test_a_schema_4_database_migrates_and_keeps_what_confirm_says(tmp_path):
    """tests/fixtures/history/v4.db was written by schema 4 (benchkit 1736048): the real
    asv-samples excerpt imported (five environments). v4-series.json is what schema 4's
    reader returned from it. Schema 5 adds the verdicts of `--confirm`, kept by step."""
    from benchkit.core.history.step import Step, with_confirmations
    copy = tmp_path / "v4.db"
    shutil.copy(FIXTURES / "history" / "v4.db", copy)
    with HistoryDB(copy) as history:
        found = [[s.benchmark, str(s.metric), s.machine, s.environment,
                  [[p.commit.sha, p.value, p.low, p.high] for p in s.points]]
                 for s in history.series()]
        assert history.confirmations() == {}
        a, b = Commit("a" * 40, ""), Commit("b" * 40, "")
        step = Step("t.time_x", "time", "box", a, b, 1.0, 1.2, 0.2, 0.1, 0.3,
                    environment="py3.11")
        history.keep_confirmations([step, Step("t.time_y", "time", "box", a, b, 1.0, 1.2,
                                               0.2, 0.1, 0.3)])   # no verdict: not kept
        history.keep_confirmations([step.__class__(**{**step.__dict__,
                                                      "confirmation": "rejected: x"})])
        history.keep_confirmations([step.__class__(**{**step.__dict__,
                                                      "confirmation": "confirmed: y"})])
    with sqlite3.connect(copy) as raw:    # a row not all text (a file written elsewhere)
        raw.execute("INSERT INTO confirmations VALUES ('t.time_z', 'time', 'box', '', "
                    "'a', 'b', x'00ff')")
    with HistoryDB(copy, create=False) as history:             # kept across opens
        kept = history.confirmations()
    assert list(kept.values()) == ["confirmed: y"]            # the last word stands
    (again,) = with_confirmations([step], kept)
    assert again.confirmation == "confirmed: y"
    other = step.__class__(**{**step.__dict__, "environment": "py3.12"})
    assert with_confirmations([other], kept) == [other]      # another series: not its verdict
    expected = json.loads((FIXTURES / "history" / "v4-series.json").read_text())
    assert json.loads(json.dumps(found)) == expected
    with sqlite3.connect(copy) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == VERSION == 5


def _results(host: str, python: str, commit: str, value: float):
    m = benchkit.Measurement(10, [value * 10 * (1 + i / 100) for i in range(8)],
                             benchkit.TaskSpec("x", "", label="bench"), {"benchmark": "bench"})
    return benchkit.Results([m], [], {"hostname": host, "python": python,
                                      "git": {"commit": commit}})


def test_merged_machines_keep_their_own_machine_and_environment(tmp_path):
    for name, host, python in (("a", "box-a", "3.11.7"), ("b", "box-b", "3.12.1")):
        benchkit.save(tmp_path / f"{name}.json", _results(host, python, "abcd1234", 1e-6))
    cli("merge", tmp_path / "m.json", tmp_path / "a.json", tmp_path / "b.json",
        cwd=tmp_path, check_code=0)
    out = cli("history", "add", tmp_path / "m.json", "--db", tmp_path / "h.db",
              cwd=tmp_path, check_code=0)
    assert "2 observations added" in out.stdout
    with HistoryDB(tmp_path / "h.db") as history:
        assert sorted((s.machine, s.environment) for s in history.series()) == [
            ("box-a", "py3.11.7"), ("box-b", "py3.12.1")]


@pytest.mark.slow
def test_an_environment_change_is_labelled_not_a_step(tmp_path):
    db = tmp_path / "h.db"
    with HistoryDB(db) as history:
        for i in range(16):
            python, value = ("3.11.7", 1e-6) if i < 8 else ("3.12.1", 2e-6)
            results = _results("box", python, f"{i:04x}aaaa", value)
            history.add(observations(results), commit=Commit(f"{i:04x}aaaa",
                                                             f"2026-01-{i + 1:02d}", i),
                        machine="box", measured_at="", source=f"{i}.json", digest=str(i),
                        environment=results.environment)
        assert [steps_of(s) for s in history.series()] == [[], []]
    out = cli("history", "regressions", "--db", db, cwd=tmp_path, check_code=0)
    assert out.stdout.splitlines() == [
        "no steps found",
        "environment change bench [time, box]: py3.11.7 -> py3.12.1 at 0008aaaa (not a code "
        "change)"]


def test_a_step_in_the_newest_commits_is_pending_and_breaks_no_gate_until_it_holds(tmp_path):
    # four slow nights at the end look like a step, and like a busy runner's spell (the
    # runner had a slow night before, night 10): listed as pending, no gate broken; six
    # nights on, a level and a broken gate
    db = tmp_path / "h.db"

    def add(history, commits):
        for i in commits:
            results = _results("box", "3.11.7", f"{i:04x}aaaa",
                               1e-6 if i < 30 and i != 10 else 2e-6)
            history.add(observations(results), commit=Commit(f"{i:04x}aaaa",
                                                             f"2026-01-01T{i:05d}", i),
                        machine="box", measured_at="", source=f"{i}.json", digest=str(i),
                        environment=results.environment)
    with HistoryDB(db) as history:
        add(history, range(34))
    out = cli("history", "regressions", "--fail-on", "slower>5%", "--db", db, cwd=tmp_path,
              check_code=0).stdout
    assert "bench [time, box, py3.11.7]: +100.00% (pending)" in out, out
    assert "breaks a gate" not in out
    assert "only 4 commits after it" in out
    assert "1 pending (the newest commits: --confirm, or more commits)" in cli(
        "history", "regressions", "--db", db, cwd=tmp_path, check_code=0).stderr
    (shown,) = json.loads(cli("history", "regressions", "--json", "--db", db, cwd=tmp_path,
                              check_code=0).stdout)
    assert (shown["pending"], shown["transient"], shown["commit"]) == (True, False, "001eaaaa")
    with HistoryDB(db) as history:
        add(history, range(34, 36))
    out = cli("history", "regressions", "--fail-on", "slower>5%", "--db", db, cwd=tmp_path,
              check_code=1).stdout
    assert "bench [time, box, py3.11.7]: +100.00% (interval" in out and "breaks a gate" in out, out


def test_hostile_asv_files_are_skipped_with_a_reason_and_the_rest_imports(tmp_path):
    results = tmp_path / "results"
    shutil.copytree(ASTROPY, results)
    box = results / "cheetah"
    (box / "deep-py.json").write_text("[" * 100_000 + "]" * 100_000)
    (box / "huge-py.json").write_text('{"version": 2, "commit_hash": "abcd", "date": 1e400, '
                                      '"result_columns": ["result"], "results": {"t.time_x": '
                                      '[[' + "9" * 5000 + ']]}}')
    (box / "wide-py.json").write_text('{"version": 2, "commit_hash": "abcd", "date": 1e12, '
                                      '"result_columns":'
                                      ' ["result", "params"], "results": {"t.time_x": [[1], '
                                      '[' + ",".join(['["1","2","3","4","5","6","7","8"]'] * 8)
                                      + ']]}}')
    (box / "hash-py.json").write_text('{"version": 2, "commit_hash": "--output=x", '
                                      '"result_columns": ["result"], "results": {}}')
    # a real file without its date: without --repo it has no place in the order
    dated = json.loads((box / "e1434796-py2.7-Cython-numpy1.8.json").read_text())
    del dated["date"]
    (box / "e1434796-py2.7-Cython-numpy1.8.json").write_text(json.dumps(dated))
    out = cli("history", "import-asv", results, "--db", tmp_path / "h.db", cwd=tmp_path,
              check_code=0)
    assert "Traceback" not in out.stderr
    first = out.stdout.splitlines()[0]
    assert first.startswith("23 asv results files: 17 added"), first
    with HistoryDB(tmp_path / "again.db") as history:
        reasons = dict(import_asv(history, results).skipped_files)
    assert reasons["cheetah/deep-py.json"] == "not JSON (nested too deeply)"
    assert reasons["cheetah/huge-py.json"].startswith("not JSON (Exceeds the limit")
    assert "not a commit id" in reasons["cheetah/hash-py.json"]
    assert reasons["cheetah/e1434796-py2.7-Cython-numpy1.8.json"] == (
        "no date, and no place in a repository (pass --repo with the project's checkout)")
    with HistoryDB(tmp_path / "h.db") as history:
        wide = [s for s in history.series() if s.benchmark.startswith("t.time_x")]
        # 8^8 grid points for one value: the benchmark is a failure, not 16 million rows
        assert [(s.benchmark, len(s.failed)) for s in wide] == [("t.time_x", 1)]
    assert not (tmp_path / "x").exists()
    metric = set(history_metrics())
    assert {"time", "mem", "peakmem", "track", "instructions"} == metric


@pytest.mark.slow
def test_confirm_says_when_imported_data_cannot_be_re_measured(tmp_path):
    db = _imported(tmp_path)
    (tmp_path / "bench_x.py").write_text("from benchkit import Timer\nb = Timer('pass')\n")
    out = cli("history", "regressions", "--metric", "time", "--confirm",
              tmp_path / "bench_x.py", "--db", db, cwd=tmp_path, check_code=0)
    confirmations = [line.strip() for line in out.stdout.splitlines()
                     if line.startswith("    not re-measurable")]
    assert confirmations == ["not re-measurable: no repository (pass --repo)"] * 6, out.stdout
    # kept: a later listing and the report say it without re-measuring
    later = json.loads(cli("history", "regressions", "--metric", "time", "--json", "--db", db,
                           cwd=tmp_path, check_code=0).stdout)
    said = [s["confirmation"] for s in later if s.get("kind") != "environment"]
    assert said.count("not re-measurable: no repository (pass --repo)") == 6, said
    cli("report", tmp_path / "site", "--db", db, cwd=tmp_path, check_code=0)
    index = (tmp_path / "site" / "index.html").read_text()
    assert '<strong class="verdict">not re-measurable</strong>' in index
    comment = cli("report", "--markdown", "--db", db, cwd=tmp_path, check_code=0).stdout
    assert comment.count("(not re-measurable) |") == 6, comment


def test_skip_existing_is_per_metric(tmp_path):
    """A commit that holds wall time is not skipped when instruction counts are asked for:
    it is measured (here the install fails at once, so it is 'failed', not 'skipped')."""
    from benchkit.orchestration.history import run_history
    from test_git_options import _repo
    repo = _repo(tmp_path / "repo")
    sha = __import__("subprocess").run(["git", "-C", str(repo), "rev-parse", "HEAD"],
                                       capture_output=True, text=True).stdout.strip()
    with HistoryDB(tmp_path / "h.db") as history:
        history.add(observations(_results("box", "3.11.7", sha, 1e-6)),
                    commit=Commit(sha, "2026-01-01"), machine="box", measured_at="",
                    source="r.json", digest="d", environment={})
        for metrics, status in ((["time"], "skipped"),
                                (["instructions"], "failed"),
                                (["time", "instructions"], "failed")):
            (outcome,) = run_history(history, repo, [Commit(sha, "")], [str(tmp_path)], [],
                                     machine="box", install="false", metrics=metrics)
            assert outcome.status == status, (metrics, outcome)


def test_a_benchmark_that_only_ever_failed_is_listed(tmp_path):
    # asv's test data's time_AAA_failure failed wherever it ran: `history list` left it out
    db = _imported(tmp_path)
    listed = cli("history", "list", "--db", db, cwd=tmp_path, check_code=0).stdout
    header, _, *rows = listed.splitlines()
    assert header.split()[:8] == ["benchmark", "metric", "machines", "environments",
                                  "commits", "observations", "failed", "commits"]
    (row,) = [r for r in rows if r.startswith("time_AAA_failure ")]
    assert row.split()[:7] == ["time_AAA_failure", "time", "cheetah", "1", "0", "0", "1"]
    # the names --env takes, once, after the table
    assert rows[-1] == ("environments (--env): py2.7-Cython-numpy1.8, py2.7-foo-numpy1.8, "
                        "py2.7-numpy1.8")


def test_env_narrows_every_view_to_one_environment(tmp_path):
    # asv's astropy runs hold three environments of one machine; --env takes the names
    # `history list` prints
    db = _imported(tmp_path)
    env = "py2.7-Cython-numpy1.8"
    every = json.loads(cli("history", "regressions", "--json", "--db", db, cwd=tmp_path,
                           check_code=0).stdout)
    steps = [s for s in every if s.get("kind") != "environment"]
    assert {s["environment"] for s in steps} == {env}
    for env_first in (False, True):        # the steps kept for one query serve the other
        fresh = tmp_path / f"fresh{env_first}.db"
        shutil.copy(db, fresh)
        queries = [[], ["--env", env]] if not env_first else [["--env", env], []]
        got = [json.loads(cli("history", "regressions", "--json", *flags, "--db", fresh,
                              cwd=tmp_path, check_code=0).stdout) for flags in queries]
        one = got[1] if not env_first else got[0]
        assert one == steps and len(one) == 6
    assert json.loads(cli("history", "regressions", "--json", "--env", "py2.7-numpy1.8",
                          "--db", db, cwd=tmp_path, check_code=0).stdout) == []
    shown = cli("history", "show", "time_units.time_unit_parse", "--env", env, "--db", db,
                cwd=tmp_path, check_code=0).stdout
    assert shown.count("== time_units.time_unit_parse") == 1 and f"cheetah, {env}" in shown
    markdown = cli("report", "--markdown", "--env", "py2.7-numpy1.8", "--db", db,
                   cwd=tmp_path, check_code=0).stdout
    rows = [r for r in markdown.splitlines() if r.startswith("| time")]
    # each row names its machine and environment: the same benchmark in two environments
    # would otherwise read as one
    assert rows and all(" | cheetah · py2.7-numpy1.8 | " in r for r in rows)


@pytest.mark.parametrize("flags", [["--machine", "cheetha"], ["--env", "py2.7"],
                                   ["--benchmark", "time_units.time_unit_pars"],
                                   ["--metric", "mem"]])
def test_a_filter_that_matches_nothing_is_an_error_not_a_passing_gate(tmp_path, flags):
    # "no steps found" and exit 0 let a --fail-on gate pass on a typo
    db = _imported(tmp_path)
    out = cli("history", "regressions", *flags, "--fail-on", "slower>5%", "--db", db,
              cwd=tmp_path, check_code=2)
    assert f"no series with that {flags[0]} {flags[1]!r}" in out.stderr
    assert ("machines held: cheetah, not-cheetah; environments: py2.7-Cython-numpy1.8, "
            "py2.7-foo-numpy1.8, py2.7-numpy1.8; benchmarks: ") in out.stderr
    if flags[0] in ("--machine", "--env"):
        out = cli("report", "--markdown", *flags, "--db", db, cwd=tmp_path, check_code=2)
        assert f"no benchmarks with that {flags[0]} {flags[1]!r}" in out.stderr


def test_confirm_keeps_why_ab_could_not_re_measure(tmp_path):
    """A verdict is one line, and it keeps the cause (the install's own last line), not
    only that `ab` failed."""
    import subprocess
    from benchkit.core.history.step import Step
    from benchkit.orchestration.bisect import confirm_steps
    from test_git_options import _repo
    repo = _repo(tmp_path / "repo")
    first, second = subprocess.run(["git", "-C", str(repo), "rev-list", "--reverse", "HEAD"],
                                   capture_output=True, text=True, check=True).stdout.split()[:2]
    (tmp_path / "bench_x.py").write_text("from benchkit import Timer\nb = Timer('pass')\n")
    step = Step("bench_x::b", "time", "box", Commit(first, ""), Commit(second, ""), 1.0, 1.5,
                0.5, 0.5, 0.5)
    (said,) = confirm_steps([step], repo, [str(tmp_path / "bench_x.py")],
                            install='echo "ERROR: no wheel for this platform" >&2; exit 3',
                            ab_args=[], workdir=tmp_path)
    assert said.confirmation.startswith(f"not re-measurable: {second[:12]}: `benchkit ab`")
    assert said.confirmation.endswith("failed (exit 2): ERROR: no wheel for this platform")


SCIPY = FIXTURES / "asv-real" / "scipy-releases"


def test_scipys_real_releases_name_its_1_15_logit_step_at_the_release(tmp_path):
    # held out: scipy's own suite on its 23 releases since 1.9.2 was recorded after the
    # method's constants were chosen (tests/fixtures/asv-real/README.md); special.logit
    # got about 2.8 times slower in 1.15.0, a step asv names there too
    import hashlib
    db = tmp_path / "h.db"
    out = cli("history", "import-asv", SCIPY, "--db", db, cwd=tmp_path, check_code=0)
    assert out.stdout.startswith("23 asv results files: 23 added (207 values, 0 failed or "
                                 "skipped benchmarks), 0 already there, 0 skipped")
    records = json.loads(cli("history", "regressions", "--json", "--db", db, cwd=tmp_path,
                             check_code=0).stdout)
    named = {r["benchmark"]: r for r in records if r.get("placed")}
    release = hashlib.sha1(b"scipy==1.15.0").hexdigest()
    for api in ("numpy", "cython"):
        step = named[f"cython_special.CythonSpecial.time_logit_d[name='logit_d',"
                     f"argument=(0.5,),N=1000,api='{api}']"]
        assert step["commit"] == release and not step["transient"]
        assert 1.7 < step["change"] < 1.9
    # every step of the excerpt is slower, and none is named at another release
    assert all(r["change"] > 0 for r in records)
    assert {r["commit"] for r in records if r["placed"]} == {release}
