"""One run: benchmarks measured across fresh worker processes, one process after another, each
measuring every benchmark once in a shuffled order, so drift and machine state spread evenly.

Every chunk of blocks is preceded by a tiny fixed speed probe, so the analysis can tell the
machine's state at the time (on shared machines the same code runs up to ~1.7x slower when a
neighbour is busy, for seconds at a time). Workers come from a `start` function
(workers.start_process by default), so the schedule is tested with fake workers.
"""
from __future__ import annotations

import contextlib
import dataclasses
import json
import random
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from benchkit.core.records import validate
from benchkit.core.measure.measurement import Chunk, Measurement, ProcessSample
from benchkit.core.records.records import Benchmark, Failure, FailureKind, Phase
from benchkit.core.measure.task import Task, TaskSpec
from benchkit.errors import BenchmarkFailed, BenchmarkSkipped, SuiteError, WorkerError
from benchkit.orchestration.sampling.workers import (Interpreter, Listing, Load, StartWorker,
                                                     SuiteLoad, TasksLoad, Worker,
                                                     start_process)
from benchkit.system.processes import owned_prefix


# Seconds a fresh worker may take to import the suite (and report its benchmarks) however
# short --timeout is; a suite that hangs on import still fails, after this long.
LOAD_TIMEOUT = 120.0


@dataclasses.dataclass(frozen=True)
class Settings:
    """How long to measure. `min_run_time` is per benchmark per process (run) or per side
    per round (A/B); `chunk_time` is the length of one chunk (an A/B trial)."""

    processes: int = 6
    min_run_time: float = 0.15
    chunk_time: float = 0.025
    block_min_run_time: float = 0.2      # block size chosen like blocked_autorange's
    timeout: float = 600.0               # per request
    seed: int | None = None

    def __post_init__(self) -> None:
        validate.settings(dataclasses.asdict(self),
                          seconds_fields=("min_run_time", "chunk_time", "block_min_run_time",
                                          "timeout"),
                          count_fields=("processes",))

    def rng(self) -> random.Random:
        """The generator of the measuring order."""
        return random.Random(self.seed)


def advance(progress: Any, total: int) -> None:
    """Step a tqdm-like progress bar, setting its total once it is known."""
    if progress is None:
        return
    if progress.total != total:
        progress.total = total
        progress.refresh()
    progress.update(1)


@dataclasses.dataclass
class Series:
    """What one benchmark accumulated: its block size, block times and, per process (or
    round), the chunks' sizes and probes."""

    benchmark: Benchmark
    spec: TaskSpec | None
    number: int = 0
    times: list[float] = dataclasses.field(default_factory=list)
    processes: list[ProcessSample] = dataclasses.field(default_factory=list)

    def add(self, chunks: Sequence[Chunk], layout: int | None) -> None:
        """One process's (or round's) chunks."""
        times, sample = ProcessSample.from_chunks(chunks, layout)
        self.times.extend(times)
        self.processes.append(sample)

    def measurement(self, spec: TaskSpec | None = None,
                    metadata: dict[str, Any] | None = None) -> Measurement | None:
        """The Measurement so far (None before any process finished)."""
        if not self.times:
            return None
        return Measurement(self.number, list(self.times), spec or self.spec, metadata,
                           processes=list(self.processes))


@dataclasses.dataclass
class Sampled:
    """What a run measured so far, filled as it goes: a failure or an interrupt keeps what
    finished. A benchmark that failed is in `failures` and measured no further."""

    series: list[Series] = dataclasses.field(default_factory=list)
    failures: list[Failure] = dataclasses.field(default_factory=list)
    processes_done: int = 0

    def failed(self, name: str) -> bool:
        """Whether benchmark `name` failed."""
        return any(f.benchmark == name for f in self.failures)

    def measurements(self) -> list[Measurement]:
        """One Measurement per benchmark measured (and not failed), with its name and gates
        as metadata."""
        out = []
        for s in self.series:
            m = None if self.failed(s.benchmark.name) else s.measurement(
                metadata=s.benchmark.metadata())
            if m is not None:
                out.append(m)
        return out


def check_same(slot: "Slot", names: list[str]) -> None:
    """A later worker must find what the first one found."""
    if slot.listing.names() != names:
        why = "".join(f"; {f.error.splitlines()[0]}" for f in slot.listing.failures)
        raise SuiteError(f"{slot.label} found other benchmarks than the first; the suite "
                         f"must define the same benchmarks every time{why}")


