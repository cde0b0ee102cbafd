"""One machine name, hardware of several kinds: a series per kind of CPU (asv's graphs
split on the machine's params too), named by what differs; a move to another kind is an
environment change, not a step. On astropy's real asv results (tests/fixtures/asv-real),
with the CPU their files record changed in some of them as a pool of CI runners would."""
from __future__ import annotations

import dataclasses
import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given

import benchkit
from benchkit.core.history.changes import (environment_labels, hardware_of, hardware_sql,
                                           labelled_runs, named_by_host)
from benchkit.core.history.series import Commit, observations
from benchkit.system.history_db import HistoryDB
from test_cli import cli
from test_readers_fuzz import FUZZ, json_trees

ASTROPY = Path(__file__).parent / "fixtures" / "asv-real" / "astropy-cheetah"
LAPTOP = "Intel(R) Core(TM) i5-2520M CPU @ 2.50GHz (4 cores)"
RUNNER = "Intel(R) Xeon(R) Platinum 8272CL CPU @ 2.60GHz (2 cores)"
ENV = "py2.7-Cython-numpy1.8"


def _on_runner(tmp_path: Path, names: set[str]) -> Path:
    """The fixture with the files of the given commits recorded on RUNNER."""
    copy = tmp_path / "results"
    shutil.copytree(ASTROPY, copy)
    for path in (copy / "cheetah").glob(f"*-{ENV}.json"):
        if path.name.split("-")[0] in names:
            document = json.loads(path.read_text())
            document["params"]["cpu"] = RUNNER
            path.write_text(json.dumps(document))
    return copy


def test_runs_of_one_machine_on_two_cpus_are_two_series_named_by_cpu(tmp_path):
    # every other commit by date on the runner: a pool whose runs land on either kind
    by_date = ["60cab3e8", "a0954198", "13dd6571", "f5c0b8ed", "1726ce6e", "8a997b01",
               "2b12eec5", "fcf8c079", "51b0b7e4", "6c188c11", "38928c26", "ba9b5125",
               "faae7f3b", "e1434796", "c1a0773e"]
    results = _on_runner(tmp_path, set(by_date[1::2]))
    db = tmp_path / "h.db"
    cli("history", "import-asv", results, "--db", db, cwd=tmp_path, check_code=0)
    with HistoryDB(db) as history:
        parse = history.series(benchmark="time_units.time_unit_parse")
        assert {(s.machine, s.environment): len(s.points) for s in parse} == {
            ("cheetah", f"{ENV} · cpu {LAPTOP}"): 8,
            ("cheetah", f"{ENV} · cpu {RUNNER}"): 6,      # fcf8c079 ran an older version
            # the other environment ran on one CPU: its name stays as asv gave it
            ("cheetah", "py2.7-numpy1.8"): 1}
        runner = next(s for s in parse if RUNNER in s.environment)
        assert [p.commit.sha[:8] for p in runner.points] == [
            sha for sha in by_date[1::2] if sha != "fcf8c079"]
        # the environment asv named still selects its series, on both kinds
        assert len(history.series(benchmark="time_units.time_unit_parse",
                                  environment=ENV)) == 2
        assert history.series(benchmark="time_units.time_unit_parse",
                              environment=f"{ENV} · cpu {RUNNER}") == [runner]
    # side by side, the two kinds are no environment change (the fixture's own move to
    # py2.7-numpy1.8 at fcf8c079 is one, from whichever kind measured the commit before)
    out = cli("history", "regressions", "--json", "--db", db, cwd=tmp_path, check_code=0)
    assert {(c["environment_before"], c["environment_after"])
            for c in json.loads(out.stdout) if c.get("kind") == "environment"} == {
        (f"{ENV} · cpu {RUNNER}", "py2.7-numpy1.8")}
    # an export keeps the environment asv named and gives the series' name beside it
    exported = json.loads(cli("history", "export", "--db", db, cwd=tmp_path,
                              check_code=0).stdout)
    parse_rows = {(r["commit"][:8], r["environment"], r["series_environment"])
                  for r in exported if r["benchmark"] == "time_units.time_unit_parse"}
    assert ("a0954198", ENV, f"{ENV} · cpu {RUNNER}") in parse_rows
    assert ("60cab3e8", ENV, f"{ENV} · cpu {LAPTOP}") in parse_rows
    assert {(env, label) for _, env, label in parse_rows} == {
        (ENV, f"{ENV} · cpu {LAPTOP}"), (ENV, f"{ENV} · cpu {RUNNER}"),
        ("py2.7-numpy1.8", "py2.7-numpy1.8")}


