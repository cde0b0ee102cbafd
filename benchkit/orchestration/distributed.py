"""Instruction counts beyond one machine: ship collections to dask.distributed workers (or any
concurrent.futures.Executor). Each worker runs the same forking collector on its share;
results come back with the worker's environment fingerprint.

Needs the `distributed` extra (`pip install 'benchkit[distributed]'`) for a scheduler address.
"""
from __future__ import annotations

import os
from typing import Any, Sequence

from benchkit.errors import BenchkitError


class DistributedError(BenchkitError, RuntimeError):
    """dask.distributed is missing, the scheduler cannot be reached, or a worker failed."""


def client(address: str):
    """A distributed.Client connected to `address` (e.g. tcp://host:8786)."""
    try:
        from distributed import Client
    except ImportError:
        raise DistributedError("--scheduler needs dask.distributed: pip install "
                               "'benchkit[distributed]'") from None
    try:
        return Client(address, timeout="20s")
    except (OSError, TimeoutError) as error:
        raise DistributedError(f"--scheduler {address}: cannot connect ({error}); start one "
                               "with `dask scheduler` and workers with `dask worker "
                               f"{address}`") from None


def _is_dask(executor: Any) -> bool:
    return type(executor).__module__.startswith("distributed")


def _workers(executor: Any) -> int:
    if _is_dask(executor):
        return max(1, len(executor.scheduler_info().get("workers", {})))
    return max(1, getattr(executor, "_max_workers", None) or os.cpu_count() or 1)


def collect_on_worker(tasks: Sequence[Any], options: dict[str, Any]) -> dict[str, Any]:
    """Runs on a worker: the local forking collector on `tasks`; the stats and who counted."""
    import socket

    from benchkit.system.machine import collect as fingerprint
    from benchkit.engines.callgrind.collect import collect
    stats = collect(tasks, cache_sim=options["cache_sim"], timeout=options["timeout"],
                    layouts=options["layouts"], jobs=options["jobs"])
    environment = fingerprint()
    for per_task in stats:
        for s in per_task:
            s.metadata["host"] = socket.gethostname()
    return {"stats": stats, "environment": environment}


def collect_remote(tasks: Sequence[Any], executor: Any, *, cache_sim: bool = False,
                   timeout: float | None = None, layouts: int = 1, jobs: int = 1,
                   progress: Any = None) -> list:
    """Split `tasks` over the executor's workers (contiguous shares, so snippets needing the
    same modules tend to share a collector) and gather one CallgrindStats per task."""
    if not hasattr(executor, "submit"):
        raise DistributedError(f"executor={executor!r} has no submit(); pass a "
                               "distributed.Client or a concurrent.futures.Executor")
    tasks = list(tasks)
    shares = min(_workers(executor), len(tasks)) or 1
    bounds = [round(i * len(tasks) / shares) for i in range(shares + 1)]
    options = {"cache_sim": cache_sim, "timeout": timeout, "layouts": layouts, "jobs": jobs}
    kwargs = {"pure": False} if _is_dask(executor) else {}
    futures = [executor.submit(collect_on_worker, tasks[a:b], options, **kwargs)
               for a, b in zip(bounds, bounds[1:]) if b > a]
    out = []
    try:
        for future in futures:
            reply = future.result()
            for per_task in reply["stats"]:
                stats = per_task[0]
                stats.metadata["worker_environment"] = reply["environment"]
                out.append(stats)
                if progress is not None:
                    progress.update(1)
    except BenchkitError:
        raise
    except Exception as error:
        raise DistributedError(f"a worker failed: {type(error).__name__}: {error}") from None
    return out
