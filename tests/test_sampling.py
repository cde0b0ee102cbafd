"""Wall time across real worker processes: structure, errors, cleanup."""
import os
import re
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import benchkit
from benchkit.core.records.records import FailureKind
from benchkit.errors import BenchkitError, SuiteError
from benchkit.core.measure.measurement import Measurement
from benchkit.orchestration.sampling import runs
from benchkit.errors import WorkerError
from benchkit.orchestration.sampling.workers import WorkerProcess

QUICK = runs.Settings(processes=3, min_run_time=0.03, chunk_time=0.01,
                          block_min_run_time=0.02, timeout=120)

SUITE = textwrap.dedent('''
    from benchkit import Timer, benchmark

    @benchmark(fail_on="slower>10%")
    def add():
        return Timer("x + 1", "x = 1", label="add")

    bench_join = Timer("','.join(w)", "w = ['a'] * 50", label="join")
''')


def _suite(tmp_path, text=SUITE, name="bench_s.py"):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.slow
def test_suite_is_measured_in_fresh_processes_with_chunks_and_probes(tmp_path):
    ms = runs.sample_suite([_suite(tmp_path)], settings=QUICK)
    assert [m.metadata for m in ms] == [
        {"benchmark": "bench_s::add", "gates": ["slower>10%"]},
        {"benchmark": "bench_s::bench_join", "gates": []}]
    for m in ms:
        assert m.num_processes == 3 and len(m.process_times()) == 3
        for sample, chunks in zip(m.processes, m.chunk_times()):
            assert len(sample.probes) == len(sample.chunks) == len(chunks)
            assert all(p > 0 for p in sample.probes)
            assert [len(c) for c in chunks] == list(sample.chunks)
        assert sum(p.blocks for p in m.processes) == len(m.raw_times)
        assert 0 < m.median < 1e-3
    assert "in 3 processes" in repr(ms[0])


@pytest.mark.slow
def test_keyword_selects_and_no_match_names_the_paths(tmp_path):
    suite = _suite(tmp_path)
    ms = runs.sample_suite([suite], keyword="join", settings=QUICK)
    assert [m.metadata["benchmark"] for m in ms] == ["bench_s::bench_join"]
    with pytest.raises(SuiteError, match="match -k 'zzz'"):
        runs.sample_suite([suite], keyword="zzz", settings=QUICK)


@pytest.mark.slow
def test_measure_processes_ships_globals_and_callables(tmp_path):
    import torch
    x = torch.ones(16)
    timers = [benchkit.Timer("x * 2", globals={"x": x}), benchkit.Timer(time.perf_counter)]
    with pytest.raises(BenchkitError):
        benchkit.Timer("pass").multiprocess_autorange(processes=0)
    a, b = benchkit.measure_processes(timers, processes=2, min_run_time=0.02)
    assert a.num_processes == b.num_processes == 2
    assert a.task_spec == timers[0].task_spec and b.median > 0


def _failure_of(suite, settings=QUICK):
    """The one failure of a suite's run (it is recorded, not raised)."""
    sampled = runs.Sampled()
    assert runs.sample_suite([suite], settings=settings, into=sampled) == []
    (failure,) = sampled.failures
    return failure


def test_snippet_error_in_a_worker_shows_the_users_line(tmp_path):
    suite = _suite(tmp_path, 'from benchkit import Timer\nbench_bad = Timer("1 / 0")\n')
    failure = _failure_of(suite)
    assert failure.benchmark == "bench_s::bench_bad" and failure.kind is FailureKind.RAISED
    assert "ZeroDivisionError" in failure.error
    assert "Traceback in the worker process" in failure.error and "1 / 0" in failure.error


def test_suite_that_exits_is_an_error_not_silent_success(tmp_path):
    suite = _suite(tmp_path, "import sys\nsys.exit(0)\n")
    with pytest.raises(BenchkitError, match=r"called sys.exit\(0\) while being imported"):
        runs.sample_suite([suite], settings=QUICK)


def test_suite_import_error_names_the_file(tmp_path):
    suite = _suite(tmp_path, "import no_such_module_here\n")
    with pytest.raises(SuiteError, match="bench_s.py.*no_such_module_here"):
        runs.sample_suite([suite], settings=QUICK)


