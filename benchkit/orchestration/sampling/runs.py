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
from typing import Any, Iterator, Sequence

from benchkit.core import validate
from benchkit.core.measurement import Chunk, Measurement, ProcessSample
from benchkit.core.records import Benchmark
from benchkit.core.task import Task, TaskSpec
from benchkit.errors import SuiteError
from benchkit.orchestration.sampling.workers import (Interpreter, Load, StartWorker, SuiteLoad,
                                                     TasksLoad, names, start_process)
from benchkit.system.processes import owned_prefix


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
    """What a run measured so far, filled as it goes: a failure keeps what finished."""

    series: list[Series] = dataclasses.field(default_factory=list)
    processes_done: int = 0

    def measurements(self) -> list[Measurement]:
        """One Measurement per benchmark measured, with its name and gates as metadata."""
        out = []
        for s in self.series:
            m = s.measurement(metadata=s.benchmark.metadata())
            if m is not None:
                out.append(m)
        return out


def sample(load: Load, where: Interpreter = Interpreter(), settings: Settings = Settings(), *,
           progress: Any = None, into: Sampled | None = None,
           start: StartWorker = start_process) -> Sampled:
    """Run `settings.processes` workers one after another, each loading `load` and measuring
    every benchmark once, in an order shuffled per process (seeded by settings.seed)."""
    rng = settings.rng()
    out = into if into is not None else Sampled()
    for p in range(settings.processes):
        worker = start(where, f"{where.name} worker {p + 1}", None, p, settings.timeout)
        try:
            listed = worker.load(load)
            if p == 0:
                if not listed:
                    raise SuiteError(f"no benchmarks in {load.describe()}")
                for benchmark, spec in listed:
                    series = Series(benchmark, spec)
                    series.number = worker.block_size(benchmark.name,
                                                      settings.block_min_run_time)
                    out.series.append(series)
            elif names(listed) != [s.benchmark.name for s in out.series]:
                raise SuiteError(f"{where.name} worker {p + 1} found other benchmarks than the "
                                 "first; the suite must define the same benchmarks every time")
            order = list(out.series)
            rng.shuffle(order)
            for series in order:
                series.add(worker.measure(series.benchmark.name, series.number,
                                          settings.min_run_time, settings.chunk_time,
                                          warmup=True), p)
                advance(progress, settings.processes * len(out.series))
            out.processes_done = p + 1
        finally:
            worker.close()
    return out


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
    return [series.measurement(task.spec) for task, series in zip(tasks, sampled.series)]
