"""An asv suite run as it is (`benchkit run benchmarks/`), side by side with asv's own
runner library on the same suite: the same benchmarks under the same names, asv's skips as
skips, a module that fails to import reported and the rest measured."""
from __future__ import annotations

import itertools
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import benchkit
from test_cli import cli

SUITE = Path(__file__).parent / "fixtures" / "asv-suite"

pytest.importorskip("asv_runner", reason="running asv suites needs asv_runner ([asv] extra)")

# asv's own discovery of the same directory, in a process of its own, as `asv run` does it:
# (name, type, params, param_names) of each benchmark
ASV_LIST = """
import json, sys
from asv_runner.discovery import disc_benchmarks
print(json.dumps([[b.name, type(b).__name__, b.params, b.param_names]
                  for b in disc_benchmarks(sys.argv[1], ignore_import_errors=True)]))
"""


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("asv")
    shutil.copytree(SUITE / "benchmarks", root / "benchmarks")
    out = cli("run", "benchmarks", "--processes", "2", "--min-run-time", "0.01", "-o",
              root / "run.json", cwd=root)
    return root, out


def _asv_names(root: Path) -> dict[str, str]:
    listed = subprocess.run([sys.executable, "-c", ASV_LIST, str(root / "benchmarks")],
                            capture_output=True, text=True, check=True, cwd=root)
    names = {}
    for name, kind, params, param_names in json.loads(listed.stdout):
        points = [[]]
        for values in params:
            points = [p + [v] for p in points for v in values]
        for point in points:
            shown = ",".join(f"{k}={v}" for k, v in zip(param_names, point))
            names[f"{name}[{shown}]" if params else name] = kind
    return names


@pytest.mark.slow
def test_every_benchmark_asv_finds_is_measured_or_skipped(suite_run):
    root, out = suite_run
    results = benchkit.load(root / "run.json")
    measured = {m.metadata["benchmark"] for m in results.measurements}
    valued = {v.metadata["benchmark"]: v for v in results.values}
    skipped = {f.benchmark for f in results.failures if f.kind.value == "skipped"}
    asv = _asv_names(root)
    timed = {name for name, kind in asv.items() if kind in ("TimeBenchmark",
                                                           "TimerawBenchmark")}
    assert measured | skipped == timed
    assert set(valued) == set(asv) - timed
    assert skipped == {"sub.deep.Cached.time_scaled[param1=3]"}
    assert "arith.TimeArith.time_sum[n=100,kind='float']" in measured
    assert "sub.deep.time_alone" in measured
    assert "not measured" not in out.stderr


# asv_runner's own value of each track_/mem_/peakmem_ benchmark, in a fresh process each,
# as `asv run` takes it: (setup_cache, setup, run, teardown)
ASV_VALUE = """
import json, sys
from asv_runner.discovery import get_benchmark_from_name
bench = get_benchmark_from_name(sys.argv[1], sys.argv[2])
cache = bench.do_setup_cache()
if cache is not None:
    bench.set_cache(cache)
bench.do_setup()
print(json.dumps(bench.run(*bench._build_params())))
"""


LAUNCHER = "import subprocess, sys; sys.exit(subprocess.call(sys.argv[1:]))"


@pytest.mark.slow
def test_timeraw_is_timed_in_fresh_interpreters_as_asv_times_it(suite_run):
    """timeraw_: one fresh interpreter per sample (one process each), in the band of
    asv_runner's own timing of the same code."""
    root, _ = suite_run
    times = {m.metadata["benchmark"]: m for m in benchkit.load(root / "run.json").measurements}
    small, large = (times[f"arith.TimeRaw.timeraw_sorted[n={n}]"] for n in (100, 10000))
    assert len(small.processes) == len(small.times) == 2
    assert large.median > 5 * small.median        # sorting 10,000 items, not 100
    asv_timing = """
import json, statistics, sys
from asv_runner.discovery import get_benchmark_from_name
bench = get_benchmark_from_name(sys.argv[1], sys.argv[2])
timer = bench._get_timer(*bench._build_params())
print(json.dumps(statistics.median(timer.timeit(1) for _ in range(5))))
"""
    theirs = json.loads(subprocess.run(
        [sys.executable, "-c", asv_timing, str(root / "benchmarks"),
         "arith.TimeRaw.timeraw_sorted-1"],
        capture_output=True, text=True, check=True, cwd=root).stdout)
    # the statement's time, not the interpreter's start (tens of ms, 100x more): the
    # fastest sample, as a cold process on a busy machine can be 3x slower than asv's
    assert 1 / 10 < min(large.times) / theirs < 10, (large.times, theirs)
    assert "arith.timeraw_import_json" in times


