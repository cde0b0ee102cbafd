"""Memory per run: snippets or suite benchmarks counted in a worker process that has the
counting allocator preloaded (benchkit.engines.memory)."""
from __future__ import annotations

import dataclasses
import platform
from typing import Callable, Iterator, Sequence

from benchkit.core import validate
from benchkit.core.memory import BlockCounts, MemoryStats
from benchkit.core.task import Task, TaskSpec
from benchkit.orchestration.sampling.workers import (Interpreter, Load, WorkerProcess,
                                                     start_process)

MECHANISM = "benchkit counting allocator (malloc family + Python allocator domains)"


@dataclasses.dataclass(frozen=True)
class MemorySettings:
    """Runs counted per benchmark (`number`) and untimed runs before them (`warmup`)."""

    number: int = 100
    warmup: int = 10
    timeout: float = 600.0

    def __post_init__(self) -> None:
        validate.integer("number", self.number, where="collect_memory")
        validate.integer("warmup", self.warmup, minimum=0, where="collect_memory")


def memory_interpreter(where: Interpreter = Interpreter()) -> Interpreter:
    """`where` with the counting allocator preloaded and a fixed string-hash seed."""
    from benchkit.engines.memory.counter import worker_environment
    env = dict(where.env)
    env.update(worker_environment())
    env.setdefault("PYTHONHASHSEED", "0")
    return dataclasses.replace(where, env=tuple(env.items()))


def count(worker: WorkerProcess, name: str, spec: TaskSpec,
          settings: MemorySettings) -> MemoryStats:
    """One benchmark's MemoryStats, counted by `worker`."""
    reply = worker.request("memory", name=name, number=settings.number,
                           warmup=settings.warmup)
    return MemoryStats(spec, settings.number,
                       *(BlockCounts.from_dict(reply[k]) for k in ("long", "short", "empty")),
                       {"mechanism": MECHANISM, "warmup": settings.warmup,
                        "python": platform.python_version()})


def counted(load: Load, settings: MemorySettings, where: Interpreter = Interpreter(),
            on_start: Callable[[WorkerProcess], None] | None = None
            ) -> Iterator[tuple[str, TaskSpec | None, MemoryStats | Exception]]:
    """(name, spec, MemoryStats or the error) for every benchmark `load` holds, in order,
    from one memory worker."""
    worker = start_process(memory_interpreter(where), "memory", timeout=settings.timeout)
    try:
        if on_start is not None:
            on_start(worker)
        listing = worker.load(load)
        for benchmark, spec in listing.benchmarks:
            try:
                yield benchmark.name, spec, count(worker, benchmark.name, spec, settings)
            except Exception as error:      # the benchmark fails; the others go on
                yield benchmark.name, spec, error
    finally:
        worker.close()


def collect_tasks(tasks: Sequence[Task], settings: MemorySettings) -> list[MemoryStats]:
    """MemoryStats of each task, in order (the first failure raises)."""
    from benchkit.orchestration.sampling.runs import shipped
    tasks = list(tasks)
    out = []
    with shipped(tasks) as load:
        for (_, _, stats), task in zip(counted(load, settings), tasks):
            if isinstance(stats, Exception):
                raise stats
            out.append(dataclasses.replace(stats, task_spec=task.spec))
    return out