def test_a_machine_moved_to_another_cpu_is_an_environment_change_not_a_step(tmp_path):
    later = {"38928c26", "ba9b5125", "faae7f3b", "e1434796", "c1a0773e"}
    db = tmp_path / "h.db"
    cli("history", "import-asv", _on_runner(tmp_path, later), "--db", db, cwd=tmp_path,
        check_code=0)
    out = cli("history", "regressions", "--benchmark", "time_units.time_unit_parse",
              "--db", db, cwd=tmp_path, check_code=0)
    assert (f"environment change time_units.time_unit_parse [time, cheetah]: {ENV} · cpu "
            f"{LAPTOP} -> {ENV} · cpu {RUNNER} at 38928c26aa36 (not a code change)"
            ) in out.stdout.splitlines()


def test_benchkits_own_runs_on_two_cpus_keep_their_evidence_apart(tmp_path):
    db = tmp_path / "h.db"
    with HistoryDB(db) as history:
        for i, (cpu, value) in enumerate([("EPYC 7763", 1e-6), ("Xeon 8370C", 2e-6)] * 2):
            m = benchkit.Measurement(10, [value * 10] * 4, benchkit.TaskSpec(
                "x", "", label="bench"), {"benchmark": "bench"})
            env = {"hostname": "ci", "python": "3.11.7", "cpu_model": cpu, "cpu_count": 4,
                   "git": {"commit": f"{i:04x}aaaa"}}
            history.add(observations(benchkit.Results([m], [], env)),
                        commit=Commit(f"{i:04x}aaaa", f"2026-01-0{i + 1}", i), machine="ci",
                        measured_at="", source=f"{i}.json", digest=str(i), environment=env)
        series = history.series()
        assert sorted((s.environment, len(s.points)) for s in series) == [
            ("py3.11.7 · cpu EPYC 7763", 2), ("py3.11.7 · cpu Xeon 8370C", 2)]
        for one in series:
            found = [m.median for p in one.points for m in history.evidence(one, p)]
            assert found == [p.value for p in one.points] and len(set(found)) == 1
        # a run added after the names were read: read again (the database changed)
        env = dict(env, cpu_model="Neoverse-V1", git={"commit": "0004aaaa"})
        m = benchkit.Measurement(10, [3e-5] * 4, benchkit.TaskSpec("x", "", label="bench"),
                                 {"benchmark": "bench"})
        history.add(observations(benchkit.Results([m], [], env)),
                    commit=Commit("0004aaaa", "2026-01-05", 4), machine="ci", measured_at="",
                    source="4.json", digest="4", environment=env)
        (third,) = history.series(environment="py3.11.7 · cpu Neoverse-V1")
        assert [m.median for m in history.evidence(third, third.points[0])] == [3e-6]


def test_hardware_labels_name_only_what_differs():
    runs = {1: ("m", "py3.11", (("cpu", "A"), ("ram", "8G"))),
            2: ("m", "py3.11", (("cpu", "B"), ("ram", "8G"))),
            3: ("m", "py3.11", (("ram", "8G"),)),             # no CPU recorded
            6: ("m", "py3.13", (("cpu", "A"),)),
            7: ("m", "py3.13", ()),                 # recorded nothing: not set apart
            4: ("m", "py3.12", (("cpu", "A"),)),
            5: ("n", "py3.11", (("cpu", "C"),))}
    assert environment_labels(runs) == {1: "py3.11 · cpu A", 2: "py3.11 · cpu B",
                                        3: "py3.11 · cpu ?", 4: "py3.12", 5: "py3.11",
                                        6: "py3.13", 7: "py3.13"}
    assert environment_labels({1: ("m", "", (("arch", "x86_64"),)),
                               2: ("m", "", (("arch", "arm64"),))}) == {
        1: "arch x86_64", 2: "arch arm64"}


