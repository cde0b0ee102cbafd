"""The schedulers' logic with fake workers, no processes: who measures what in which order,
how A/B trials pair up, and what a failure leaves behind."""
from __future__ import annotations

import dataclasses

import pytest

from benchkit.core.metrics.gates import Gate
from benchkit.core.measure.measurement import Chunk
from benchkit.core.measure.task import TaskSpec
from benchkit.core.records.records import Benchmark, Failure, FailureKind, Phase, Side
from benchkit.errors import BenchmarkFailed, SuiteError, WorkerError
from benchkit.orchestration.sampling import interleaved, runs
from benchkit.orchestration.sampling.workers import Interpreter, Listing

SUITE = {"a": 1e-6, "b": 2e-6, "c": 3e-6}       # name -> seconds per run
SETTINGS = runs.Settings(processes=4, min_run_time=0.01, chunk_time=0.005, seed=7)


@dataclasses.dataclass
class FakeWorker:
    """A worker that answers from SUITE and logs every call; `fail_at` makes the n-th
    measure call raise `failure` (a dying worker, a raising snippet, an interrupt)."""

    label: str
    layout: int | None
    cpu: int | None
    log: list
    suite: dict = dataclasses.field(default_factory=lambda: dict(SUITE))
    fail_at: int | None = None
    failure: BaseException = WorkerError("exited (status 7)")
    slowdown: float = 1.0
    measured: int = 0

    def load(self, load):
        self.log.append((self.label, "load", type(load).__name__))
        return Listing(tuple((Benchmark(name, (Gate.parse("slower>5%"),), file="/s.py"),
                              TaskSpec(name, "pass")) for name in self.suite))

    def environment(self):
        return {"hostname": self.label}

    def block_size(self, name, min_run_time):
        self.log.append((self.label, "block_size", name))
        return 10

    def measure(self, name, number, min_time, chunk_time, warmup):
        self.measured += 1
        if self.fail_at is not None and self.measured == self.fail_at:
            raise self.failure
        self.log.append((self.label, "measure", name, warmup, self.layout, self.cpu))
        block = self.suite[name] * number * self.slowdown
        return [Chunk(1e-4, (block, block)), Chunk(1e-4, (block,))]

    def close(self):
        self.log.append((self.label, "close"))


def starter(log, failing: dict | None = None, slow: str | None = None,
            failure: BaseException = WorkerError("exited (status 7)")):
    """A `start` function making FakeWorkers; `failing` maps a label to its fail_at (only
    the first worker of that label fails: a replacement works)."""
    workers = []

    def start(where: Interpreter, label, cpu, layout, timeout):
        first = not any(w.label == label for w in workers)
        worker = FakeWorker(label, layout, cpu, log,
                            fail_at=(failing or {}).get(label) if first else None,
                            failure=failure, slowdown=2.0 if where.name == slow else 1.0)
        workers.append(worker)
        return worker
    start.workers = workers
    return start


def _measured(log, label):
    return [entry[2] for entry in log if entry[0] == label and entry[1] == "measure"]


def test_a_run_measures_every_benchmark_once_per_process_in_a_seeded_shuffled_order():
    log = []
    sampled = runs.sample(runs.SuiteLoad(("s.py",)), settings=SETTINGS, start=starter(log))
    orders = [_measured(log, f"run worker {p}") for p in range(1, 5)]
    assert all(sorted(order) == ["a", "b", "c"] for order in orders)
    assert len({tuple(order) for order in orders}) > 1          # shuffled per process
    again = []
    runs.sample(runs.SuiteLoad(("s.py",)), settings=SETTINGS, start=starter(again))
    assert again == log                                          # the seed fixes the order
    assert [(e[0], e[1]) for e in log if e[1] == "close"] == [
        (f"run worker {p}", "close") for p in range(1, 5)]
    # block sizes are chosen once, by the first process
    assert [e for e in log if e[1] == "block_size"] == [
        ("run worker 1", "block_size", name) for name in SUITE]
    layouts = {e[0]: e[4] for e in log if e[1] == "measure"}
    assert layouts == {f"run worker {p + 1}": p for p in range(4)}
    ms = sampled.measurements()
    assert [m.metadata for m in ms] == [{"benchmark": n, "gates": ["slower>5%"]} for n in SUITE]
    for m, seconds in zip(ms, SUITE.values()):
        assert m.num_processes == 4 and m.number_per_run == 10
        assert [p.chunks for p in m.processes] == [(2, 1)] * 4
        assert [p.layout for p in m.processes] == [0, 1, 2, 3]
        assert m.median == pytest.approx(seconds)


