"""Hardening, round two, runs that fail, hang or are interrupted, and gates that cannot pass by
accident: a failure is one benchmark's, a stopped run keeps what finished (marked partial),
default results names never collide, and a gate that cannot be evaluated fails."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import benchkit
from benchkit.core.records.records import FailureKind, Phase
from benchkit.core.records.schema import Results
from conftest import make_measurement, requires_valgrind

# end to end: `make test` runs it, `make test-fast` leaves it out
pytestmark = pytest.mark.slow

FAST = ["--processes", "2", "--min-run-time", "0.02"]


def cli(*args, cwd, check_code=None, timeout=600):
    out = subprocess.run([sys.executable, "-m", "benchkit", *map(str, args)], cwd=cwd,
                         capture_output=True, text=True, timeout=timeout,
                         env={"PATH": "/usr/bin:/bin"})
    if check_code is not None:
        assert out.returncode == check_code, out.stdout + out.stderr
    assert "Traceback" not in out.stderr, out.stderr
    return out


def suite(tmp_path, body, name="bench_h.py"):
    path = tmp_path / name
    path.write_text("from benchkit import Timer, benchmark\n" + textwrap.dedent(body))
    return path


FAILING = '''
    def work(n):
        return sum(range(n))

    bench_fine = Timer("work(100)", globals={"work": work}, label="fine")
    bench_divides = Timer("1/0", label="divides by zero")

    @benchmark
    def broken():
        raise KeyError("no such size")
'''


def test_a_short_timeout_bounds_a_benchmark_not_the_import_of_its_suite(tmp_path):
    """--timeout 0.3 with a suite that takes a second to import (as a loaded machine can
    make any suite): the benchmarks are measured, the slow one alone times out, and the
    workers started after it import the suite again within their own limit."""
    path = suite(tmp_path, '''
    import time
    time.sleep(1.0)
    bench_fine = Timer("sum(range(100))")
    bench_slow = Timer("while True: pass")
    bench_after = Timer("sum(range(10))")
''')
    cli("run", path, *FAST, "--timeout", "0.3", "-o", "r.json", cwd=tmp_path, check_code=1)
    results = benchkit.load(tmp_path / "r.json")
    assert sorted(m.metadata["benchmark"] for m in results.measurements) == [
        "bench_h::bench_after", "bench_h::bench_fine"]
    assert [(f.benchmark, f.kind) for f in results.failures] == [
        ("bench_h::bench_slow", FailureKind.TIMED_OUT)]


def test_a_failing_benchmark_is_recorded_and_the_rest_is_measured_and_saved(tmp_path):
    path = suite(tmp_path, FAILING)
    out = cli("run", path, *FAST, "-o", "r.json", cwd=tmp_path, check_code=1)
    results = benchkit.load(tmp_path / "r.json")
    assert [m.metadata["benchmark"] for m in results.measurements] == ["bench_h::bench_fine"]
    failed = {f.benchmark: f for f in results.failures}
    assert set(failed) == {"bench_h::bench_divides", "bench_h::broken"}
    divides = failed["bench_h::bench_divides"]
    assert (divides.phase, divides.kind, divides.file) == (Phase.WALL_TIME, FailureKind.RAISED,
                                                           str(path))
    assert "ZeroDivisionError" in divides.error
    assert failed["bench_h::broken"].phase is Phase.LOAD and "no such size" in \
        failed["bench_h::broken"].error
    assert "FAILED bench_h::bench_divides" in out.stdout and "2 benchmark(s) failed" in out.stdout
    shown = cli("show", "r.json", cwd=tmp_path, check_code=0).stdout
    assert f"FAILED bench_h::bench_divides ({path}): raised in wall time" in shown
    # a benchmark that could not be measured fails a comparison unless --allow-missing,
    # in `compare` as in `ab`
    compared = cli("compare", "r.json", "r.json", cwd=tmp_path, check_code=1).stdout
    assert "failed in NEW: bench_h::bench_divides" in compared
    cli("compare", "r.json", "r.json", "--allow-missing", cwd=tmp_path, check_code=0)


@requires_valgrind
def test_functions_a_suite_defines_are_counted_and_failures_stay_one_benchmarks(tmp_path):
    path = suite(tmp_path, FAILING + '''
    class Box:
        def __init__(self, n):
            self.n = n

    bench_box = Timer("sum(range(b.n))", globals={"b": Box(50)}, label="box")
''')
    cli("run", path, *FAST, "--callgrind", "-o", "r.json", cwd=tmp_path, check_code=1)
    results = benchkit.load(tmp_path / "r.json")
    counted = {s.metadata["benchmark"]: s for s in results.callgrind}
    assert set(counted) == {"bench_h::bench_fine", "bench_h::bench_box"}
    assert counted["bench_h::bench_fine"].per_run() > counted["bench_h::bench_box"].per_run() > 0
    assert len(results.measurements) == 2 and len(results.failures) == 2


@requires_valgrind
def test_a_benchmark_that_hangs_times_out_in_both_phases(tmp_path):
    path = suite(tmp_path, '''
    bench_fine = Timer("sum(range(10))")
    bench_hangs = Timer("while True: pass")
''')
    started = time.monotonic()
    out = cli("run", path, *FAST, "--timeout", "3", "--callgrind", "-o", "r.json",
              cwd=tmp_path, check_code=1)
    assert time.monotonic() - started < 240
    results = benchkit.load(tmp_path / "r.json")
    (failure,) = results.failures
    assert failure.benchmark == "bench_h::bench_hangs" and failure.kind is FailureKind.TIMED_OUT
    assert failure.phase is Phase.WALL_TIME
    assert [s.metadata["benchmark"] for s in results.callgrind] == ["bench_h::bench_fine"]
    assert "timed out in wall time" in out.stdout


@requires_valgrind
def test_a_hang_under_callgrind_alone_times_out_and_kills_only_that_child(tmp_path):
    fine, hangs = benchkit.Timer("sum(range(10))"), benchkit.Timer("while True: pass")
    from benchkit.core.callgrind.requests import CountRequest
    from benchkit.engines.callgrind.collector import JobFailure
    from benchkit.orchestration import counting
    options = counting.build_options("test", timeout=3, jobs=2)
    started = time.monotonic()
    outcomes = counting.collect_many([CountRequest(fine.task(), 10),
                                      CountRequest(hangs.task(), 10)], options,
                                     keep_going=True)
    assert time.monotonic() - started < 120
    assert outcomes[0].per_run() > 0
    assert isinstance(outcomes[1], JobFailure) and outcomes[1].kind is FailureKind.TIMED_OUT
    assert "did not finish within timeout=3 s" in str(outcomes[1].error)


@requires_valgrind
def test_collect_callgrind_of_a_snippet_that_exits_is_a_clear_error():
    started = time.monotonic()
    with pytest.raises(benchkit.BenchkitError, match="SystemExit"):
        benchkit.Timer("import sys; sys.exit(0)").collect_callgrind(number=1, timeout=120)
    assert time.monotonic() - started < 120


@requires_valgrind
@pytest.mark.parametrize("sig, code, name", [(signal.SIGINT, 130, "SIGINT"),
                                             (signal.SIGTERM, 143, "SIGTERM")])
def test_an_interrupted_callgrind_phase_keeps_the_wall_times(tmp_path, sig, code, name):
    path = suite(tmp_path, '''
    bench_fine = Timer("sum(range(100000))")     # seconds under callgrind
    bench_slow = Timer("while True: pass")
''')
    process = subprocess.Popen(
        [sys.executable, "-m", "benchkit", "run", str(path), "--processes", "1",
         "--min-run-time", "0.01", "--timeout", "0.5", "--callgrind", "-o", "r.json"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={"PATH": "/usr/bin:/bin"}, preexec_fn=_sigint_default)
    owned = f"{process.pid:010d}-"
    # The signal once a statement runs under valgrind (a fixed delay after the working
    # directory appeared could land in the collector's start-up on a loaded machine).
    _wait_for_valgrind_in(f"benchkit-cg-{owned}", deadline=time.monotonic() + 120)
    time.sleep(1.0)
    process.send_signal(sig)
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == code, stdout + stderr
    assert "Traceback" not in stderr
    kept = benchkit.load(tmp_path / "r.partial.json")
    assert kept.partial == f"interrupted ({name}) during instruction counts"
    assert [m.metadata["benchmark"] for m in kept.measurements] == ["bench_h::bench_fine"]
    assert kept.failures[0].kind is FailureKind.TIMED_OUT
    assert not [p for p in Path("/tmp").iterdir()
                if p.name.startswith("benchkit-") and owned in p.name]
    shown = cli("show", "r.partial.json", cwd=tmp_path, check_code=0).stdout
    assert f"PARTIAL: this run stopped early: interrupted ({name})" in shown


def _sigint_default() -> None:
    """In the child: SIGINT as a terminal delivers it (a background shell may ignore it)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _wait_for_valgrind_in(prefix: str, deadline: float) -> None:
    """Until a valgrind process works in a directory whose name contains `prefix`."""
    while time.monotonic() < deadline:
        for proc in Path("/proc").glob("[0-9]*"):
            try:
                if prefix in os.readlink(proc / "cwd") and b"valgrind" in (
                        proc / "cmdline").read_bytes():
                    return
            except OSError:
                continue
        time.sleep(0.05)