def test_hardware_is_read_from_either_fingerprint_and_junk_is_left_out():
    import sqlite3
    db = sqlite3.connect(":memory:")

    def read(environment) -> tuple:
        text = environment if isinstance(environment, str) else json.dumps(environment)
        return hardware_of(db.execute(f"SELECT {hardware_sql('e')} FROM (SELECT ? AS e)",
                                      (text,)).fetchone()[0])
    # not os or ram (a kernel update, a VM reporting a few MB less: the same kind)
    asv = {"source": "asv", "machine": {"machine": "box", "cpu": "A  B\n", "num_cpu": 4.0,
                                        "arch": "x86_64", "os": "Linux", "ram": 8.5e9}}
    assert read(asv) == (("arch", "x86_64"), ("cpu", "A B"), ("num_cpu", "4.0"))
    assert read({"hostname": "h", "machine": "aarch64", "cpu_model": "Neoverse-N1",
                 "cpu_count": 2}) == (("arch", "aarch64"), ("cpu", "Neoverse-N1"),
                                      ("num_cpu", "2"))
    assert read({"machine": {"cpu": ["a list"], "num_cpu": True, "arch": "x" * 500}}) == (
        ("arch", "x" * 120),)
    assert read({"machine": {"cpu": "\x1b[31m", "num_cpu": float("nan")}}) == ()
    assert read("{not json") == () and hardware_of("[1") == () and hardware_of("7") == ()


def test_runners_named_by_host_are_pointed_at_one_machine_name(tmp_path):
    # each run in a folder of its own, named as asv names a fresh CI runner: by its host
    results = tmp_path / "results"
    results.mkdir()
    shutil.copy(ASTROPY / "benchmarks.json", results)
    for i, path in enumerate(sorted((ASTROPY / "cheetah").glob(f"*-{ENV}.json"))):
        try:
            document = json.loads(path.read_text())
        except ValueError:          # asv's authors' malformed file
            continue
        if not isinstance(document.get("params"), dict):
            continue
        document["params"]["machine"] = f"fv-az{i}-123"
        (results / f"fv-az{i}-123").mkdir()
        (results / f"fv-az{i}-123" / path.name).write_text(json.dumps(document))
    out = cli("history", "import-asv", results, "--db", tmp_path / "a.db", cwd=tmp_path,
              check_code=0)
    assert ("warning: 16 machines, most with one or two runs: CI runners each named by its "
            "host?") in out.stderr
    out = cli("history", "import-asv", results, "--machine", "gh", "--db", tmp_path / "b.db",
              cwd=tmp_path, check_code=0)
    assert "CI runners" not in out.stderr
    with HistoryDB(tmp_path / "b.db") as history:
        (parse,) = history.series(benchmark="time_units.time_unit_parse", environment=ENV)
        assert (parse.machine, parse.environment, len(parse.points)) == ("gh", ENV, 14)
    # the same warning where the history is read, whatever added the runs
    out = cli("history", "regressions", "--db", tmp_path / "a.db", cwd=tmp_path,
              check_code=0)
    assert "warning: 16 machines, most with one or two commits: CI runners" in out.stderr
    out = cli("history", "regressions", "--db", tmp_path / "b.db", cwd=tmp_path,
              check_code=0)
    assert "CI runners" not in out.stderr


def test_machines_named_by_host_are_many_with_a_run_or_two_each():
    assert named_by_host([1, 1, 1, 1, 1]) and named_by_host([2, 2, 2, 9, 9])
    assert not named_by_host([1, 1, 1, 1])            # four machines: a small lab
    assert not named_by_host([1, 1, 5, 5, 5])         # most hold a history
    assert not named_by_host([])