@pytest.mark.slow
def test_track_mem_and_peakmem_values_are_asvs_own(suite_run):
    """track_ is the returned number with asv's unit, mem_ pympler's asizeof as asv
    computes it (exact), peakmem_ the peak resident memory of a lean fresh process, in
    the band of asv_runner's own process started the same way."""
    root, _ = suite_run
    values = {v.metadata["benchmark"]: v for v in benchkit.load(root / "run.json").values}
    track = values["arith.TimeArith.track_length[n=100,kind='float']"]
    assert (str(track.kind), track.unit, track.values) == ("track", "items", [100.0, 100.0])
    for name, asv_name in (("arith.TimeArith.mem_list[n=100,kind='int']",
                            "arith.TimeArith.mem_list-2"),
                           ("arith.peakmem_range", "arith.peakmem_range")):
        # started through a launcher, as asv starts its benchmark processes from its own
        # small process: Linux keeps a parent's peak memory across fork and exec, so a
        # child of this (large) test process would report the test's peak as its own
        theirs = json.loads(subprocess.run(
            [sys.executable, "-c", LAUNCHER, sys.executable, "-c", ASV_VALUE,
             str(root / "benchmarks"), asv_name],
            capture_output=True, text=True, check=True, cwd=root).stdout)
        ours = values[name]
        assert ours.unit == "bytes"
        if str(ours.kind) == "mem":
            assert ours.values == [theirs, theirs]
        else:
            assert 0.8 < ours.median / theirs < 1.25, (ours.values, theirs)


@pytest.mark.slow
def test_a_module_that_fails_to_import_fails_alone(suite_run):
    root, out = suite_run
    assert out.returncode == 1, out.stderr
    results = benchkit.load(root / "run.json")
    failed = [f for f in results.failures if f.kind.value != "skipped"]
    assert [f.benchmark for f in failed] == ["benchmarks.broken"]
    assert "No module named 'a_module_that_is_not_installed'" in failed[0].error
    assert "SKIPPED sub.deep.Cached.time_scaled[param1=3]" in out.stdout
    assert "1 benchmark(s) failed" in out.stdout


def test_asv_names_select_and_a_skip_alone_is_not_a_failure(tmp_path):
    shutil.copytree(SUITE / "benchmarks", tmp_path / "benchmarks")
    (tmp_path / "benchmarks" / "broken.py").unlink()
    out = cli("run", "benchmarks", "-k", "time_scaled", "--processes", "1",
              "--min-run-time", "0.01", "-o", tmp_path / "k.json", cwd=tmp_path, check_code=0)
    results = benchkit.load(tmp_path / "k.json")
    assert sorted(m.metadata["benchmark"] for m in results.measurements) == [
        "sub.deep.Cached.time_scaled[param1=1]", "sub.deep.Cached.time_scaled[param1=2]"]
    assert "failed" not in out.stdout


def test_an_asv_suite_whose_modules_are_named_bench_is_still_asvs(tmp_path):
    # numpy's asv suite names its modules bench_*.py, as benchkit's own suite files are
    # named: it is told apart by its modules not importing benchkit (or by asv.conf.json)
    shutil.copytree(SUITE / "benchmarks", tmp_path / "benchmarks")
    (tmp_path / "benchmarks" / "broken.py").unlink()
    (tmp_path / "benchmarks" / "arith.py").rename(tmp_path / "benchmarks" / "bench_arith.py")
    cli("run", "benchmarks", "-k", "TimeArith.time_sum(100, 'float')", "--processes", "1",
        "--min-run-time", "0.01", "-o", tmp_path / "k.json", cwd=tmp_path, check_code=0)
    results = benchkit.load(tmp_path / "k.json")
    assert [m.metadata["benchmark"] for m in results.measurements] == [
        "bench_arith.TimeArith.time_sum[n=100,kind='float']"]
    from benchkit.orchestration.asv_suite import looks_like_asv
    own = tmp_path / "own"
    own.mkdir()
    (own / "__init__.py").write_text("")
    (own / "bench_x.py").write_text("from benchkit import Timer\nbench_x = Timer('1')\n")
    assert looks_like_asv(tmp_path / "benchmarks") and not looks_like_asv(own)
    (tmp_path / "asv.conf.json").write_text('{"version": 1, "benchmark_dir": "own"}')
    assert looks_like_asv(own)


