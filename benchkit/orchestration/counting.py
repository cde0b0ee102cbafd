"""Instruction counts for tasks: through a warm callgrind session when one is active, a fresh
collector otherwise, or split over dask.distributed workers; C++ snippets through their
compiled program.

    with benchkit.callgrind_session() as s:      # collectors stay warm inside the block
        s.collect(timer)                          # or timer.collect_callgrind()
"""
from __future__ import annotations

import contextlib
import contextvars
import os
from typing import Any, Callable, Iterator, Sequence

from benchkit.core.callgrind.callgrind_stats import CallgrindStats
from benchkit.core.callgrind.requests import CallgrindOptions, CountRequest
from benchkit.core.measure.task import Language, Measurable
from benchkit.core.records import validate
from benchkit.engines.callgrind import collect as engine
from benchkit.engines.callgrind.collector import Collector, JobFailure
from benchkit.errors import BenchkitError

_active: contextvars.ContextVar["Session | None"] = contextvars.ContextVar(
    "benchkit_callgrind_session", default=None)


def build_options(where: str, *, cache_sim: bool = False, timeout: float | None = None,
                  retain_out_file: bool = False, layouts: int = 1, jobs: int | None = None,
                  progress: Any = None) -> CallgrindOptions:
    """CallgrindOptions from a caller's arguments (the API's or the command line's), checked
    once here; `where` names the caller in errors. `jobs` defaults to default_jobs()."""
    jobs = default_jobs() if jobs is None else jobs
    return CallgrindOptions(cache_sim=bool(cache_sim),
                            timeout=validate.optional_seconds("timeout", timeout, where=where),
                            retain_out_file=bool(retain_out_file),
                            layouts=validate.integer("layouts", layouts, where=where),
                            jobs=validate.integer("jobs", jobs, where=where),
                            progress=progress)


def default_jobs() -> int:
    """Forks at once when not told: the active session's setting, else the CPUs."""
    session = _active.get()
    if session is not None:
        return session.jobs
    return os.cpu_count() or 1


class Session:
    """A warm collector: servers stay alive between collections, so later collections of
    snippets needing the same modules pay no interpreter start-up and no imports. Its `jobs`
    is the default number of forks at once for collections in it."""

    def __init__(self, cache_sim: bool = False, jobs: int | None = None):
        self._collector = Collector(cache_sim)
        self.jobs = jobs or os.cpu_count() or 1

    @property
    def collector(self) -> Collector:
        """The warm collector (its servers live until the session closes)."""
        return self._collector

    def collect(self, timer: Measurable, number: int = 100, *, repeats: int | None = None,
                collect_baseline: bool = True, layouts: int = 1,
                timeout: float | None = None):
        """collect_callgrind of a Timer (or anything with `.task()`) in this session: one
        CallgrindStats, a tuple of them when `repeats` is given."""
        request = CountRequest(timer.task(), number, repeats or 1, collect_baseline)
        options = CallgrindOptions(cache_sim=self._collector.cache_sim, timeout=timeout,
                                   layouts=layouts, jobs=self.jobs)
        (stats,) = engine.collect([request], options, self._collector)
        return stats if repeats is not None else stats[0]

    def close(self) -> None:
        """Shut the collector's servers down."""
        self._collector.close()


@contextlib.contextmanager
def callgrind_session(cache_sim: bool = False, jobs: int | None = None) -> Iterator[Session]:
    """`with benchkit.callgrind_session() as s:` — collect_callgrind (and s.collect) in the
    block reuse warm collectors; `jobs` forks at once (default: the CPUs). Shut down on exit,
    on Ctrl-C, and when this process dies."""
    session = Session(cache_sim, jobs)
    token = _active.set(session)
    try:
        yield session
    finally:
        _active.reset(token)
        session.close()


def _session_collector(options: CallgrindOptions) -> Collector | None:
    session = _active.get()
    if session is not None and session.collector.serves(options):
        return session.collector
    return None


def collect(requests: Sequence[CountRequest], options: CallgrindOptions, *,
            keep_going: bool = False, on_result: Callable | None = None) -> list:
    """Count Python tasks on this machine, in the active session when it can serve them
    (see engines.callgrind.collect.collect for keep_going and on_result)."""
    return engine.collect(requests, options, _session_collector(options),
                          keep_going=keep_going, on_result=on_result)


def collect_cpp(request: CountRequest, options: CallgrindOptions) -> tuple[CallgrindStats, ...]:
    """Count a C++ task: its compiled library under valgrind (no interpreter involved)."""
    from benchkit.engines.cpp import callgrind_program
    return engine.collect_cpp(request, *callgrind_program(request.task.spec), options)


def collect_many(requests: Sequence[CountRequest], options: CallgrindOptions,
                 executor: Any = None, *, keep_going: bool = False,
                 on_result: Callable | None = None) -> list:
    """One CallgrindStats per request, in order: on this machine (the active session's
    collector, or a fresh one), or split over `executor`'s workers. A request that fails
    raises its error, or with `keep_going` leaves its JobFailure in its place;
    on_result(i, outcome) as each one completes (on this machine)."""
    if any(r.task.language is Language.CPP for r in requests):
        raise BenchkitError("collect_callgrind_many takes Python Timers; collect C++ ones "
                            "with their own collect_callgrind (no interpreter to share).")
    if executor is not None:
        from benchkit.orchestration.distributed import collect_remote
        return collect_remote(requests, executor, options, keep_going=keep_going)

    def first(i: int, outcome) -> None:
        if on_result is not None:
            on_result(i, outcome if isinstance(outcome, JobFailure) else outcome[0])
    outcomes = collect(requests, options, keep_going=keep_going, on_result=first)
    return [o if isinstance(o, JobFailure) else o[0] for o in outcomes]