@FUZZ
@given(json_trees, json_trees)
def test_any_stored_fingerprint_names_its_hardware_or_nothing(one, other):
    import sqlite3
    db = sqlite3.connect(":memory:")
    rows = [(i, "sha", "m", "env", "", db.execute(
        f"SELECT {hardware_sql('e')} FROM (SELECT ? AS e)",
        (json.dumps(environment),)).fetchone()[0]) for i, environment in enumerate(
        ({"machine": one}, {"machine": other, "cpu_model": one}))]
    for run in labelled_runs(rows):
        assert run[4] == "env" or run[4].startswith("env · ")
        assert run[4].isprintable() and len(run[4]) < 400



NUMPY = json.loads((Path(__file__).parent / "fixtures" / "history"
                    / "numpy-releases-excerpt.json").read_text())
# every commit whose place, times 7, ends in 0, 1 or 2: 30 % of the runs, on a slower runner
SLOW = {sha for i, sha in enumerate(NUMPY["commits"]) if (i * 7) % 10 < 3}
# ... or half of them: 0-4
HALF = {sha for i, sha in enumerate(NUMPY["commits"]) if (i * 7) % 10 < 5}


def _numpy_series(slower: float = 1.0, step_at: int | None = None, slow: set = SLOW) -> list:
    """numpy's real release series as a history (one machine and environment); with
    `slower`, the `slow` commits' runs `slower` times slower in every series; with
    `step_at`, the first series +50 % from that release on."""
    from benchkit.core.history.series import Point, Series
    out = []
    for n, (name, values) in enumerate(NUMPY["series"].items()):
        points = []
        for i, (sha, value) in enumerate(zip(NUMPY["commits"], values)):
            value *= (slower if sha in slow else 1.0) * (
                1.5 if n == 0 and step_at is not None and i >= step_at else 1.0)
            points.append(Point(Commit(sha, f"2026-01-01T00:{i:02d}:00+00:00", i + 1, ""),
                                value, value, value, 1, 1))
        out.append(Series(name, "time", "vm-numpy", tuple(points), "py3.11"))
    return out


def test_real_series_show_no_kinds_of_runner_and_a_pool_shows_its_own():
    from benchkit.core.history.machine.runners import runner_kinds

    def points(series):
        return [([p.commit.sha for p in s.points], [p.value for p in s.points])
                for s in series]
    assert runner_kinds(points(_numpy_series())) is None
    kinds = runner_kinds(points(_numpy_series(slower=1.3)))
    # every run on the slower runner and no other, c73afd51 too: the release where several
    # of these benchmarks got 10-20 % faster, which cancels most of the 30 % there (the
    # running median alone missed it)
    assert kinds is not None and kinds.slow == SLOW
    assert all(abs(gap - math.log(1.3)) < 0.05 for gap in kinds.gaps), kinds.gaps
    assert runner_kinds(points(_numpy_series(slower=1.3))[:4]) is None   # too few series


def test_a_pool_of_two_kinds_half_and_half_is_told_apart():
    # half and half, the running median of each series flips between the kinds: most series
    # stand above it on neither; where each series' lower level is taken instead, they do
    from benchkit.core.history.machine.runners import runner_kinds

    def points(series):
        return [([p.commit.sha for p in s.points], [p.value for p in s.points])
                for s in series]
    for slower in (1.2, 1.3, 1.5):
        kinds = runner_kinds(points(_numpy_series(slower=slower, slow=HALF)))
        assert kinds is not None and kinds.slow <= HALF, slower
        assert len(kinds.slow) >= 0.8 * len(HALF), (slower, len(kinds.slow), len(HALF))
        gaps = [gap for gap in kinds.gaps if gap]
        assert abs(float(np.median(gaps)) - math.log(slower)) < 0.02, gaps
    # a history of more than KIND_SAMPLE series is judged on a sample first, then in full
    many = points(_numpy_series(slower=1.3, slow=HALF)) * 6
    kinds = runner_kinds(many)
    assert len(many) > 64 and kinds is not None and kinds.slow <= HALF
    assert len(kinds.slow) >= 0.8 * len(HALF) and all(kinds.gaps)
    assert runner_kinds(points(_numpy_series()) * 6) is None