def test_a_suite_package_that_fails_to_import_is_named_when_nothing_runs(tmp_path):
    # numpy's suite of one release imports internals another release lacks: the whole
    # package fails, and the error says so (not "no benchmarks match")
    shutil.copytree(SUITE / "benchmarks", tmp_path / "benchmarks")
    init = tmp_path / "benchmarks" / "__init__.py"
    init.write_text("import a_module_that_is_not_installed\n" + init.read_text())
    out = cli("run", "benchmarks", "-k", "TimeArith", "--processes", "1", "--min-run-time",
              "0.01", "-o", tmp_path / "k.json", cwd=tmp_path, check_code=2)
    assert "importing benchmarks raised ModuleNotFoundError" in out.stderr, out.stderr


ATTRIBUTES = """
import time


class InPlace:
    number = 1          # asv: one call per sample, after a fresh setup

    def setup(self):
        self.items = [1]

    def time_pop(self):
        self.items.pop()        # a second call in the same block would raise


class Slow:
    timeout = 1         # asv fails a benchmark that takes longer

    def setup(self):
        time.sleep(5)

    def time_x(self):
        pass
"""


@pytest.mark.slow
def test_asvs_number_and_timeout_attributes_are_kept(tmp_path):
    shutil.copytree(SUITE / "benchmarks", tmp_path / "benchmarks")
    (tmp_path / "benchmarks" / "broken.py").unlink()
    (tmp_path / "benchmarks" / "attrs.py").write_text(ATTRIBUTES)
    cli("run", "benchmarks", "-k", "attrs", "--processes", "1", "--min-run-time", "0.01",
        "-o", tmp_path / "a.json", cwd=tmp_path, check_code=1)
    results = benchkit.load(tmp_path / "a.json")
    [pop] = results.measurements
    assert pop.metadata["benchmark"] == "attrs.InPlace.time_pop" and pop.number_per_run == 1
    [slow] = results.failures
    assert (slow.benchmark, slow.kind.value) == ("attrs.Slow.time_x", "timed out")


def test_number_and_timeout_are_taken_only_when_asv_would_take_them():
    from benchkit.orchestration.asv_suite import _limits

    def limits(number, timeout):
        return _limits(type("B", (), {"number": number, "timeout": timeout}))
    assert limits(1, 60) == {"number": 1, "timeout": 60.0}
    assert limits(0, 2.5) == {"number": None, "timeout": 2.5}
    for number, timeout in ((True, float("nan")), (-3, "10"), (1.5, -1), ("2", float("inf"))):
        assert limits(number, timeout) == {"number": None, "timeout": None}, (number, timeout)


def test_a_grid_point_is_selected_by_asvs_own_spelling(tmp_path):
    shutil.copytree(SUITE / "benchmarks", tmp_path / "benchmarks")
    cli("run", "benchmarks", "-k", "TimeArith.time_sum(100, 'float')", "--processes", "1",
        "--min-run-time", "0.01", "-o", tmp_path / "k.json", cwd=tmp_path, check_code=0)
    results = benchkit.load(tmp_path / "k.json")
    assert [m.metadata["benchmark"] for m in results.measurements] == [
        "arith.TimeArith.time_sum[n=100,kind='float']"]


def test_with_no_path_the_benchmark_dir_of_asv_conf_runs(tmp_path):
    shutil.copytree(SUITE / "benchmarks", tmp_path / "perf" / "benchmarks")
    (tmp_path / "asv.conf.json").write_text(
        '// asv allows comment lines\n{"version": 1, "benchmark_dir": "perf/benchmarks"}\n')
    cli("run", "-k", "time_alone", "--processes", "1", "--min-run-time", "0.01", "-o",
        tmp_path / "c.json", cwd=tmp_path, check_code=0)
    results = benchkit.load(tmp_path / "c.json")
    assert [m.metadata["benchmark"] for m in results.measurements] == ["sub.deep.time_alone"]
    (tmp_path / "asv.conf.json").unlink()
    out = cli("run", cwd=tmp_path, check_code=2)
    assert "no PATH given and no asv.conf.json here" in out.stderr


