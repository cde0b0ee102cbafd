"""Bad input, class by class: one clear error (type, exit code, the words that name the
input), nothing hangs, nothing leaks, nothing is lost. Real files, real subprocesses."""
import gzip
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

import benchkit
from benchkit import Timer
from benchkit.errors import (BenchkitError, ResultsFileError,
                             TraceError)
from benchkit.orchestration.sampling.workers import WorkerProcess
from conftest import make_measurement, requires_valgrind
from test_cli import cli


# ----------------------------------------------------------------------------- hangs


@pytest.mark.parametrize("call, name", [
    (lambda: Timer("pass").blocked_autorange(min_run_time=float("nan")), "min_run_time"),
    (lambda: Timer("pass").blocked_autorange(min_run_time=float("inf")), "min_run_time"),
    (lambda: Timer("pass").adaptive_autorange(max_run_time=-1), "max_run_time"),
    (lambda: Timer("pass").adaptive_autorange(threshold=float("nan")), "threshold"),
    (lambda: Timer("pass", num_threads=True), "num_threads"),
    (lambda: Timer("pass", num_threads=0), "num_threads"),
    (lambda: Timer("pass").timeit(number=-5), "number"),
    (lambda: Timer("pass").timeit(number=0), "number"),
    (lambda: Timer("pass").timeit(number=1.5), "number"),
    (lambda: Timer("pass").repeat(repeat=0), "repeat"),
    (lambda: Timer("pass").collect_callgrind(timeout=0), "timeout"),
    (lambda: Timer("pass").collect_callgrind(number=True), "number"),
    (lambda: Timer("pass").collect_callgrind(layouts=0), "layouts"),
    (lambda: Timer("pass", timer=lambda: "now"), "timer"),
    (lambda: Timer("pass").multiprocess_autorange(processes=2, min_run_time=math.nan),
     "min_run_time"),
])
def test_bad_numbers_fail_at_once_naming_the_argument(call, name):
    started = time.monotonic()
    with pytest.raises(BenchkitError) as info:
        call()
    assert f"{name}=" in str(info.value) or name in str(info.value)
    assert time.monotonic() - started < 5


@pytest.mark.parametrize("args, words", [
    (["run", "s.py", "--min-run-time", "nan"], "must be a finite number > 0"),
    (["run", "s.py", "--processes", "0"], "must be 1 or more"),
    (["run", "s.py", "--num-threads", "0"], "must be 1 or more"),
    (["compare", "a.json", "a.json", "--alpha", "5"], "must be between 0 and 0.5"),
    (["compare", "a.json", "a.json", "--noise=-50%"], "percentage from 0% to 100%"),
    (["diff", "a.json", "a.json", "--top", "-1"], "must be 0 or more"),
    (["analyze", "t.json", "-t", "-5"], "must be 0 or more"),
    (["analyze", "t.json", "--min-time", "abc"], "is not a duration"),
    (["ab", "s.py", "--trial-time", "0"], "must be a finite number > 0"),
])
@pytest.mark.slow
def test_cli_numbers_are_checked_before_any_work(tmp_path, args, words):
    out = cli(*args, cwd=tmp_path, check_code=2)
    assert words in out.stderr and "Traceback" not in out.stderr


# ----------------------------------------------------------------------------- nothing lost

SUITE = 'from benchkit import Timer\nbench_a = Timer("sum(range(10))")\n'


def test_run_checks_the_output_path_before_measuring(tmp_path):
    (tmp_path / "s.py").write_text(SUITE)
    (tmp_path / "a_file").write_text("x")
    for target, words in ((tmp_path, "is a directory"),
                          (tmp_path / "a_file" / "r.json", "is not a directory"),
                          (tmp_path / "r.txt", "end in .json")):
        started = time.monotonic()
        out = cli("run", "s.py", "-o", target, cwd=tmp_path, check_code=2)
        assert words in out.stderr and time.monotonic() - started < 20
        assert "wall time" not in out.stderr          # nothing was measured