def test_a_step_all_series_take_is_not_a_kind_of_runner():
    # a short history (numpy's 39 releases) whose series all step up together: the runs
    # after the step stand above the lower level of the runs before it, in one block
    from benchkit.core.history.machine.runners import runner_kinds
    history = [([p.commit.sha for p in s.points], np.array([p.value for p in s.points]))
               for s in _numpy_series()]
    # (not 26-30 at +30 %: there the running median, benchkit's second look, still takes 2-3
    # releases right after the step for slower runs; a known weakness, docs/performance.md)
    for at in [*range(3, 26), *range(31, len(history[0][1]) - 2)]:
        for size in (1.1, 1.3, 0.8):
            stepped = [(commits, values * np.where(np.arange(len(values)) >= at, size, 1.0))
                       for commits, values in history]
            assert runner_kinds(stepped) is None, (at, size)
            # the same with a benchmark added later (the newest 15 releases) listed first:
            # the history's ends are still its oldest and newest commits
            late = (stepped[1][0][-15:], stepped[1][1][-15:])
            assert runner_kinds([late, *stepped]) is None, (at, size, "late")


@pytest.mark.parametrize("slow", [SLOW, HALF], ids=["30%", "50%"])
def test_a_step_among_runs_of_two_kinds_is_found_where_it_was_put(tmp_path, slow):
    from benchkit.core.history.steps import steps_of
    from benchkit.core.history.machine.runners import on_one_kind
    from benchkit.orchestration.history import find_steps
    pooled = _numpy_series(slower=1.3, step_at=20, slow=slow)
    # read as it is, the pool hides the +50 % step of the first series
    assert not [s for s in steps_of(pooled[0]) if not s.transient]
    with HistoryDB(tmp_path / "h.db") as db:
        found = [s for s in find_steps(db, series_list=pooled)
                 if s.benchmark == pooled[0].benchmark and not s.transient]
    assert [(s.commit.sha, round(s.change, 1)) for s in found] == [(NUMPY["commits"][20], 0.5)]
    assert "were slower in most of its series at once (a second kind of runner?)" \
        in found[0].evidence
    # without the pool nothing is changed
    plain = _numpy_series(step_at=20)
    assert on_one_kind(plain) == (plain, {})


@pytest.mark.parametrize("slow", [SLOW, HALF], ids=["30%", "50%"])
def test_a_regressions_query_for_one_benchmark_tells_the_kinds_from_the_whole_history(
        tmp_path, slow):
    from benchkit.core.history.series import Observation
    pooled = _numpy_series(slower=1.3, step_at=20, slow=slow)
    db = tmp_path / "h.db"
    with HistoryDB(db) as history:
        for i, sha in enumerate(NUMPY["commits"]):
            history.add([Observation(s.benchmark, "time", s.points[i].value, s.points[i].value,
                                     s.points[i].value, 1, None) for s in pooled],
                        commit=pooled[0].points[i].commit, machine="vm-numpy", measured_at="",
                        source=f"{i}.json", digest=str(i), environment={"python": "3.11"},
                        env="py3.11")
    for narrowed in ([], ["--benchmark", pooled[0].benchmark]):
        out = cli("history", "regressions", "--json", *narrowed, "--db", db, cwd=tmp_path,
                  check_code=0)
        found = [(s["commit"], round(s["change"], 1)) for s in json.loads(out.stdout)
                 if s.get("benchmark") == pooled[0].benchmark and not s.get("transient")]
        assert found == [(NUMPY["commits"][20], 0.5)], narrowed


