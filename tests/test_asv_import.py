"""`benchkit history import-asv`: asv's results format parsed exactly (a tree asv 0.6.6 wrote,
in tests/fixtures/asv), and end to end on a tree generated here by asv itself over three
commits of a real git project."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchkit.core.history.asv import parse_run
from benchkit.core.history.series import Status
from benchkit.errors import HistoryError
from test_cli import cli

FIXTURE = Path(__file__).parent / "fixtures" / "asv" / "results"
RUN_FILE = next((FIXTURE / "fixture-box").glob("*-existing-*.json"))


def test_an_asv_results_file_becomes_one_observation_per_grid_point():
    run = parse_run(json.loads(RUN_FILE.read_text()),
                    json.loads((FIXTURE / "benchmarks.json").read_text()), str(RUN_FILE))
    assert run.commit.sha == "07039935f8bfc885f94e8681841d20cb5f97b5c6"
    assert run.commit.date == "2026-11-23T13:27:53+00:00"
    assert run.machine == "fixture-box"
    assert [(o.benchmark, o.metric, o.units, o.status, o.unit)
            for o in run.observations] == [
        ("bench_grid.Grid.time_build[n=10,kind='list']", "time", 3, Status.OK, ""),
        ("bench_grid.Grid.time_build[n=10,kind='tuple']", "time", 3, Status.OK,
         ""),
        ("bench_grid.Grid.time_build[n=1000,kind='list']", "time", 3, Status.OK,
         ""),
        # the failing grid point (null) is a failure, not a missing point
        ("bench_grid.Grid.time_build[n=1000,kind='tuple']", "time", 0,
         Status.FAILED, ""),
        ("bench_grid.time_join", "time", 3, Status.OK, ""),
        # track_ arrives with the unit asv gives
        ("bench_grid.track_answer", "track", 1, Status.OK, "unit")]
    first = run.observations[0]
    assert first.value == 4.914500095765106e-07 and first.low <= first.value <= first.high
    assert first.evidence is None          # asv keeps no per-process evidence
    assert run.observations[-1].value == 42.0 and run.ignored == ()
    assert run.env_name.startswith("existing-py")


@pytest.mark.parametrize("document, message", [
    ([], "not a JSON object"),
    ({"version": 3}, "results format version 3"),
    ({"version": 2, "result_columns": ["result"], "results": {}}, "no commit_hash"),
    ({"version": 2, "commit_hash": "ab", "results": {}}, "no result_columns"),
])
def test_what_is_not_an_asv_results_file_is_one_clear_error(document, message):
    with pytest.raises(HistoryError, match=message) as caught:
        parse_run(document, {}, "r.json")
    assert str(caught.value).startswith("r.json: ")


def test_a_damaged_benchmark_entry_is_that_benchmarks_failure():
    run = parse_run({"version": 2, "commit_hash": "abcd", "result_columns": ["result",
                                                                             "params"],
                     "results": {"b.time_x": [[1.0, 2.0], [["1"]]], "b.time_y": [[3.0], []],
                                 "b.time_z": [None, []], "b.mem_m": [[1024], []],
                                 "b.peakmem_p": [[float("nan")], []]},
                     "some_future_field": {"x": 1}}, {}, "r.json")
    assert [(o.benchmark, str(o.metric), o.status.value, o.value)
            for o in run.observations] == [
        ("b.time_x", "time", "failed", None),          # 2 results for 1 grid point
        ("b.time_y", "time", "ok", 3.0),
        ("b.time_z", "time", "failed", None),          # asv's [None, [], ...]
        ("b.mem_m", "mem", "ok", 1024.0),
        ("b.peakmem_p", "peakmem", "skipped", None)]   # NaN: skipped


def test_a_directory_without_asv_results_is_refused(tmp_path):
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "x.json").write_text("{not json")
    out = cli("history", "import-asv", tmp_path, "--db", tmp_path / "h.db", cwd=tmp_path,
              check_code=2)
    assert "none of its 1 results files could be imported" in out.stderr
    assert "m/x.json: not JSON" in out.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    out = cli("history", "import-asv", empty, "--db", tmp_path / "h.db", cwd=tmp_path,
              check_code=2)
    assert "no asv results files" in out.stderr


# The work comes from the project (work.txt at the checkout's top), not from the benchmark's
# code: a benchmark whose code changes gets a new asv version, and its older results are
# left out, as asv publish leaves them out.
BENCHMARKS = '''
import pathlib

WORK = int((pathlib.Path(__file__).resolve().parent.parent / "work.txt").read_text())


def time_work():
    sum(range(WORK))

time_work.repeat, time_work.number, time_work.rounds, time_work.warmup_time = 3, 50, 1, 0
'''


def _git(repo, *args):
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                   check=True, capture_output=True)


@pytest.mark.slow
def test_asv_history_generated_by_asv_itself_imports_in_commit_order(tmp_path):
    asv = shutil.which("asv", path=str(Path(sys.executable).parent))
    if asv is None:
        pytest.skip("asv is not installed (it is in benchkit's [test] extra)")
    repo = tmp_path / "project"
    (repo / "benchmarks").mkdir(parents=True)
    (repo / "benchmarks" / "__init__.py").write_text("")
    (repo / "asv.conf.json").write_text(json.dumps({
        "version": 1, "project": "demo", "repo": ".", "branches": ["HEAD"],
        "environment_type": "existing", "benchmark_dir": "benchmarks",
        "results_dir": "results", "html_dir": "html"}))
    (repo / ".gitignore").write_text("results/\nhtml/\n.asv/\n")
    _git(tmp_path, "init", "-q", str(repo))
    # No bytecode: nothing of the suite may be read from a cache between the commits.
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"}
    subprocess.run([asv, "machine", "--yes", "--machine", "asv-box"], cwd=repo, env=env,
                   check=True, capture_output=True)
    shas = []
    for n, work in enumerate((1000, 1000, 3000)):
        (repo / "benchmarks" / "bench_work.py").write_text(BENCHMARKS)
        (repo / "work.txt").write_text(str(work))
        _git(repo, "add", "-A")
        _git(repo, "commit", "--allow-empty", "-qm", f"commit {n}")
        shas.append(subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"],
                                   capture_output=True, text=True).stdout.strip())
        done = subprocess.run([asv, "run", "--python=same", "--record-samples",
                               "--set-commit-hash", "HEAD"], cwd=repo, env=env,
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
    db = tmp_path / "history.db"
    out = cli("history", "import-asv", repo / "results", "--repo", repo, "--db", db,
              cwd=tmp_path, check_code=0)
    assert "3 asv results files: 3 added (3 values, 0 failed or skipped benchmarks)" \
        in out.stdout
    again = cli("history", "import-asv", repo / "results", "--db", db, cwd=tmp_path,
                check_code=0)
    assert "0 added (0 values, 0 failed or skipped benchmarks), 3 already there" \
        in again.stdout
    exported = json.loads(cli("history", "export", "--db", db, cwd=tmp_path,
                              check_code=0).stdout)
    assert {r["benchmark"] for r in exported} == {"bench_work.time_work"}
    assert {r["machine"] for r in exported} == {"asv-box"}
    shown = cli("history", "show", "bench_work.time_work", "--db", db, cwd=tmp_path,
                check_code=0).stdout
    # In commit order, with the subjects the checkout gave them.
    table = [line for line in shown.splitlines()[3:] if line.strip()]
    assert [line.split()[0] for line in table] == [s[:12] for s in shas], shown
    assert table[-1].endswith("commit 2")
    # each commit holds the value asv wrote for it (asv's own results files, read here)
    written = {}
    for path in (repo / "results" / "asv-box").glob("*.json"):
        if path.name != "machine.json":
            data = json.loads(path.read_text())
            entry = data["results"]["bench_work.time_work"]
            written[data["commit_hash"]] = entry[data["result_columns"].index("result")][0]
    assert {row["commit"]: row["value"] for row in exported} == written
    assert sorted(written) == sorted(shas)
    assert "asv-box" in shown


def test_with_repo_results_of_another_line_of_commits_are_skipped_not_mixed_in(tmp_path):
    # main: m0 m1 m2 m3 (merges side: s1) m4; branch other: o1 from m2, never merged. A
    # series is one line: s1 and o1 would be ordered among main's commits by date
    repo = tmp_path / "repo"
    _git(tmp_path, "init", "-q", "-b", "main", str(repo))
    shas = {}

    def commit(name):
        (repo / f"{name}.txt").write_text(name)
        _git(repo, "add", "-A")
        _git(repo, "commit", "-qm", name)
        shas[name] = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"],
                                    capture_output=True, text=True).stdout.strip()
    commit("m0")
    commit("m1")
    _git(repo, "checkout", "-qb", "side")
    commit("s1")
    _git(repo, "checkout", "-q", "main")
    commit("m2")
    _git(repo, "checkout", "-qb", "other")
    commit("o1")
    _git(repo, "checkout", "-q", "main")
    _git(repo, "merge", "-q", "--no-ff", "-m", "m3", "side")
    shas["m3"] = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"],
                                capture_output=True, text=True).stdout.strip()
    commit("m4")
    results = tmp_path / "results"
    shutil.copytree(FIXTURE, results)
    template = next(p for p in (results / "fixture-box").glob("*.json")
                    if p.name != "machine.json")
    doc = json.loads(template.read_text())
    template.unlink()
    # a commit the checkout does not have (it is older than the results): kept, by date
    shas["unknown"] = "ab" * 20
    for n, (name, sha) in enumerate(shas.items()):
        doc.update(commit_hash=sha, date=1795440473000 + n * 60_000)
        (results / "fixture-box" / f"{sha[:8]}-{name}.json").write_text(json.dumps(doc))
    db = tmp_path / "h.db"
    out = cli("history", "import-asv", results, "--repo", repo, "--db", db, cwd=tmp_path,
              check_code=0).stdout
    assert "8 asv results files: 6 added" in out, out
    assert "2 skipped" in out, out
    assert (f"fixture-box/{shas['s1'][:8]}-s1.json: a commit of a branch merged into HEAD, "
            "not on its first-parent line") in out, out
    assert (f"fixture-box/{shas['o1'][:8]}-o1.json: a commit of another branch, not in the "
            "history of --repo's HEAD") in out, out
    exported = json.loads(cli("history", "export", "--db", db, cwd=tmp_path,
                              check_code=0).stdout)
    assert {r["commit"] for r in exported} == {shas[n] for n in
                                                ("m0", "m1", "m2", "m3", "m4", "unknown")}
    # a bare clone (a CI mirror) orders them the same: nothing is checked out to import
    bare = tmp_path / "bare.git"
    _git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    from_bare = tmp_path / "bare.db"
    out = cli("history", "import-asv", results, "--repo", bare, "--db", from_bare,
              cwd=tmp_path, check_code=0).stdout
    assert "8 asv results files: 6 added" in out and "2 skipped" in out, out
    assert json.loads(cli("history", "export", "--db", from_bare, cwd=tmp_path,
                          check_code=0).stdout) == exported
    said = cli("history", "import-asv", results, "--repo", results, "--db", from_bare,
               cwd=tmp_path, check_code=2).stderr
    assert f"--repo {results}: not a git repository; pass --repo with the project's " \
        "checkout or a bare clone of it" in said, said


def test_a_shallow_clone_orders_by_date_and_says_so(tmp_path):
    # CI checks out one commit by default: counting ancestors there gives every commit the
    # place 1 (history add) or places from the clone's cut (import-asv), not its own
    repo = tmp_path / "repo"
    _git(tmp_path, "init", "-q", "-b", "main", str(repo))
    shas = []
    for n in range(4):
        (repo / "f.txt").write_text(str(n))
        _git(repo, "add", "-A")
        _git(repo, "commit", "-qm", f"c{n}")
        shas.append(subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"],
                                   capture_output=True, text=True).stdout.strip())
    shallow = tmp_path / "shallow"
    _git(tmp_path, "clone", "-q", "--depth", "2", f"file://{repo}", str(shallow))
    results = tmp_path / "results"
    shutil.copytree(FIXTURE, results)
    template = next(p for p in (results / "fixture-box").glob("*.json")
                    if p.name != "machine.json")
    doc = json.loads(template.read_text())
    template.unlink()
    for n, sha in enumerate(shas[2:]):
        doc.update(commit_hash=sha, date=1795440473000 + n * 60_000)
        (results / "fixture-box" / f"{sha[:8]}.json").write_text(json.dumps(doc))
    db = tmp_path / "h.db"
    out = cli("history", "import-asv", results, "--repo", shallow, "--db", db,
              cwd=tmp_path, check_code=0)
    assert "warning: --repo is a shallow clone: commits are ordered by commit date" \
        in out.stderr
    from benchkit.system.history_db import HistoryDB
    with HistoryDB(db) as history:
        assert {history.commit(sha).order for sha in shas[2:]} == {None}
        assert history.commit(shas[3]).message == "c3"       # subjects are still read
    # the full clone gives places, counted from the root
    full = tmp_path / "full.db"
    out = cli("history", "import-asv", results, "--repo", repo, "--db", full,
              cwd=tmp_path, check_code=0)
    assert "shallow" not in out.stderr and "ordered by commit date" not in out.stderr
    with HistoryDB(full) as history:
        # counted from the root as 1, as history add counts (git rev-list --count)
        assert [history.commit(sha).order for sha in shas[2:]] == [3, 4]
    from benchkit.system import git
    assert git.describe(shallow, shas[3])[2] is None
    assert git.describe(repo, shas[3])[2] == 4


def test_commits_of_two_branches_at_one_place_are_named(tmp_path):
    # a branch's commits are counted on their own first-parent line: the branch's first
    # commit after the fork holds the same place as main's next one, and a series that
    # holds both can only order them by date; show and regressions say so
    repo = tmp_path / "repo"
    _git(tmp_path, "init", "-q", "-b", "main", str(repo))

    def commit(n: int) -> str:
        (repo / "f.txt").write_text(str(n))
        _git(repo, "add", "-A")
        _git(repo, "commit", "-qm", f"c{n}")
        return subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"],
                              capture_output=True, text=True).stdout.strip()

    main = [commit(n) for n in range(3)]
    _git(repo, "checkout", "-qb", "topic", main[1])
    topic = commit(10)                  # place 3, as main[2]
    db = tmp_path / "h.db"
    source = json.loads((Path(__file__).parent / "fixtures" / "results" / "v4_run.json")
                        .read_text())
    for n, sha in enumerate([*main, topic]):
        source["environment"]["timestamp"] = f"2026-11-27T10:0{n}:00"   # a file of its own
        path = tmp_path / f"r{n}.json"
        path.write_text(json.dumps(source))
        cli("history", "add", path, "--commit", sha, "--machine", "box", "--db", db,
            cwd=repo, check_code=0)
    shown = cli("history", "show", "bench_x::mul", "--db", db, cwd=tmp_path, check_code=0)
    warning = ("warning: 1 place(s) on the first-parent line are held by more than one commit "
               f"(place 3: {', '.join(sorted([main[2][:12], topic[:12]]))})")
    assert warning in shown.stderr
    found = cli("history", "regressions", "--db", db, cwd=tmp_path, check_code=0)
    assert warning in found.stderr
    # one line of history: no warning
    alone = tmp_path / "main.db"
    for n in range(3):
        cli("history", "add", tmp_path / f"r{n}.json", "--commit", main[n], "--machine", "box",
            "--db", alone, cwd=repo, check_code=0)
    assert "place(s)" not in cli("history", "show", "bench_x::mul", "--db", alone, cwd=tmp_path,
                                 check_code=0).stderr


def test_files_skipped_for_one_reason_count_together(tmp_path):
    # two commit ids that are not ones: one kind of reason, not one per value
    (tmp_path / "benchmarks.json").write_text('{"version": 2}')
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "machine.json").write_text('{"machine": "m", "version": 1}')
    for name, sha in (("a.json", "--upload-pack=x"), ("b.json", "not a sha"),
                      ("c.json", "abcd1234")):
        (tmp_path / "m" / name).write_text(json.dumps(
            {"version": 2, "commit_hash": sha, "date": 1, "params": {}, "env_name": "e",
             "result_columns": ["result", "params"], "results": {"t.time_x": [[1.0], []]}}))
    out = cli("history", "import-asv", tmp_path, "--db", tmp_path / "h.db", cwd=tmp_path)
    line = next(x for x in out.stdout.splitlines() + out.stderr.splitlines()
                if x.startswith("skipped files:"))
    assert line.startswith("skipped files: 2 commit_hash: ... is not a commit id (e.g. m/")