def test_an_asv_conf_that_is_not_json_or_too_big_is_one_clear_error(tmp_path):
    for content in ("{not json", "{" + " " * (2 << 20) + "}"):
        (tmp_path / "asv.conf.json").write_text(content)
        out = cli("run", cwd=tmp_path, check_code=2)
        assert "asv.conf.json" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.slow
def test_history_run_takes_suite_repository_and_branches_from_asv_conf(tmp_path):
    """In an asv project, `benchkit history run` with no suite, range or repository runs
    asv.conf.json's benchmark_dir at the tip of its branches, and names in one line what
    of the file it does not follow."""
    from conftest import FAST_INSTALL
    from benchkit.system.history_db import HistoryDB
    project = tmp_path / "project"
    shutil.copytree(SUITE / "benchmarks", project / "perf" / "benchmarks")
    (project / "perf" / "benchmarks" / "broken.py").unlink()
    (project / "asv.conf.json").write_text(json.dumps({
        "version": 1, "project": "p", "repo": ".", "branches": ["trunk"],
        "benchmark_dir": "perf/benchmarks", "environment_type": "virtualenv",
        "matrix": {"req": {"numpy": []}}, "install_command": ["in-dir={env_dir} pip install ."]}))
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(project), "PATH": "/usr/bin:/bin"}
    for command in (["init", "-q", "-b", "trunk"], ["add", "-A"], ["commit", "-qm", "c"]):
        subprocess.run(["git", "-C", str(project), *command], check=True, env=env)
    out = cli("history", "run", "--install", FAST_INSTALL, "--processes", "1",
              "--min-run-time", "0.01", "--db", tmp_path / "h.db", cwd=project, check_code=0)
    assert (f"note: {project / 'asv.conf.json'}: benchmarks from "
            f"{project / 'perf' / 'benchmarks'}, repository {project / '.'}, branches trunk; "
            "not followed: environment_type, install_command, matrix") in out.stderr
    assert "1 revisions: 1 measured" in out.stdout
    with HistoryDB(tmp_path / "h.db") as history:
        names = {s.benchmark for s in history.series()}
    assert "arith.TimeArith.time_sum[n=10,kind='int']" in names
    (project / "asv.conf.json").unlink()
    out = cli("history", "run", "--db", tmp_path / "h.db", cwd=project, check_code=2)
    assert "no PATH given and no asv.conf.json here" in out.stderr