def test_a_series_is_taken_down_only_at_the_slower_runs_it_ran_slower_at():
    # a busy neighbour slows a machine's series unevenly: the first series ran at its own
    # speed at half the slower kind's runs; there its values stay (taken down, they stood
    # a gap below it: after a step, at the level before)
    from benchkit.core.history.machine.runners import on_one_kind
    pooled = _numpy_series(slower=1.3, step_at=20, slow=SLOW)
    first = pooled[0]
    spared = {p.commit.sha for k, p in enumerate(first.points) if p.commit.sha in SLOW
              and k % 2}
    first = dataclasses.replace(first, points=tuple(
        p._replace(value=p.value / 1.3, low=p.low / 1.3, high=p.high / 1.3)
        if p.commit.sha in spared else p for p in first.points))
    out, notes = on_one_kind([first, *pooled[1:]])
    assert spared
    for before, after in zip(first.points, out[0].points):
        if before.commit.sha in SLOW and before.commit.sha not in spared:
            assert after.value == pytest.approx(before.value / 1.3, rel=0.05)
        else:
            assert after.value == before.value, before.commit.sha
    assert f"at the {len(SLOW) - len(spared)} it ran slower at" in notes[out[0].key]


@pytest.mark.parametrize("slow", [SLOW, HALF], ids=["30%", "50%"])
def test_a_query_for_one_benchmark_finds_its_steps_as_the_whole_history_does(tmp_path, slow):
    # the machine's rules (stretches it ran slower, its share of slower runs, its newest
    # spell) read the runs on one kind in both: a --benchmark query had read them as they
    # ran, and given a span to a step a whole `regressions` named at one commit (or the
    # other way round)
    from benchkit.core.history.series import Observation
    from benchkit.orchestration.history import find_steps
    differed = []
    for at in (8, 14, 20, 26):
        pooled = _numpy_series(slower=1.3, step_at=at, slow=slow)
        with HistoryDB(tmp_path / f"{at}.db") as history:
            for i, sha in enumerate(NUMPY["commits"]):
                history.add([Observation(s.benchmark, "time", s.points[i].value,
                                         s.points[i].value, s.points[i].value, 1, None)
                             for s in pooled], commit=pooled[0].points[i].commit,
                            machine="vm-numpy", measured_at="", source=f"{i}.json",
                            digest=str(i), environment={"python": "3.11"}, env="py3.11")
            name = pooled[0].benchmark
            # the narrow query first: a wider one kept would give it its steps
            one, whole = ([(s.commit.sha, s.span and (s.span[0].sha, s.span[1].sha),
                            s.pending, s.transient, round(s.change, 6))
                           for s in found if s.benchmark == name]
                          for found in (find_steps(history, benchmark=name), find_steps(history)))
        assert whole, at
        differed += [at] if whole != one else []
    assert differed == []


@pytest.mark.parametrize("slow", [SLOW, HALF], ids=["30%", "50%"])
def test_a_pools_slower_kind_is_not_read_as_the_machine_running_slower(tmp_path, slow):
    # the slower kind's runs are most series slower at once; read as the machine's slower
    # stretches they made the steps there spans (every position on pools of real
    # histories: half the runs 1.3x slower, 50 % steps placed 96 % of the time on the
    # eighth VM's idle history with the pool taken out first, 33 % without). Taken out,
    # the pool leaves the steps where they are without it, placed or not
    from benchkit.orchestration.history import find_steps

    def placed(pooled, at):
        with HistoryDB(tmp_path / f"{len(slow)}-{pooled}-{at}.db") as db:
            series_list = _numpy_series(slower=1.3 if pooled else 1.0, step_at=at, slow=slow)
            return [(s.commit.sha, s.placed) for s in find_steps(db, series_list=series_list)
                    if s.benchmark == series_list[0].benchmark and not s.transient]

    positions = range(6, 34)
    alone, pooled = ([placed(pool, at) for at in positions] for pool in (False, True))
    assert all(len(steps) == 1 for steps in alone + pooled)
    assert [steps[0][0] for steps in pooled] == [NUMPY["commits"][at] for at in positions]
    assert sum(a != p for a, p in zip(alone, pooled)) <= 3