@pytest.mark.parametrize("failure, kind", [
    (WorkerError("exited (status 7)"), FailureKind.CRASHED),
    (WorkerError("no answer within 600 s", timed_out=True), FailureKind.TIMED_OUT),
    (BenchmarkFailed("stmt raised ZeroDivisionError"), FailureKind.RAISED),
])
def test_a_failing_benchmark_is_recorded_and_the_others_are_measured(failure, kind):
    log = []
    start = starter(log, failing={"run worker 3": 2}, failure=failure)
    sampled = runs.sample(runs.SuiteLoad(("s.py",)), settings=SETTINGS, start=start)
    order_of_third = [e[2] for e in log if e[0] == "run worker 3" and e[1] == "measure"]
    (failure_record,) = sampled.failures
    failed = failure_record.benchmark
    assert failure_record == Failure(failed, Phase.WALL_TIME, kind, str(failure), "/s.py")
    assert failed not in order_of_third       # the failing call is not logged as measured
    ms = {m.metadata["benchmark"]: m for m in sampled.measurements()}
    assert failed not in ms and set(ms) == set(SUITE) - {failed}
    assert all(m.num_processes == 4 for m in ms.values())       # nothing else was lost
    workers = [w.label for w in start.workers]
    restarted = kind is not FailureKind.RAISED                  # a dead worker is replaced
    assert workers.count("run worker 3") == (2 if restarted else 1)
    assert not any(e[2] == failed for e in log if e[1] == "measure" and e[0] == "run worker 4")


def test_an_interrupt_keeps_what_finished_and_closes_the_worker():
    log = []
    kept = runs.Sampled()
    with pytest.raises(KeyboardInterrupt):
        runs.sample(runs.SuiteLoad(("s.py",)), settings=SETTINGS, into=kept,
                    start=starter(log, failing={"run worker 3": 2},
                                  failure=KeyboardInterrupt()))
    assert kept.processes_done == 2 and not kept.failures
    first_of_third = _measured(log, "run worker 3")
    assert len(first_of_third) == 1
    assert {m.metadata["benchmark"]: m.num_processes for m in kept.measurements()} == {
        name: 3 if name in first_of_third else 2 for name in SUITE}
    assert ("run worker 3", "close") in log


def test_a_suite_that_changes_between_processes_is_an_error():
    log = []
    start = starter(log)

    def changing(where, label, cpu, layout, timeout):
        worker = start(where, label, cpu, layout, timeout)
        if layout == 1:
            worker.suite = {"a": 1e-6}
        return worker
    with pytest.raises(SuiteError, match="found other benchmarks than the first"):
        runs.sample(runs.SuiteLoad(("s.py",)), settings=SETTINGS, start=changing)


def test_an_empty_suite_names_what_was_loaded():
    def empty(where, label, cpu, layout, timeout):
        worker = FakeWorker(label, layout, cpu, [])
        worker.suite = {}
        return worker
    with pytest.raises(SuiteError, match="no benchmarks in s.py match -k 'zzz'"):
        runs.sample(runs.SuiteLoad(("s.py",), keyword="zzz"), settings=SETTINGS, start=empty)


def _ab(log, rounds=3, trials=4, **kwargs):
    base = Interpreter("base")
    new = Interpreter("new", env=(("WORK", "2"),))
    return interleaved.interleave(["s.py"], base, new, rounds=rounds, trials=trials,
                                  settings=SETTINGS, cpus=[0, 1], **kwargs)


