"""Timer: torch.utils.benchmark's API over one compiled loop and one measurement loop."""
from __future__ import annotations

import importlib.util
from typing import Any, Callable

from benchkit.errors import BenchkitError
from benchkit.measurement import Measurement
from benchkit.task import Language, TaskSpec
from benchkit.timing import autorange
from benchkit.timing.clock import default_timer
from benchkit.timing.snippet import CompiledLoop, check_syntax, normalize, referenced_names
from benchkit.timing.threads import torch_threads


class UnsupportedLanguageError(BenchkitError, NotImplementedError):
    pass


def _language(language: Language | str) -> Language:
    if language in (Language.PYTHON, "py", "python"):
        return Language.PYTHON
    if language in (Language.CPP, "cpp", "c++"):
        raise UnsupportedLanguageError(
            "language='cpp': benchkit times Python snippets only. Time C++ snippets with "
            "torch.utils.benchmark.Timer(language='cpp'), or wrap the C++ in a Python callable.")
    raise BenchkitError(f"language={language!r} is not a language; use 'python'.")


def _source(snippet: str | Callable[[], object], name: str) -> str:
    if callable(snippet):
        return getattr(snippet, "__qualname__", repr(snippet)) + "()"
    if not isinstance(snippet, str):
        raise BenchkitError(f"{name} must be a string or a zero-argument callable, "
                            f"got {type(snippet).__name__}.")
    return normalize(snippet)