def test_a_failed_write_saves_to_a_fallback_and_says_where(tmp_path):
    from benchkit.system.results_files import save_with_fallback
    (tmp_path / "a_file").write_text("x")
    written, problem = save_with_fallback(tmp_path / "a_file" / "r.json",
                                          [make_measurement([1.0, 2.0])])
    try:
        assert problem and "a_file" in problem and benchkit.load(written).measurements
    finally:
        written.unlink()


def test_merge_checks_its_output_first(tmp_path):
    benchkit.save(tmp_path / "a.json", [make_measurement([1.0])], environment={})
    out = cli("merge", tmp_path, "a.json", cwd=tmp_path, check_code=2)
    assert "is a directory" in out.stderr


# ----------------------------------------------------------------------------- leftovers


def test_stale_temp_files_of_killed_saves_are_swept_and_modes_follow_the_umask(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    stale = tmp_path / f".r.json.{dead}.0badc0de.tmp"
    stale.write_text("half")
    mine = tmp_path / f".r.json.{os.getpid()}.0badc0de.tmp"   # a live writer's: kept
    mine.write_text("half")
    old = os.umask(0o022)
    try:
        path = benchkit.save(tmp_path / "r.json", [make_measurement([1.0])])
    finally:
        os.umask(old)
    assert not stale.exists() and mine.exists()
    assert oct(path.stat().st_mode & 0o777) == oct(0o644)


@requires_valgrind
@pytest.mark.slow
def test_valgrind_dies_with_a_killed_parent_and_leaves_no_vgdb_pipes(tmp_path):
    script = textwrap.dedent('''
        import benchkit
        benchkit.Timer("while True: pass").collect_callgrind(number=1)
    ''')
    before = set(Path("/tmp").glob("vgdb-pipe-*"))
    parent = subprocess.Popen([sys.executable, "-c", script])
    child = None
    for _ in range(200):
        time.sleep(0.1)
        kids = Path(f"/proc/{parent.pid}/task/{parent.pid}/children")
        pids = kids.read_text().split() if kids.exists() else []
        for pid in pids:
            try:
                if "valgrind" in Path(f"/proc/{pid}/cmdline").read_text():
                    child = int(pid)
            except OSError:
                pass
        if child:
            break
    assert child, "valgrind never started"
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    for _ in range(100):
        if not Path(f"/proc/{child}").exists():
            break
        time.sleep(0.1)
    else:
        pytest.fail("valgrind outlived its killed parent")
    assert set(Path("/tmp").glob("vgdb-pipe-*")) <= before


# ----------------------------------------------------------------------------- impossible files


def _doc(tmp_path, edit):
    path = benchkit.save(tmp_path / "r.json", [make_measurement([1.0, 2.0])],
                         environment={"python": "3"})
    doc = json.loads(path.read_text())
    edit(doc)
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("edit, words", [
    (lambda d: d["measurements"][0].update(raw_times=[]), "raw_times: [] should be non-empty"),
    (lambda d: d["measurements"][0].update(raw_times=[1.0, -2.0]), "raw_times[1]: -2.0"),
    (lambda d: d["measurements"][0]["task_spec"].update(num_threads="two"),
     "task_spec.num_threads: 'two' is not of type 'integer'"),
    (lambda d: d["measurements"][0]["task_spec"].update(stmt=5),
     "task_spec.stmt: 5 is not of type 'string'"),
    (lambda d: d["measurements"][0].update(metadata="str"), "metadata: 'str' is not of type"),
    (lambda d: d.update(extra=[1]), "extra: [1] is not of type 'object'"),
    (lambda d: d["measurements"][0].update(number_per_run=0), "number_per_run: 0 is less"),
])
@pytest.mark.slow
def test_impossible_results_files_are_refused_with_the_json_path(tmp_path, edit, words):
    path = _doc(tmp_path, edit)
    with pytest.raises(ResultsFileError) as info:
        benchkit.load(path)
    assert str(info.value).startswith(str(path)) and words in str(info.value)
    out = cli("show", path, cwd=tmp_path, check_code=2)
    assert words in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_non_finite_and_deeply_nested_json_are_refused(tmp_path):
    path = tmp_path / "inf.json"
    path.write_text(_doc(tmp_path, lambda d: None).read_text().replace("0.001", "Infinity", 1))
    with pytest.raises(ResultsFileError, match="Infinity"):
        benchkit.load(path)
    deep = tmp_path / "deep.json"
    deep.write_text('{"format": "benchkit-results", "version": 3, "extra": '
                    + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(ResultsFileError, match="nested too deeply"):
        benchkit.load(deep)


# ----------------------------------------------------------------------------- one line


def test_a_failing_benchmark_factory_is_one_line_plus_the_users_frames(tmp_path):
    (tmp_path / "bench_f.py").write_text(textwrap.dedent('''
        from benchkit import benchmark

        @benchmark
        def broken():
            return helper()

        def helper():
            raise ValueError("my mistake")
    '''))
    out = cli("run", "bench_f.py", "--in-process", cwd=tmp_path, check_code=2)
    lines = out.stderr.strip().splitlines()
    assert "bench_f.py::broken() raised: ValueError: my mistake" in lines[0]
    assert "where it happened in your code" in out.stderr and "helper()" in out.stderr
    assert "benchkit/" not in out.stderr.split("your code")[1]


@pytest.mark.parametrize("args, words", [
    (["run", "s.py", "-k", "a b"], "is not a keyword expression"),
    (["run", "s.py", "-k", "(a or"], "is not a keyword expression"),
    (["run", "s.py", "--no-wall-time"], "measures nothing"),
])
def test_usage_errors_are_one_line(tmp_path, args, words):
    (tmp_path / "s.py").write_text(SUITE)
    out = cli(*args, cwd=tmp_path, check_code=2)
    assert words in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_a_suite_that_exits_is_an_error(tmp_path):
    (tmp_path / "s.py").write_text("import sys\nsys.exit(0)\n")
    for extra in ([], ["--in-process"]):
        out = cli("run", "s.py", *extra, "-o", "r.json", cwd=tmp_path, check_code=2)
        assert "called sys.exit(0)" in out.stderr and not (tmp_path / "r.json").exists()


# ----------------------------------------------------------------------------- traces


def _trace(tmp_path, events, name="t.json"):
    path = tmp_path / name
    path.write_text(json.dumps({"traceEvents": events}))
    return path


X = {"ph": "X", "name": "aten::mm", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": 10, "dur": 5}


@pytest.mark.parametrize("event, words", [
    ({**X, "dur": -7}, "event 1 ('aten::mm'): 'dur' is negative (-7)"),
    ({k: v for k, v in X.items() if k != "dur"}, "event 1 ('aten::mm', ph 'X') has no 'dur'"),
    ({k: v for k, v in X.items() if k != "ts"}, "event 1 ('aten::mm', ph 'X') has no 'ts'"),
    ({**X, "ts": "soon"}, "event 1 ('aten::mm'): 'ts' 'soon' is not a number"),
    ({**X, "ts": [1]}, "event 1 ('aten::mm'): 'ts' [1] is not a number"),
])
@pytest.mark.slow
def test_wrong_trace_events_are_named(tmp_path, event, words):
    path = _trace(tmp_path, [X, event])
    out = cli("analyze", path, cwd=tmp_path, check_code=2)
    assert str(path) in out.stderr and words in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_bad_trace_files_and_device_events_are_one_line(tmp_path):
    path = _trace(tmp_path, [X])
    inf = tmp_path / "inf.json"
    inf.write_text('{"traceEvents": [{"ph": "X", "name": "a", "ts": Infinity, "dur": 1}]}')
    junk = tmp_path / "junk.bin"
    junk.write_bytes(os.urandom(300))
    cases = [
        (["analyze", inf], "not a valid JSON chrome trace"),
        (["analyze", junk], "not a valid JSON chrome trace"),
        (["trace-diff", path, junk], "junk.bin"),
    ]
    for i, (events, words) in enumerate((([1, 2], "device event #0 is int"),
                          ([{"name": "k", "ts": 11, "dur": 1,
                             "host": {"name": "aten::mm", "index": "0"}}],
                           "host 'index' must be a whole number"),
                          ([{"name": "k", "ts": "x", "dur": 1}], "device event #0 ('k')"))):
        device = tmp_path / f"device{i}.json"
        device.write_text(json.dumps(events))
        cases.append((["trace-merge", path, device, "-o", tmp_path / "m.json"], words))
    cases.append((["trace-merge", path, junk, "-o", tmp_path / "m.json"],
                  "cannot read the device events"))
    for args, words in cases:
        out = cli(*args, cwd=tmp_path, check_code=2)
        assert words in out.stderr, (args, out.stderr)
        assert len(out.stderr.strip().splitlines()) == 1, out.stderr


def test_gzip_traces_stream_and_a_truncated_one_is_named(tmp_path):
    events = [{**X, "ts": 10 * i} for i in range(100)]
    good = tmp_path / "t.json.gz"
    good.write_bytes(gzip.compress(json.dumps({"traceEvents": events}).encode()))
    out = cli("analyze", good, cwd=tmp_path, check_code=0)
    assert "aten::mm" in out.stdout and "100 events shown" in out.stdout
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(good.read_bytes()[:-40])
    out = cli("analyze", cut, cwd=tmp_path, check_code=2)
    assert "cut.json.gz" in out.stderr and "truncated or corrupt" in out.stderr
    with pytest.raises(TraceError, match="no events"):
        from benchkit.system.trace_files import read_slices
        read_slices(_trace(tmp_path, [], "empty.json"))


def test_temp_dirs_of_killed_processes_are_removed_by_the_next_worker(tmp_path):
    # A process killed outright leaves its temp dirs; the next one that makes its own
    # removes those whose process is gone, and keeps live ones.
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    base = Path(tempfile.gettempdir())
    stale = base / f"benchkit-worker-{int(dead):010d}-leftover"
    live = base / f"benchkit-worker-{os.getppid():010d}-in-use"
    for path in (stale, live):
        (path / "path").mkdir(parents=True, exist_ok=True)
    try:
        worker = WorkerProcess()
        worker.close()
        assert not stale.exists() and live.exists()
    finally:
        shutil.rmtree(live, ignore_errors=True)
        shutil.rmtree(stale, ignore_errors=True)


@pytest.mark.slow
def test_results_not_written_where_asked_exit_2_and_say_where_they_went(tmp_path):
    """The output folder passes the check before measuring, then stops being a folder (the
    suite replaces it with a file): the results go to the temp directory, the command says
    so and exits 2, so CI notices. A name the file system refuses is an error up front."""
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    (tmp_path / "s.py").write_text(
        "import os\nfrom benchkit import Timer\nout = os.environ['OUT_DIR']\n"
        "if os.path.isdir(out):\n    os.rmdir(out)\n    open(out, 'w').close()\n"
        "bench_add = Timer('1 + 1')\n")
    done = cli("run", "s.py", "--fast", "--min-run-time", "0.01", "-o", out_dir / "r.json",
               cwd=tmp_path, env={"OUT_DIR": str(out_dir)}, check_code=2)
    assert "could not write" in done.stderr and "(exit status 2)" in done.stderr
    fallback = Path(done.stderr.split("saved results to ")[1].split(" instead")[0])
    try:
        assert benchkit.load(fallback).measurements
    finally:
        fallback.unlink()
    long_name = cli("run", "s.py", "-o", tmp_path / ("x" * 300 + ".json"), cwd=tmp_path,
                    check_code=2)
    assert "too long" in long_name.stderr and "Traceback" not in long_name.stderr