def test_a_worker_that_dies_is_reported_with_its_stderr(tmp_path):
    suite = _suite(tmp_path, textwrap.dedent('''
        import os, sys
        from benchkit import Timer
        bench_die = Timer("print('dying now', file=sys.stderr, flush=True); os._exit(7)",
                          "import os, sys")
    '''))
    failure = _failure_of(suite)
    assert failure.kind is FailureKind.CRASHED
    assert re.search(r"exited \(status 7\)(.|\n)*dying now", failure.error)


@pytest.mark.slow
def test_a_hanging_snippet_times_out_and_its_worker_is_killed(tmp_path):
    suite = _suite(tmp_path, 'from benchkit import Timer\nbench_hang = Timer("while 1: pass")\n')
    settings = runs.Settings(processes=1, min_run_time=0.01, timeout=2)
    started = time.monotonic()
    failure = _failure_of(suite, settings)
    assert failure.kind is FailureKind.TIMED_OUT and "no answer within 2 s" in failure.error
    assert time.monotonic() - started < 30
    assert not _workers_of(os.getpid())


@pytest.mark.slow
def test_a_worker_that_timed_out_is_killed_at_once_not_asked_to_quit(tmp_path):
    """A worker that owes an answer would not read a request to quit: it is killed at once
    (it used to get 10 s to quit, and the run waited them out)."""
    finished = tmp_path / "finished"
    suite = _suite(tmp_path, "from benchkit import Timer\n"
                   f'bench_slow = Timer("time.sleep(2); pathlib.Path({str(finished)!r}).touch()",'
                   ' "import pathlib, time")\n')
    failure = _failure_of(suite, runs.Settings(processes=1, min_run_time=0.01, timeout=1))
    assert failure.kind is FailureKind.TIMED_OUT
    time.sleep(2.5)     # had the worker lived, its first run would have ended by now
    assert not finished.exists()
    assert not _workers_of(os.getpid())


def _workers_of(pid):
    out = subprocess.run(["pgrep", "-f", "benchkit/orchestration/sampling/worker.py"],
                         capture_output=True, text=True).stdout.split()
    return [p for p in out if _ppid(p) == pid]


def _ppid(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except OSError:
        return None


@pytest.mark.slow
def test_workers_die_with_their_parent(tmp_path):
    script = textwrap.dedent('''
        import sys, time
        from benchkit.orchestration.sampling.workers import WorkerProcess
        w = WorkerProcess()
        print(w.pid, flush=True)
        time.sleep(60)
    ''')
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    worker = int(parent.stdout.readline())
    os.kill(worker, 0)
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    for _ in range(100):
        try:
            os.kill(worker, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the worker outlived its parent")


def test_worker_requires_an_interpreter():
    with pytest.raises(WorkerError, match="cannot start"):
        WorkerProcess("/no/such/python")


def test_merge_keeps_the_process_structure():
    from benchkit.core.measure.measurement import ProcessSample
    from benchkit.core.measure.task import TaskSpec
    spec = TaskSpec("x", "pass")
    a = Measurement(2, [2.0, 4.0, 6.0], spec, processes=[ProcessSample((1,), (0.1,)),
                                                        ProcessSample((2,), (0.1,))])
    b = Measurement(1, [5.0], spec, processes=[ProcessSample((1,), (0.2,))])
    (merged,) = Measurement.merge([a, b])
    assert merged.raw_times == [1.0, 2.0, 3.0, 5.0] and merged.num_processes == 3
    (plain,) = Measurement.merge([a, Measurement(1, [5.0], spec)])
    assert plain.processes is None
    with pytest.raises(ValueError, match="hold 2 blocks"):
        Measurement(1, [1.0], spec, processes=[ProcessSample((2,))])


def test_a_worker_starts_whatever_its_layout_number():
    # Layout k's stack padding once grew without bound: from layout 32 on, one environment
    # string passed 128 KiB and the worker could not start (round 33 of an A/B).
    from benchkit.orchestration.sampling.workers import layout_environment
    assert max(len(v) for k in range(200) for v in layout_environment(k).values()) < 1 << 17
    with WorkerProcess(layout=40) as worker:
        assert worker.environment()["python"]
