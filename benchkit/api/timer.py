"""Timer: torch.utils.benchmark's API over benchkit's engines. A Timer validates its
arguments once, holds a Task (`timer.task()`), and hands that task to the engine each method
needs: the wall-time loop here, worker processes, the callgrind collector, torch.profiler."""
from __future__ import annotations

import dataclasses
import timeit as _timeit
from typing import Any, Callable, Sequence

from benchkit.core.callgrind.requests import CountRequest
from benchkit.core.measure.measurement import Measurement
from benchkit.core.measure.snippets import check_syntax, describe_callable, normalize
from benchkit.core.measure.task import Language, Task, TaskSpec
from benchkit.core.records import validate
from benchkit.engines.loops import loop_for
from benchkit.engines.wall import autorange
from benchkit.engines.wall.chunks import CHUNK_TIME, measure_chunks
from benchkit.engines.wall.clock import default_timer
from benchkit.engines.wall.loop import TimeitClassLoop
from benchkit.engines.wall.threads import torch_threads
from benchkit.errors import BenchkitError, InvalidArgumentError
from benchkit.orchestration import counting


def _python_source(snippet: Any, name: str) -> str:
    if callable(snippet):
        return describe_callable(snippet)
    if not isinstance(snippet, str):
        raise InvalidArgumentError(name, snippet, "a string or a zero-argument callable",
                                   message=f"{name} must be a string or a zero-argument "
                                           f"callable, got {type(snippet).__name__}.")
    return normalize(snippet)


def _build_task(stmt, setup, global_setup, timer, globals, label, sub_label, description,
                env, num_threads, language) -> Task:
    """Check every argument once and build the Task (the boundary of the Python API)."""
    language = Language.parse(language)
    validate.integer("num_threads", num_threads, where="Timer")
    if timer is not default_timer:
        validate.clock(timer)
    validate.optional_dict("globals", globals)
    for field, value in (("label", label), ("sub_label", sub_label),
                         ("description", description), ("env", env)):
        validate.optional_text(field, value)
    validate.text("global_setup", global_setup)
    if language is Language.CPP:
        for name, snippet in (("stmt", stmt), ("setup", setup)):
            if not isinstance(snippet, str):
                raise InvalidArgumentError(name, snippet, "a string", message=(
                    f"a C++ {name} must be a string, got {type(snippet).__name__}."))
        if globals:
            raise InvalidArgumentError("globals", globals, "none", message=(
                "C++ snippets take no globals; create the values in `setup` (or "
                "`global_setup`)."))
        setup = "" if setup == "pass" else setup
        stmt = stmt_src = normalize(stmt)
        setup = setup_src = normalize(setup)
        global_setup = normalize(global_setup)
    else:
        if global_setup:
            raise InvalidArgumentError("global_setup", global_setup, "''", message=(
                f"global_setup is for C++ snippets, got {global_setup!r}; move this code "
                "into `setup`."))
        stmt_src, setup_src = _python_source(stmt, "stmt"), _python_source(setup, "setup")
        for name, snippet, src in (("setup", setup, setup_src), ("stmt", stmt, stmt_src)):
            if isinstance(snippet, str):
                check_syntax(name, src)
        stmt = stmt_src if isinstance(stmt, str) else stmt
        setup = setup_src if isinstance(setup, str) else setup
    spec = TaskSpec(stmt=stmt_src, setup=setup_src, global_setup=global_setup, label=label,
                    sub_label=sub_label, description=description, env=env,
                    num_threads=num_threads)
    return Task(spec, stmt, setup, dict(globals or {}), language,
                None if timer is default_timer else timer)