@pytest.mark.slow
def test_format_asv_writes_what_asv_reads_publishes_and_import_asv_reads_back(tmp_path):
    """`run --format asv` in an asv project: asv's own reader finds every value benchkit
    measured (the skip as asv's NaN), `asv publish` builds its site from the directory, the
    project's own benchmarks.json entries are kept, and import-asv files the same names."""
    import math

    import asv.results
    from benchkit.system.history_db import HistoryDB
    project = tmp_path / "project"
    shutil.copytree(SUITE / "benchmarks", project / "benchmarks")
    (project / "benchmarks" / "broken.py").unlink()
    (project / "asv.conf.json").write_text(json.dumps({
        "version": 1, "project": "p", "repo": ".", "branches": ["main"],
        "environment_type": "existing", "results_dir": "results", "html_dir": "html"}))
    (project / "results").mkdir()
    (project / "results" / "benchmarks.json").write_text(json.dumps(
        {"version": 2, "theirs.time_x": {"name": "theirs.time_x", "type": "time",
                                         "params": [], "param_names": [], "version": "v"}}))
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(project), "PATH": "/usr/bin:/bin"}
    outside = cli("run", "benchmarks", "--format", "asv", cwd=project, check_code=2)
    assert "not in a git checkout" in outside.stderr and "wrote" not in outside.stdout
    for command in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "c"]):
        subprocess.run(["git", "-C", str(project), *command], check=True, env=env)
    cli("run", "benchmarks", "--format", "asv", "--asv-machine", "box", "--processes", "1",
        "--min-run-time", "0.01", "-o", tmp_path / "r.json", cwd=project, check_code=0)
    saved = benchkit.load(tmp_path / "r.json")
    ours = {m.metadata["benchmark"]: m.median for m in [*saved.measurements, *saved.values]}
    (written,) = (project / "results" / "box").glob("*-benchkit-py*.json")
    run = asv.results.Results.load(str(written))
    theirs, skipped = {}, []
    for key in run.get_all_result_keys():
        params = run.get_result_params(key)
        names = json.loads((project / "results" / "benchmarks.json").read_text())[key][
            "param_names"]
        for combo, value in zip(itertools.product(*params) if params else [()],
                                run.get_result_value(key, params)):
            name = f"{key}[{','.join(f'{n}={v}' for n, v in zip(names, combo))}]" \
                if combo else key
            if isinstance(value, float) and math.isnan(value):
                skipped.append(name)
            else:
                theirs[name] = value
    assert theirs == ours and skipped == ["sub.deep.Cached.time_scaled[param1=3]"]
    index = json.loads((project / "results" / "benchmarks.json").read_text())
    assert "theirs.time_x" in index and "arith.TimeArith.time_sum" in index
    assert [index["arith.TimeArith.track_length"][k] for k in ("type", "unit")] == [
        "track", "items"]
    published = subprocess.run([str(Path(sys.executable).parent / "asv"), "publish"],
                               cwd=project, capture_output=True, text=True)
    assert published.returncode == 0, published.stdout + published.stderr
    assert (project / "html" / "graphs").is_dir()
    with HistoryDB(tmp_path / "h.db") as history:
        from benchkit.orchestration.asv_import import import_asv
        import_asv(history, project / "results")
        series = history.series()
    assert {s.benchmark for s in series} == {*ours, *skipped}
    assert [str(status) for s in series for _, status in s.failed] == ["skipped"]


def test_the_suite_imports_the_installed_project_not_the_checkout_beside_it(tmp_path):
    """As asv does, only the suite's own package is found in the directory above it, which
    is not put on sys.path: there lies the project's checkout, whose source would shadow the
    revision installed (`ab` measured the working tree's code on both sides of an asv
    project whose package sits beside its benchmarks/). Every process that imports the
    suite (benchkit's discovery, its worker, asv's own discovery) says which it imported."""
    checkout, installed = tmp_path / "checkout", tmp_path / "installed"
    for where in (checkout, installed):
        (where / "pkgx").mkdir(parents=True)
        (where / "pkgx" / "__init__.py").write_text("")
    (checkout / "benchmarks").mkdir()
    (checkout / "benchmarks" / "__init__.py").write_text("")
    (checkout / "benchmarks" / "bench_x.py").write_text(
        "import os\n\nimport pkgx\n\n"
        "with open(os.environ['WHERE_FILE'], 'a') as out:\n"
        "    out.write(pkgx.__file__ + '\\n')\n\n\n"
        "def time_x():\n    pass\n")
    where = tmp_path / "where.txt"
    env = {"PYTHONPATH": str(installed), "WHERE_FILE": str(where)}
    cli("run", checkout / "benchmarks", "--processes", "1", "--min-run-time", "0.01",
        cwd=tmp_path, env=env, check_code=0)
    benchkit_said = where.read_text().splitlines()
    # `asv run`'s own discovery: what its benchmark process runs for `discover`
    subprocess.run([sys.executable, "-c", "import sys; from asv_runner.discovery import "
                    "_discover; _discover(sys.argv[1:])", str(checkout / "benchmarks"),
                    str(tmp_path / "asv.json")], env={"PATH": "/usr/bin:/bin", **env},
                   cwd=tmp_path, check=True, capture_output=True)
    assert [b["name"] for b in json.loads((tmp_path / "asv.json").read_text())] == [
        "bench_x.time_x"]
    asv_said = where.read_text().splitlines()[len(benchkit_said):]
    assert asv_said == [str(installed / "pkgx" / "__init__.py")]
    assert len(benchkit_said) >= 2 and set(benchkit_said) == set(asv_said), benchkit_said