def test_runs_started_in_the_same_second_never_share_a_results_file(tmp_path):
    path = suite(tmp_path, 'bench_fine = Timer("sum(range(10))")\n')
    processes = [subprocess.Popen([sys.executable, "-m", "benchkit", "run", str(path),
                                   "--processes", "1", "--min-run-time", "0.01"],
                                  cwd=tmp_path, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, env={"PATH": "/usr/bin:/bin"})
                 for _ in range(3)]
    for process in processes:
        process.communicate(timeout=300)
        assert process.returncode == 0
    written = sorted(p.name for p in (tmp_path / "results").iterdir())
    assert len(written) == 3, written
    stems = {name.rsplit("-", 1)[0] if name.count("-") > 2 else name[:-5] for name in written}
    assert all(benchkit.load(tmp_path / "results" / n).measurements for n in written)
    assert len(stems) <= 3


def _counts_only(tmp_path):
    from benchkit.core.callgrind.callgrind_stats import CallgrindStats
    from benchkit.core.callgrind.counts import FunctionCount, FunctionCounts
    from benchkit.core.measure.task import TaskSpec
    ex = FunctionCounts((FunctionCount(1000, "a.c:f"),), False)
    stats = CallgrindStats(TaskSpec("x", "pass"), 10, True, FunctionCounts((), True),
                           FunctionCounts((), False), FunctionCounts((), True), ex, None,
                           {"benchmark": "b::x"})
    return benchkit.save(tmp_path / "counts.json", Results([], [stats], {}))