class Timer:
    """Measure the wall time of `stmt` after `setup`, like torch.utils.benchmark.Timer.

    `stmt`/`setup` are strings (dedented; multi-line allowed) or zero-argument callables.
    `globals` is copied; `torch` is available to snippets that mention it without importing.
    `num_threads` is applied with torch.set_num_threads while measuring.
    `language="cpp"` times C++ snippets (`global_setup` for includes), compiled against the
    installed torch with the system compiler and cached by content.
    `elements` / `bytes` state the work of one run: Measurements and Compare then show the
    throughput (elements/s, bytes/s) and CallgrindStats the instructions per element/byte.

    As in torch.utils.benchmark, a subclass may set `_timer_cls` to a timeit.Timer-like class
    (`__init__(stmt, setup, timer, globals)`, `timeit(number)`), e.g. a deterministic fake.
    """

    _timer_cls: type = _timeit.Timer

    def __init__(self, stmt: str | Callable[[], object] = "pass",
                 setup: str | Callable[[], object] = "pass", global_setup: str = "",
                 timer: Callable[[], float] = default_timer,
                 globals: dict[str, Any] | None = None, label: str | None = None,
                 sub_label: str | None = None, description: str | None = None,
                 env: str | None = None, num_threads: int = 1,
                 language: Language | str = Language.PYTHON, *, elements: int | None = None,
                 bytes: int | None = None) -> None:
        self._task = _build_task(stmt, setup, global_setup, timer, globals, label, sub_label,
                                 description, env, num_threads, language)
        for name, value in (("elements", elements), ("bytes", bytes)):
            if value is not None:
                validate.integer(name, value, where="Timer")
        if elements is not None or bytes is not None:
            self._task = dataclasses.replace(self._task, spec=dataclasses.replace(
                self._task.spec, elements=elements, bytes=bytes))
        self._compiled = None

    @classmethod
    def from_task(cls, task: Task) -> "Timer":
        """A Timer measuring `task` (e.g. one that a suite yielded)."""
        timer = cls.__new__(cls)
        timer._task = task
        timer._compiled = None
        return timer

    def task(self) -> Task:
        """What this Timer measures, for every engine: spec, code, globals, language."""
        return self._task

    @property
    def task_spec(self) -> TaskSpec:
        """The TaskSpec shown and stored with every result."""
        return self._task.spec

    @property
    def _loop(self):
        if self._compiled is None:
            task = self._task
            if type(self)._timer_cls is not _timeit.Timer:
                from benchkit.engines.loops import python_namespace
                namespace = python_namespace(task)
                self._compiled = TimeitClassLoop(self._timer_cls(
                    stmt=task.spec.stmt, setup=task.spec.setup,
                    timer=task.clock or default_timer, globals=namespace), namespace)
            else:
                self._compiled = loop_for(task, default_timer)
        return self._compiled

    def _measurement(self, number: int, times: list[float]) -> Measurement:
        return Measurement(number_per_run=number, raw_times=times, task_spec=self.task_spec)

    def _threads(self):
        return torch_threads(self.task_spec.num_threads)

    def _time_block(self, number: int) -> float:
        # As torch's: no real block takes under 1 ns (and nothing divides by zero).
        return max(self._loop.time_block(number), 1e-9)

    def timeit(self, number: int = 1000000) -> Measurement:
        """Run `stmt` `number` times once (after a short warm-up) -> one-sample Measurement."""
        validate.integer("number", number, where="Timer.timeit")
        with self._threads():
            self._time_block(max(number // 100, 2))
            times = autorange.measurement_loop(self._time_block, number, lambda t: True)
        return self._measurement(number, times)

    def repeat(self, repeat: int = 5, number: int = 1000000) -> list[float]:
        """`timeit.Timer.repeat`: a list of `repeat` total times of `number` runs each."""
        validate.integer("repeat", repeat, where="Timer.repeat")
        validate.integer("number", number, where="Timer.repeat")
        with self._threads():
            return autorange.measurement_loop(self._time_block, number,
                                              lambda t: len(t) >= repeat)

    def autorange(self, callback: Callable[[int, float], None] | None = None) -> tuple[int, float]:
        """`timeit.Timer.autorange`: (number, total time) for the first block >= 0.2 s."""
        with self._threads():
            return autorange.timeit_autorange(self._time_block, callback)

    def blocked_autorange(self, callback: Callable[[int, float], None] | None = None,
                          min_run_time: float = 0.2) -> Measurement:
        """Pick a block size that amortises timer overhead, then time blocks for at least
        `min_run_time` seconds."""
        validate.seconds("min_run_time", min_run_time, where="Timer.blocked_autorange")
        with self._threads():
            number = autorange.estimate_block_size(self._time_block, min_run_time)
            times = autorange.measurement_loop(self._time_block, number, lambda t: True,
                                               min_run_time=min_run_time, callback=callback)
        return self._measurement(number, times)

    def adaptive_autorange(self, threshold: float = 0.1, *, min_run_time: float = 0.01,
                           max_run_time: float = 10.0,
                           callback: Callable[[int, float], None] | None = None) -> Measurement:
        """Like blocked_autorange, but keep going until IQR/median < `threshold` or
        `max_run_time` is spent. The block size is estimated for max(min_run_time, 0.05 s):
        torch's fixed 0.05 s by default, and a longer min_run_time is honoured."""
        where = "Timer.adaptive_autorange"
        validate.non_negative("threshold", threshold, where=where)
        validate.seconds("min_run_time", min_run_time, where=where)
        validate.seconds("max_run_time", max_run_time, where=where)
        validate.at_least("max_run_time", max_run_time, "min_run_time", min_run_time,
                          where=where)
        with self._threads():
            number = autorange.estimate_block_size(
                self._time_block, max(min_run_time, autorange.ADAPTIVE_ESTIMATE_TIME))
            times = autorange.measurement_loop(
                self._time_block, number, autorange.iqr_below(threshold),
                min_run_time=min_run_time, max_run_time=max_run_time, callback=callback)
        return self._measurement(number, times)

    def chunked_autorange(self, min_run_time: float = 0.2) -> Measurement:
        """blocked_autorange's block size, then blocks in chunks of ~25 ms behind a speed
        probe for `min_run_time` seconds, in this process: one process says nothing about
        process-to-process variance, but `compare` can keep only the chunks timed at full
        machine speed (the pytest plugin measures this way)."""
        validate.seconds("min_run_time", min_run_time, where="Timer.chunked_autorange")
        with self._threads():
            number = autorange.estimate_block_size(self._time_block, min_run_time)
            chunks = measure_chunks(self._time_block, number, min_run_time, CHUNK_TIME)
        from benchkit.core.measure.measurement import ProcessSample
        times, sample = ProcessSample.from_chunks(chunks)
        return Measurement(number, times, self.task_spec, processes=[sample])

    def multiprocess_autorange(self, processes: int = 10, min_run_time: float = 0.1, *,
                               seed: int | None = None) -> Measurement:
        """Like blocked_autorange, but measured in `processes` fresh worker processes
        (`min_run_time` seconds each, in chunks behind a speed probe): the Measurement keeps
        the per-process structure that `benchkit compare` judges with. Globals travel as for
        collect_callgrind (pickle, torch.jit, modules by name)."""
        return measure_processes([self], processes, min_run_time, seed=seed)[0]

    def collect_callgrind(self, number: int = 100, *, repeats: int | None = None,
                          collect_baseline: bool = True, retain_out_file: bool = False,
                          cache_sim: bool = False, timeout: float | None = None,
                          layouts: int = 1):
        """Count instructions of `number` runs of stmt under Callgrind -> CallgrindStats
        (a tuple of them when `repeats` is given). Deterministic: the same snippet gives the
        same totals in every fresh process. `cache_sim=True` adds cache misses and estimated
        cycles (fixed cache geometry). `layouts=K` also collects under K-1 other memory
        layouts (in parallel, up to the CPUs) and keeps their per-run counts (the band) in
        metadata["layouts"]."""
        request = _count_request(self, number, repeats, collect_baseline)
        options = counting.build_options("collect_callgrind", cache_sim=cache_sim,
                                         timeout=timeout, retain_out_file=retain_out_file,
                                         layouts=layouts)
        if self._task.language is Language.CPP:
            stats = counting.collect_cpp(request, options)
        else:
            (stats,) = counting.collect([request], options)
        return stats if repeats is not None else stats[0]

    def collect_memory(self, number: int = 100, *, warmup: int = 10, sites: bool = False):
        """Count the memory of `number` runs of stmt -> MemoryStats: allocations, frees, bytes
        requested and retained per run, and the peak above setup; split into Python's
        allocator and the native heap (malloc, operator new: NumPy's and torch's CPU
        buffers). Counted by a counting allocator in a worker process after `warmup` runs,
        minus an empty block: exact, and the same in every collection. Globals travel as for
        collect_callgrind. With `sites`, the top allocation sites per run too (Python lines
        and native functions, from memray's stacks over the same blocks: needs memray)."""
        (stats,) = collect_memory_many([self], number, warmup=warmup, sites=sites)
        return stats

    def profile(self, *, wait: int = 1, warmup: int = 1, active: int = 3, repeat: int = 1,
                number: int | None = None, record_shapes: bool = True,
                profile_memory: bool = False, with_stack: bool = False,
                with_flops: bool = True, min_run_time: float = 0.1):
        """Run the snippet under torch.profiler: each profiler step is one block of `number`
        runs of this Timer's own loop (schedule wait/warmup/active/repeat), inside a
        record_function region named from label/sub_label/description. Returns a
        ProfileResult with per-op tables, export_chrome_trace() and the profiler overhead."""
        from benchkit.engines.profiler.runner import ProfileSchedule, profile_task
        schedule = ProfileSchedule(wait, warmup, active, repeat)
        return profile_task(self._task,
                            lambda: self.blocked_autorange(min_run_time=min_run_time).median,
                            self._loop, schedule, number=number, record_shapes=record_shapes,
                            profile_memory=profile_memory, with_stack=with_stack,
                            with_flops=with_flops)


def _count_request(timer: Timer, number: int, repeats: int | None,
                   collect_baseline: bool) -> CountRequest:
    validate.integer("number", number, where="collect_callgrind")
    if repeats is not None:
        validate.integer("repeats", repeats, where="collect_callgrind")
    return CountRequest(timer.task(), number, repeats or 1, collect_baseline)


def collect_callgrind_many(timers: Sequence[Timer], number: int = 100, *,
                           collect_baseline: bool = True, retain_out_file: bool = False,
                           cache_sim: bool = False, timeout: float | None = None,
                           layouts: int = 1, jobs: int | None = None, executor: Any = None,
                           progress: Any = None):
    """collect_callgrind for many Timers through the forking collector: one valgrind process
    per group of snippets needing the same modules (start-up and imports paid once), each
    snippet in a fork of it, `jobs` at a time (default: the number of CPUs). Counts do not
    depend on `jobs`, on the other snippets or on their order. `executor` (a
    distributed.Client or a concurrent.futures.Executor) runs the collection on its workers
    instead. Returns one CallgrindStats per timer, in order."""
    requests = [_count_request(t, number, None, collect_baseline) for t in timers]
    options = counting.build_options("collect_callgrind_many", cache_sim=cache_sim,
                                     timeout=timeout, retain_out_file=retain_out_file,
                                     layouts=layouts, jobs=jobs, progress=progress)
    return counting.collect_many(requests, options, executor)


def collect_memory_many(timers: Sequence[Timer], number: int = 100, *,
                        warmup: int = 10, sites: bool = False) -> list:
    """Timer.collect_memory of many Timers in one worker process: a MemoryStats per Timer,
    in order."""
    from benchkit.orchestration.memory import MemorySettings, collect_tasks
    timers = list(timers)
    if not timers or not all(isinstance(t, Timer) for t in timers):
        raise BenchkitError("collect_memory_many needs a non-empty list of benchkit.Timer")
    return collect_tasks([t.task() for t in timers],
                         MemorySettings(number, warmup, sites=sites))


def measure_processes(timers: Sequence[Timer], processes: int = 10, min_run_time: float = 0.1,
                      *, seed: int | None = None) -> list[Measurement]:
    """Measure many Timers across `processes` fresh worker processes, each process timing
    every Timer once in a shuffled order (so drift spreads evenly). One Measurement per
    Timer, in order, each with per-process structure."""
    from benchkit.orchestration.sampling.runs import Settings, sample_tasks
    timers = list(timers)
    if not timers or not all(isinstance(t, Timer) for t in timers):
        raise BenchkitError("measure_processes needs a non-empty list of benchkit.Timer")
    settings = Settings(processes=processes, min_run_time=min_run_time, seed=seed)
    return sample_tasks([t.task() for t in timers], settings)