class Slot:
    """One worker process of a schedule: started on first use, loading `load`, and started
    again (same layout and CPU) after a benchmark crashes it or times out, so one
    benchmark's failure is that benchmark's alone."""

    def __init__(self, start: StartWorker, where: Interpreter, label: str, cpu: int | None,
                 layout: int | None, settings: "Settings", load: Load):
        self._start, self._where, self.label = start, where, label
        self._cpu, self._layout, self._settings, self._load = cpu, layout, settings, load
        self._worker: Worker | None = None
        self.listing: Listing | None = None

    def worker(self) -> Worker:
        """The live worker (started and loaded if needed)."""
        if self._worker is None:
            self._worker = self._start(self._where, self.label, self._cpu, self._layout,
                                       self._settings.timeout)
            # --timeout bounds a benchmark's run, not the import of the suite in a fresh
            # process: on a loaded machine that alone can take longer than a short limit
            limit = getattr(self._worker, "timeout", None)
            if limit is not None:
                self._worker.timeout = max(limit, LOAD_TIMEOUT)
            try:
                listing = self._worker.load(self._load)
            except BaseException:
                self.close()
                raise
            if limit is not None:
                self._worker.timeout = limit
            if self.listing is not None and listing.names() != self.listing.names():
                self.close()
                raise SuiteError(f"{self.label} found other benchmarks than before; the suite "
                                 "must define the same benchmarks every time")
            self.listing = listing
        return self._worker

    def run(self, benchmark: Benchmark, phase: Phase, call: Callable[[Worker], Any]
            ) -> Any | Failure:
        """call(worker), or the Failure of `benchmark` when its snippet raised, its worker
        died or it did not answer within settings.timeout, or the benchmark's own shorter
        one (the worker is then replaced)."""
        worker = self.worker()
        limit = getattr(worker, "timeout", None)
        if limit is not None and benchmark.timeout is not None:
            worker.timeout = min(limit, benchmark.timeout)
        try:
            return call(worker)
        except BenchmarkSkipped as error:
            return Failure(benchmark.name, phase, FailureKind.SKIPPED, str(error),
                           benchmark.file)
        except BenchmarkFailed as error:
            return Failure(benchmark.name, phase, FailureKind.RAISED, str(error),
                           benchmark.file)
        except WorkerError as error:
            self.close()
            kind = FailureKind.TIMED_OUT if error.timed_out else FailureKind.CRASHED
            return Failure(benchmark.name, phase, kind, str(error), benchmark.file)
        finally:
            if limit is not None and self._worker is worker:
                worker.timeout = limit

    def close(self) -> None:
        """Stop the worker (if any)."""
        if self._worker is not None:
            worker, self._worker = self._worker, None
            worker.close()


def sample(load: Load, where: Interpreter = Interpreter(), settings: Settings = Settings(), *,
           progress: Any = None, into: Sampled | None = None,
           start: StartWorker = start_process) -> Sampled:
    """Run `settings.processes` workers one after another, each loading `load` and measuring
    every benchmark once, in an order shuffled per process (seeded by settings.seed). A
    benchmark that fails is recorded in `failures` and left out of later processes."""
    rng = settings.rng()
    out = into if into is not None else Sampled()
    for p in range(settings.processes):
        slot = Slot(start, where, f"{where.name} worker {p + 1}", None, p, settings, load)
        try:
            slot.worker()
            if p == 0:
                _first_process(out, slot, load, settings)
            else:
                check_same(slot, [s.benchmark.name for s in out.series])
            order = list(out.series)
            rng.shuffle(order)
            for series in order:
                if not out.failed(series.benchmark.name):
                    chunks = slot.run(series.benchmark, Phase.WALL_TIME, lambda w: w.measure(
                        series.benchmark.name, series.number, settings.min_run_time,
                        settings.chunk_time, warmup=True))
                    if isinstance(chunks, Failure):
                        out.failures.append(chunks)
                    else:
                        series.add(chunks, p)
                advance(progress, settings.processes * len(out.series))
            out.processes_done = p + 1
        finally:
            slot.close()
    return out


def nothing_loaded(listing: Listing, what: str) -> SuiteError:
    """The error of a load that found no benchmark: the first file's own error when files
    failed to import (nothing to measure is an input error, not a benchmark's failure)."""
    if listing.failures:
        return SuiteError(listing.failures[0].error)
    return SuiteError(f"no benchmarks in {what}")


def _first_process(out: Sampled, slot: Slot, load: Load, settings: Settings) -> None:
    """The first process lists the benchmarks and chooses each one's block size."""
    if not slot.listing.benchmarks:
        raise nothing_loaded(slot.listing, load.describe())
    out.failures += slot.listing.failures
    for benchmark, spec in slot.listing.benchmarks:
        series = Series(benchmark, spec)
        number = slot.run(benchmark, Phase.WALL_TIME,
                          lambda w: w.block_size(benchmark.name, settings.block_min_run_time))
        if isinstance(number, Failure):
            out.failures.append(number)
        else:
            series.number = number
        out.series.append(series)


def sample_suite(paths: Sequence[str], *, keyword: str | None = None,
                 num_threads: int | None = None, where: Interpreter = Interpreter(),
                 settings: Settings = Settings(), progress: Any = None,
                 into: Sampled | None = None,
                 start: StartWorker = start_process) -> list[Measurement]:
    """Measure a suite's benchmarks across `settings.processes` fresh worker processes."""
    load = SuiteLoad(tuple(map(str, paths)), keyword, num_threads)
    return sample(load, where, settings, progress=progress, into=into,
                  start=start).measurements()


@contextlib.contextmanager
def shipped(tasks: Sequence[Task]) -> Iterator[TasksLoad]:
    """A job file describing `tasks` for worker processes (globals pickled), removed after."""
    from benchkit.engines import transfer
    from benchkit.engines.callgrind.workdir import extra_sys_path
    workdir = Path(tempfile.mkdtemp(prefix=owned_prefix("timers")))
    try:
        fields = [{"id": i, **transfer.write_task(i, task, workdir)}
                  for i, task in enumerate(tasks)]
        job = {"tasks": fields, "extra_sys_path": extra_sys_path(workdir)}
        (workdir / "job.json").write_text(json.dumps(job), encoding="utf-8")
        yield TasksLoad(str(workdir / "job.json"))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def sample_tasks(tasks: Sequence[Task], settings: Settings = Settings(),
                 progress: Any = None, start: StartWorker = start_process) -> list[Measurement]:
    """Measure tasks across fresh worker processes of this interpreter: one Measurement per
    task, in order."""
    tasks = list(tasks)
    with shipped(tasks) as load:
        sampled = sample(load, Interpreter(), settings, progress=progress, start=start)
    if sampled.failures:
        first = sampled.failures[0]
        raise WorkerError(first.error, timed_out=first.kind is FailureKind.TIMED_OUT)
    return [series.measurement(task.spec) for task, series in zip(tasks, sampled.series)]