def test_interleaved_rounds_pair_both_sides_on_one_cpu_and_layout():
    log = []
    out = _ab(log, start=starter(log, slow="new"))
    assert out.rounds_done == 3 and out.environments == {
        "base": {"hostname": "base worker (round 1)"},
        "new": {"hostname": "new worker (round 1)"}}
    for r in range(3):
        entries = [e for e in log if e[0].endswith(f"(round {r + 1})") and e[1] == "measure"]
        assert {(e[4], e[5]) for e in entries} == {(r, r % 2)}   # one layout, one cpu
        for name in SUITE:
            calls = [e for e in entries if e[2] == name]
            # a warm-up on each side, then trials pairs back to back in random order
            assert [e[3] for e in calls[:2]] == [True, True]
            pairs = [calls[2 + 2 * k: 4 + 2 * k] for k in range(4)]
            assert all(sorted(e[0].split()[0] for e in pair) == ["base", "new"]
                       for pair in pairs)
    assert {tuple(e[0].split()[0] for e in log[i:i + 2]) for i in range(len(log) - 1)
            if log[i][1] == log[i + 1][1] == "measure" and not log[i][3] and not log[i + 1][3]
            } >= {("base", "new"), ("new", "base")}
    base_ms, new_ms = out.measurements(Side.BASE), out.measurements(Side.NEW)
    assert [m.metadata["side"] for m in base_ms + new_ms] == ["base"] * 3 + ["new"] * 3
    for b, n in zip(base_ms, new_ms):
        assert b.number_per_run == n.number_per_run == 10         # one block size
        # a process per round, a chunk per trial (the first chunk of each trial's reply)
        assert [p.chunks for p in b.processes] == [(2,) * 4] * 3
        assert n.median == pytest.approx(2 * b.median)


def test_interleaved_results_record_both_sides_and_what_only_one_has():
    log = []
    start = starter(log)

    def new_lacks_c(where, label, cpu, layout, timeout):
        worker = start(where, label, cpu, layout, timeout)
        if where.name == "new":
            worker.suite = {"a": 1e-6, "b": 2e-6, "d": 1e-6}
        return worker

    out = _ab(log, rounds=1, start=new_lacks_c)
    assert (out.only_base, out.only_new) == (["c"], ["d"])
    results = out.results(Interpreter("base"), Interpreter("new", env=(("WORK", "2"),)),
                          {Side.BASE: "HEAD~1", Side.NEW: None}, 4, 0.005, 7, {})
    record = results.ab
    assert (record.rounds, record.trials, record.only_base, record.only_new) == (
        1, 4, ("c",), ("d",))
    assert record.sides[Side.BASE].rev == "HEAD~1" and record.sides[Side.NEW].env == {
        "WORK": "2"}
    assert [Benchmark.of(m).side for m in results.measurements] == [Side.BASE] * 2 + [
        Side.NEW] * 2


def test_an_interleaved_interrupt_keeps_the_rounds_that_finished():
    log = []
    kept = interleaved.Interleaved()
    with pytest.raises(KeyboardInterrupt):    # during the first benchmark's trials of round 2
        _ab(log, into=kept, start=starter(log, failing={"new worker (round 2)": 3},
                                          failure=KeyboardInterrupt()))
    assert kept.rounds_done == 1
    assert [m.num_processes for m in kept.measurements(Side.BASE)] == [1, 1, 1]
    assert [m.num_processes for m in kept.measurements(Side.NEW)] == [1, 1, 1]
    assert ("base worker (round 2)", "close") in log and ("new worker (round 2)", "close") in log


def test_an_interleaved_benchmark_failing_on_one_side_is_recorded_and_the_rest_go_on():
    log = []
    out = _ab(log, start=starter(log, failing={"new worker (round 2)": 3}))
    (failure,) = out.failures
    assert failure.kind is FailureKind.CRASHED and failure.error.startswith("NEW: ")
    assert out.rounds_done == 3
    measured = {m.metadata["benchmark"]: m.num_processes for m in out.measurements(Side.BASE)}
    assert failure.benchmark not in measured and set(measured.values()) == {3}
