"""Instruction counts beyond one machine: ship collections to dask.distributed workers (or any
concurrent.futures.Executor). Each worker runs the same forking collector on its share;
results come back with the worker's environment fingerprint.

Needs the `distributed` extra (`pip install 'benchkit-perf[distributed]'`) for a scheduler address.
"""
from __future__ import annotations

import dataclasses
import os
from typing import Any, Sequence

from benchkit.core.callgrind.requests import CallgrindOptions, CountRequest
from benchkit.engines import transfer
from benchkit.engines.callgrind.collector import JobFailure
from benchkit.errors import BenchkitError, DistributedError


def client(address: str):
    """A distributed.Client connected to `address` (e.g. tcp://host:8786)."""
    try:
        from distributed import Client
    except ImportError:
        raise DistributedError("--scheduler needs dask.distributed: pip install "
                               "'benchkit-perf[distributed]'") from None
    try:
        _refuses(address)
        return Client(address, timeout="20s")
    except (OSError, TimeoutError, ValueError) as error:
        raise DistributedError(f"--scheduler {address}: cannot connect ({error}); start one "
                               "with `dask scheduler` and workers with `dask worker "
                               f"{address}`") from None


def _refuses(address: str) -> None:
    """Raise OSError at once where nothing listens at a tcp address (dask's client would
    retry for its whole timeout)."""
    import socket
    from distributed.comm import parse_address, parse_host_port
    scheme, location = parse_address(address)      # "host:port" means tcp, as for dask
    if scheme != "tcp":
        return
    with socket.create_connection(parse_host_port(location), timeout=5):
        pass


def _is_dask(executor: Any) -> bool:
    return type(executor).__module__.startswith("distributed")


def _workers(executor: Any) -> int:
    if _is_dask(executor):
        return max(1, len(executor.scheduler_info().get("workers", {})))
    return max(1, getattr(executor, "_max_workers", None) or os.cpu_count() or 1)


def pack(requests: Sequence[CountRequest]) -> tuple[dict[str, dict[str, str]], bytes]:
    """Requests as bytes for a worker, with the suite modules they refer to: the worker
    loads those before unpickling (a suite's functions travel as they do to any child)."""
    try:
        import cloudpickle as pickler
    except ImportError:   # without dask.distributed's cloudpickle, plain pickle
        import pickle as pickler
    data = pickler.dumps(list(requests))
    return transfer.suite_modules(data), data


def unpack(suite_modules: dict[str, dict[str, str]], data: bytes) -> list[CountRequest]:
    """The worker's side of pack()."""
    import pickle
    transfer.ensure_suite_modules(suite_modules)
    return pickle.loads(data)


def collect_on_worker(packed: tuple[dict, bytes], options: CallgrindOptions,
                      keep_going: bool = False) -> dict[str, Any]:
    """Runs on a worker: the local forking collector on the packed requests; the stats (or,
    with keep_going, the JobFailures) and who counted them."""
    import socket

    from benchkit.engines.callgrind.collect import collect
    from benchkit.engines.callgrind.collector import JobFailure
    from benchkit.system import machine
    outcomes = collect(unpack(*packed), options, keep_going=keep_going)
    environment = machine.collect()
    for outcome in outcomes:
        for s in () if isinstance(outcome, JobFailure) else outcome:
            s.metadata["host"] = socket.gethostname()
    return {"stats": outcomes, "environment": environment}


def collect_remote(requests: Sequence[CountRequest], executor: Any,
                   options: CallgrindOptions, keep_going: bool = False) -> list:
    """Split `requests` over the executor's workers (contiguous shares, so snippets needing
    the same modules tend to share a collector) and gather one CallgrindStats per request;
    `options.progress` steps once per request."""
    if not hasattr(executor, "submit"):
        raise DistributedError(f"executor={executor!r} has no submit(); pass a "
                               "distributed.Client or a concurrent.futures.Executor")
    requests = list(requests)
    shares = min(_workers(executor), len(requests)) or 1
    bounds = [round(i * len(requests) / shares) for i in range(shares + 1)]
    shipped = dataclasses.replace(options, progress=None)   # a progress bar stays here
    kwargs = {"pure": False} if _is_dask(executor) else {}
    futures = [executor.submit(collect_on_worker, pack(requests[a:b]), shipped, keep_going,
                               **kwargs)
               for a, b in zip(bounds, bounds[1:]) if b > a]
    out = []
    try:
        for future in futures:
            reply = future.result()
            for outcome in reply["stats"]:
                if isinstance(outcome, JobFailure):
                    out.append(outcome)
                else:
                    outcome[0].metadata["worker_environment"] = reply["environment"]
                    out.append(outcome[0])
                if options.progress is not None:
                    options.progress.update(1)
    except BenchkitError:
        raise
    except Exception as error:
        raise DistributedError(f"a worker failed: {type(error).__name__}: {error}") from None
    return out