class Timer:
    """Measure the wall time of `stmt` after `setup`, like torch.utils.benchmark.Timer.

    `stmt`/`setup` are strings (dedented; multi-line allowed) or zero-argument callables.
    `globals` is copied; `torch` is available to snippets that mention it without importing.
    `num_threads` is applied with torch.set_num_threads while measuring.
    """

    def __init__(self, stmt: str | Callable[[], object] = "pass",
                 setup: str | Callable[[], object] = "pass", global_setup: str = "",
                 timer: Callable[[], float] = default_timer,
                 globals: dict[str, Any] | None = None, label: str | None = None,
                 sub_label: str | None = None, description: str | None = None,
                 env: str | None = None, num_threads: int = 1,
                 language: Language | str = Language.PYTHON) -> None:
        self._language = _language(language)
        if global_setup:
            raise BenchkitError(f"global_setup is for C++ snippets, got {global_setup!r}; "
                                "move this code into `setup`.")
        if not isinstance(num_threads, int) or num_threads < 1:
            raise BenchkitError(f"num_threads must be a positive integer, got {num_threads!r}.")
        stmt_src, setup_src = _source(stmt, "stmt"), _source(setup, "setup")
        names: set[str] = set()
        for name, snippet, src in (("setup", setup, setup_src), ("stmt", stmt, stmt_src)):
            if isinstance(snippet, str):
                names |= referenced_names(check_syntax(name, src))
        self._user_globals = dict(globals or {})
        # Import torch only for snippets that use it (a pure-Python snippet stays torch-free),
        # and only when timing here: collect_callgrind never needs torch in this process.
        self._inject_torch = ("torch" in names and "torch" not in self._user_globals
                              and importlib.util.find_spec("torch") is not None)
        self._stmt, self._setup, self._timer_fn = stmt, setup, timer
        self._compiled: CompiledLoop | None = None
        self._task_spec = TaskSpec(stmt=stmt_src, setup=setup_src, global_setup=global_setup,
                                   label=label, sub_label=sub_label, description=description,
                                   env=env, num_threads=num_threads)

    @property
    def _loop(self) -> CompiledLoop:
        if self._compiled is None:
            namespace = dict(self._user_globals)
            if self._inject_torch:
                import torch
                namespace["torch"] = torch
            self._compiled = CompiledLoop(self._stmt, self._setup, self._timer_fn, namespace)
        return self._compiled

    @property
    def task_spec(self) -> TaskSpec:
        return self._task_spec

    def _measurement(self, number: int, times: list[float]) -> Measurement:
        return Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def _threads(self):
        return torch_threads(self._task_spec.num_threads)

    def timeit(self, number: int = 1000000) -> Measurement:
        """Run `stmt` `number` times once (after a short warm-up) -> one-sample Measurement."""
        with self._threads():
            self._loop.time_block(max(number // 100, 2))
            times = autorange.measurement_loop(self._loop.time_block, number, lambda t: True)
        return self._measurement(number, times)

    def repeat(self, repeat: int = 5, number: int = 1000000) -> list[float]:
        """`timeit.Timer.repeat`: a list of `repeat` total times of `number` runs each."""
        with self._threads():
            return autorange.measurement_loop(self._loop.time_block, number,
                                              lambda t: len(t) >= repeat)

    def autorange(self, callback: Callable[[int, float], None] | None = None) -> tuple[int, float]:
        """`timeit.Timer.autorange`: (number, total time) for the first block >= 0.2 s."""
        with self._threads():
            return autorange.timeit_autorange(self._loop.time_block, callback)

    def blocked_autorange(self, callback: Callable[[int, float], None] | None = None,
                          min_run_time: float = 0.2) -> Measurement:
        """Pick a block size that amortises timer overhead, then time blocks for at least
        `min_run_time` seconds."""
        with self._threads():
            number = autorange.estimate_block_size(self._loop.time_block, min_run_time)
            times = autorange.measurement_loop(self._loop.time_block, number, lambda t: True,
                                               min_run_time=min_run_time, callback=callback)
        return self._measurement(number, times)

    def adaptive_autorange(self, threshold: float = 0.1, *, min_run_time: float = 0.01,
                           max_run_time: float = 10.0,
                           callback: Callable[[int, float], None] | None = None) -> Measurement:
        """Like blocked_autorange, but keep going until IQR/median < `threshold` or
        `max_run_time` is spent."""
        with self._threads():
            number = autorange.estimate_block_size(self._loop.time_block, min_run_time)
            times = autorange.measurement_loop(
                self._loop.time_block, number, autorange.iqr_below(threshold),
                min_run_time=min_run_time, max_run_time=max_run_time, callback=callback)
        return self._measurement(number, times)

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
        layouts and keeps their per-run counts (the band) in metadata["layouts"]."""
        from benchkit.valgrind.runner import collect
        task = _callgrind_task(self, number, repeats, collect_baseline)
        (stats,) = collect([task], cache_sim=cache_sim, timeout=_timeout(timeout),
                           retain_out_file=retain_out_file, layouts=_layouts(layouts))
        return stats if repeats is not None else stats[0]

    def profile(self, *, wait: int = 1, warmup: int = 1, active: int = 3, repeat: int = 1,
                number: int | None = None, record_shapes: bool = True,
                profile_memory: bool = False, with_stack: bool = False,
                with_flops: bool = True, min_run_time: float = 0.1):
        """Run the snippet under torch.profiler: each profiler step is one block of `number`
        runs of this Timer's own loop (schedule wait/warmup/active/repeat), inside a
        record_function region named from label/sub_label/description. Returns a
        ProfileResult with per-op tables, export_chrome_trace() and the profiler overhead."""
        from benchkit.profile.runner import profile_timer
        return profile_timer(self, wait=wait, warmup=warmup, active=active, repeat=repeat,
                             number=number, record_shapes=record_shapes,
                             profile_memory=profile_memory, with_stack=with_stack,
                             with_flops=with_flops, min_run_time=min_run_time)


def _layouts(layouts: int) -> int:
    if isinstance(layouts, bool) or not isinstance(layouts, int) or layouts < 1:
        raise BenchkitError(f"layouts must be a positive integer, got {layouts!r}.")
    return layouts


def _timeout(timeout: float | None) -> float | None:
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(
            timeout, (int, float)) or not 0 < timeout < float("inf")):
        raise BenchkitError(f"timeout must be a positive number of seconds or None, got "
                            f"{timeout!r}.")
    return timeout


def _callgrind_task(timer: Timer, number: int, repeats: int | None, collect_baseline: bool):
    from benchkit.valgrind.job import CallgrindTask
    if not isinstance(number, int) or number < 1:
        raise BenchkitError(f"number must be a positive integer, got {number!r}.")
    if repeats is not None and (not isinstance(repeats, int) or repeats < 1):
        raise BenchkitError(f"repeats must be a positive integer or None, got {repeats!r}.")
    spec = timer._task_spec
    stmt = spec.stmt if isinstance(timer._stmt, str) else timer._stmt
    setup = spec.setup if isinstance(timer._setup, str) else timer._setup
    return CallgrindTask(task_spec=spec, stmt=stmt, setup=setup,
                         globals=timer._user_globals, number=number, repeats=repeats or 1,
                         collect_baseline=collect_baseline)


def collect_callgrind_many(timers, number: int = 100, *, collect_baseline: bool = True,
                           retain_out_file: bool = False, cache_sim: bool = False,
                           timeout: float | None = None, layouts: int = 1):
    """collect_callgrind for many Timers in one valgrind process per layout (start-up and
    imports paid once). Returns one CallgrindStats per timer, in order."""
    from benchkit.valgrind.runner import collect
    timers = list(timers)
    tasks = [_callgrind_task(t, number, None, collect_baseline) for t in timers]
    return [s[0] for s in collect(tasks, cache_sim=cache_sim, timeout=_timeout(timeout),
                                  retain_out_file=retain_out_file, layouts=_layouts(layouts))]




def measure_processes(timers, processes: int = 10, min_run_time: float = 0.1, *,
                      seed: int | None = None) -> list[Measurement]:
    """Measure many Timers across `processes` fresh worker processes, each process timing
    every Timer once in a shuffled order (so drift spreads evenly). One Measurement per
    Timer, in order, each with per-process structure."""
    from benchkit.sampling.schedule import Settings, check_settings, sample_timers
    timers = list(timers)
    if not timers or not all(isinstance(t, Timer) for t in timers):
        raise BenchkitError("measure_processes needs a non-empty list of benchkit.Timer")
    settings = Settings(processes=processes, min_run_time=min_run_time, seed=seed)
    check_settings(settings)
    return sample_timers(timers, settings)
