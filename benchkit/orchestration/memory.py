"""Memory per run: snippets or suite benchmarks counted in a worker process that has the
counting allocator preloaded (benchkit.engines.memory)."""
from __future__ import annotations

import dataclasses
import platform
from typing import Iterator, Sequence

from benchkit.core.records import validate
from benchkit.core.measure.memory import AllocationSite, BlockCounts, MemoryStats
from benchkit.core.records.records import Benchmark, Failure, FailureKind, Phase
from benchkit.core.measure.task import Task, TaskSpec
from benchkit.errors import WorkerError
from benchkit.orchestration.sampling.workers import (Interpreter, Load, WorkerProcess,
                                                     start_process)

MECHANISM = "benchkit counting allocator (malloc family + Python allocator domains)"


@dataclasses.dataclass(frozen=True)
class MemorySettings:
    """Runs counted per benchmark (`number`), untimed runs before them (`warmup`), and
    whether to find the top allocation sites (`sites`, with memray)."""

    number: int = 100
    warmup: int = 10
    timeout: float = 600.0
    sites: bool = False

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
                           warmup=settings.warmup, sites=settings.sites)
    metadata = {"mechanism": MECHANISM, "warmup": settings.warmup,
                "python": platform.python_version()}
    if reply.get("left_running"):
        metadata["left_running"] = (f"{reply['left_running']} still running after it; its "
                                    "worker was replaced so no other benchmark counts them")
    return MemoryStats(spec, settings.number,
                       *(BlockCounts.from_dict(reply[k]) for k in ("long", "short", "empty")),
                       metadata,
                       tuple(AllocationSite.from_dict(s) for s in reply.get("sites", ())))


def counted(load: Load, settings: MemorySettings, where: Interpreter = Interpreter()
            ) -> Iterator[tuple[Benchmark, MemoryStats | Failure]]:
    """(benchmark, its MemoryStats or its Failure) for every benchmark `load` holds, in
    order, from one memory worker (a schedule's Slot: restarted after a benchmark crashes it
    or times out, so the failure is that benchmark's alone)."""
    from benchkit.orchestration.sampling.runs import Settings, Slot
    slot = Slot(start_process, memory_interpreter(where), "memory worker", None, None,
                Settings(timeout=settings.timeout), load)
    try:
        slot.worker()
        for benchmark, spec in slot.listing.benchmarks:
            spec = spec or TaskSpec(benchmark.name, "pass")
            outcome = slot.run(benchmark, Phase.MEMORY,
                               lambda worker: count(worker, benchmark.name, spec, settings))
            if isinstance(outcome, MemoryStats):
                outcome.metadata.update(benchmark.metadata())
                if "left_running" in outcome.metadata:
                    # what it left running would allocate into the next benchmark's counts
                    slot.close()
            yield benchmark, outcome
    finally:
        slot.close()


def collect_tasks(tasks: Sequence[Task], settings: MemorySettings) -> list[MemoryStats]:
    """MemoryStats of each task, in order (the first failure raises)."""
    from benchkit.orchestration.sampling.runs import shipped
    tasks = list(tasks)
    out = []
    with shipped(tasks) as load:
        for (_, stats), task in zip(counted(load, settings), tasks):
            if isinstance(stats, Failure):
                raise WorkerError(stats.error, timed_out=stats.kind is FailureKind.TIMED_OUT)
            # Shipped tasks are named by position: that is no benchmark name to keep.
            metadata = {k: v for k, v in stats.metadata.items() if k not in ("benchmark",
                                                                            "gates")}
            out.append(dataclasses.replace(stats, task_spec=task.spec, metadata=metadata))
    return out