def test_a_gate_that_cannot_be_evaluated_fails_unless_allowed(tmp_path):
    m = make_measurement([1.0, 1.1, 1.2], metadata={"benchmark": "b::x", "gates": []})
    wall = benchkit.save(tmp_path / "wall.json", Results([m], [], {}))
    counts = _counts_only(tmp_path)
    out = cli("compare", wall, counts, "--fail-on", "instructions>1%", cwd=tmp_path,
              check_code=1)
    assert ("instructions>1%: cannot be evaluated: BASE has no instruction counts for it"
            in out.stdout)
    out = cli("compare", wall, counts, "--fail-on", "instructions>1%", "--allow-missing",
              cwd=tmp_path, check_code=0)
    assert "gates not evaluated (--allow-missing)" in out.stdout
    other = benchkit.save(tmp_path / "other.json",
                          Results([make_measurement([1.0, 1.1], metadata={"benchmark": "b::y"})],
                                  [], {}))
    out = cli("compare", wall, other, "--fail-on", "slower>5%", cwd=tmp_path, check_code=1)
    assert "slower>5%: cannot be evaluated: not in BASE" in out.stdout
    assert "slower>5%: cannot be evaluated: not in NEW" in out.stdout
    cli("compare", wall, other, cwd=tmp_path, check_code=2)     # nothing in common, no gates


def test_an_interrupt_stops_the_workers_at_once(tmp_path):
    """A worker runs in a session of its own (the terminal's Ctrl-C does not reach it): the
    interrupted run must kill it rather than wait for its block to end."""
    ticks = tmp_path / "ticks"
    path = suite(tmp_path, f'''
    bench_ticking = Timer("time.sleep(0.2); f.write('x'); f.flush()",
                          setup="import time; f = open({str(ticks)!r}, 'a')")
''')
    process = subprocess.Popen(
        [sys.executable, "-m", "benchkit", "run", str(path), "--processes", "1",
         "--min-run-time", "600", "-o", "r.json"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={"PATH": "/usr/bin:/bin"}, preexec_fn=_sigint_default)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (
            not ticks.exists() or len(ticks.read_text()) < 5):
        time.sleep(0.1)
    process.send_signal(signal.SIGINT)
    at_signal = len(ticks.read_text())
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stdout + stderr
    time.sleep(1.0)
    # Waiting for the block would have let it tick for seconds (5 per second) more.
    assert len(ticks.read_text()) - at_signal <= 2


def test_two_runs_into_the_same_output_the_second_fails_before_measuring(tmp_path):
    """Two `run -o same.json` at once: the one that comes second exits 2 at once, saying
    why, and the first one's results land whole."""
    import subprocess
    import sys
    import time
    (tmp_path / "bench_slow.py").write_text(
        "from benchkit import Timer\nbench_a = Timer('sum(range(1000))')\n")
    first = subprocess.Popen([sys.executable, "-m", "benchkit", "run", "bench_slow.py",
                              "--min-run-time", "1.5", "--processes", "2", "-o", "same.json"],
                             cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    from benchkit.cli.saving import lock_path
    lock = lock_path(tmp_path / "same.json")
    try:
        deadline = time.time() + 60
        while not lock.exists() and time.time() < deadline:
            time.sleep(0.05)
        second = subprocess.run([sys.executable, "-m", "benchkit", "run", "bench_slow.py",
                                 "-o", "same.json"], cwd=tmp_path, capture_output=True,
                                text=True, timeout=120)
        assert second.returncode == 2, second.stdout + second.stderr
        assert "another benchkit command is writing it now" in second.stderr
        # refused before it measured anything: no table, nothing written
        assert second.stdout == "" and "wrote" not in second.stderr
    finally:
        out, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    assert [m.metadata["benchmark"] for m in benchkit.load(tmp_path / "same.json")
            .measurements] == ["bench_slow::bench_a"]
    # nothing of benchkit's left beside them (Python may cache the suite's bytecode)
    assert not lock.exists() and sorted(p.name for p in tmp_path.iterdir()
                                        if p.name != "__pycache__") == [
        "bench_slow.py", "same.json"]
