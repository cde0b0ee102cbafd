"""The `benchkit` pytest fixture (loaded only by tests that use it).

Call styles, as pytest-benchmark users know them:

    result = benchkit(fn, *args, **kwargs)          # times fn(*args, **kwargs), returns its result
    m = benchkit("x * y", setup="...", **timer_kw)  # a string snippet: returns the Measurement
    result = benchkit.pedantic(fn, args=(), kwargs={}, setup=None, teardown=None,
                               rounds=10, warmup_rounds=1, iterations=100)

    @benchkit                                       # decorator form: times the function
    def result():
        return fn(3)

`benchkit.measurement` holds the Measurement; `benchkit.extra_info` (a dict whose values must
be storable in a results file: numbers, strings, lists and dicts of them; numpy scalars are
stored as numbers, NaN and infinities as the strings "NaN", "Infinity", "-Infinity"),
`benchkit.group` and `benchkit.name` are stored with it.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
import statistics
from typing import Any, Callable

from benchkit.core.metrics.gates import Gate
from benchkit.core.records.records import Benchmark
from benchkit.core.records.schema import storable
from benchkit.errors import (ArgumentCombinationError, BenchkitError, DependencyMissingError,
                             FixtureAlreadyUsed, GlobalNotTransferableError,
                             InvalidArgumentError, SchemaError)


class ExtraInfo(dict):
    """pytest-benchmark's `extra_info` dict, checked as values are assigned: a value a results
    file cannot hold is refused at once, naming the test and the key (not at the end of the
    session, where it would cost every test's results)."""

    def __init__(self, test: str):
        super().__init__()
        self._test = test

    def __setitem__(self, key: Any, value: Any) -> None:
        try:
            stored = storable(value, f"extra_info[{key!r}]")
        except SchemaError as error:
            raise BenchkitError(f"{self._test}: {error}") from None
        super().__setitem__(str(key), stored)

    def update(self, *args: Any, **kwargs: Any) -> None:
        """dict.update, each value checked."""
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def setdefault(self, key: Any, default: Any = None) -> Any:
        """dict.setdefault, the value checked."""
        if key not in self:
            self[key] = default
        return self[key]


@dataclasses.dataclass(frozen=True)
class RoundStats:
    """pytest-benchmark's statistics of one benchmark, in seconds per call, from the
    Measurement's blocks (`benchkit.stats.stats.min`, ...)."""

    min: float
    max: float
    mean: float
    stddev: float
    median: float
    q1: float
    q3: float
    iqr: float
    rounds: int
    iterations: int
    total: float
    ops: float

    @classmethod
    def of(cls, measurement) -> "RoundStats":
        """The statistics of `measurement`'s per-call times."""
        from benchkit.core.measure.stats import summarize
        times = measurement.times
        quartiles = summarize(times)
        stddev = statistics.stdev(times) if len(times) > 1 else 0.0
        return cls(min(times), max(times), quartiles.mean, stddev, quartiles.median,
                   quartiles.p25, quartiles.p75, quartiles.p75 - quartiles.p25, len(times),
                   measurement.number_per_run, sum(measurement.raw_times),
                   1.0 / quartiles.mean if quartiles.mean > 0 else 0.0)


@dataclasses.dataclass(frozen=True)
class BenchmarkStats:
    """What pytest-benchmark's `fixture.stats` is: the statistics under `.stats`, beside
    the benchmark's name and group."""

    name: str
    group: str | None
    stats: RoundStats


class BenchkitFixture:
    """pytest-benchmark's `benchmark` fixture, measured benchkit's way (module docstring)."""

    def __init__(self, node_id: str, options: Any, record: Callable,
                 marker: dict[str, Any]):
        self.name = node_id
        self.group: str | None = marker.get("group")
        self.extra_info: dict[str, Any] = ExtraInfo(node_id)
        self.measurement = None
        self._options = options
        self._record = record
        self._gates = marker.get("fail_on")
        self._min_run_time = marker.get("min_run_time", options.min_run_time)
        self._cprofile = bool(marker.get("cprofile"))
        self.cprofile_stats = None      # pstats.Stats of one profiled call (cprofile=True)
        self._used = False
        self._undo: list[Callable[[], Any]] = []     # weavings to roll back after the test

    @property
    def stats(self) -> BenchmarkStats | None:
        """pytest-benchmark's `stats` of what this test measured (None before, or when
        measuring is disabled)."""
        if self.measurement is None:
            return None
        return BenchmarkStats(self.name, self.group, RoundStats.of(self.measurement))

    @property
    def disabled(self) -> bool:
        """Whether measuring is off (--benchkit-disable): the target runs once, untimed."""
        return bool(self._options.disable)

    @property
    def enabled(self) -> bool:
        """The opposite of `disabled`, as pytest-benchmark's fixture has it."""
        return not self.disabled

    # -- helpers ---------------------------------------------------------------------------
    def _claim(self) -> None:
        if self._used:
            raise FixtureAlreadyUsed(f"{self.name}: the benchkit fixture measures one thing per "
                                     "test; parametrize the test to measure several")
        self._used = True

    def benchmark(self) -> Benchmark:
        """This test's benchmark: its node id, the marker's gates, group and extra_info."""
        gates = [self._gates] if isinstance(self._gates, str) else list(self._gates or [])
        return Benchmark(self.name, tuple(Gate.parse(g) for g in gates), group=self.group,
                         extra_info=dict(self.extra_info))

    def _finish(self, measurement, timer: Any) -> None:
        measurement.metadata = {**(measurement.metadata or {}), **self.benchmark().metadata()}
        self.measurement = measurement
        self._record(self, measurement, timer)

    def _measure(self, timer):
        processes = self._options.processes
        if processes > 1:
            try:
                return timer.multiprocess_autorange(processes=processes,
                                                    min_run_time=self._min_run_time)
            except GlobalNotTransferableError:
                pass    # a local callable or global: measured in this process instead
        return timer.chunked_autorange(min_run_time=self._min_run_time)

    def _profile(self, target: Callable, args: tuple, kwargs: dict, calls: int = 1,
                 teardown: Callable | None = None) -> None:
        """With the marker's `cprofile=True`: `calls` more calls under cProfile, after the
        measurement (as pytest-benchmark makes them), kept as `cprofile_stats`."""
        if not self._cprofile:
            return
        import cProfile
        import pstats
        profile = cProfile.Profile()
        for _ in range(calls):
            profile.runcall(target, *args, **kwargs)
        if teardown is not None:
            teardown(*args, **kwargs)
        self.cprofile_stats = pstats.Stats(profile)

    def _label(self) -> str:
        return self.group or self.name

    def _sub_label(self, shown: str | None) -> str | None:
        """What tells this test's row apart in its group: a parametrized test's id is added,
        so `test_fill[10]` and `test_fill[20]` are two rows, not replicates of one."""
        start = self.name.find("[")
        params = self.name[start:] if start > 0 and self.name.endswith("]") else ""
        if not params:
            return shown
        return f"{shown} {params}" if shown else params

    # -- call styles -----------------------------------------------------------------------
    def __call__(self, target: Any, *args: Any, **kwargs: Any) -> Any:
        """Time `target(*args, **kwargs)` and return its result; or, for a string snippet,
        time it (kwargs: setup, globals, num_threads, ... and min_run_time) and return the
        Measurement."""
        from benchkit import Timer
        if isinstance(target, str):
            self._claim()
            min_run_time = kwargs.pop("min_run_time", None)
            if min_run_time is not None:
                self._min_run_time = min_run_time
            kwargs.setdefault("label", self._label())
            kwargs["sub_label"] = self._sub_label(kwargs.get("sub_label"))
            timer = Timer(target, *args, **kwargs)
            if self._options.disable:
                timer.timeit(1)
                return None
            measurement = self._measure(timer)
            self._finish(measurement, timer)
            return measurement
        if not callable(target):
            raise BenchkitError(f"{self.name}: benchkit(...) takes a callable or a string "
                                f"snippet, got {type(target).__name__}")
        self._claim()
        result = target(*args, **kwargs)          # once: the result, and a warm-up
        if self._options.disable:
            return result
        call = functools.partial(target, *args, **kwargs) if args or kwargs else target
        timer = Timer(call, label=self._label(), sub_label=self._sub_label(_describe(target)))
        self._finish(self._measure(timer), timer)
        self._profile(target, args, kwargs)
        return result

    def weave(self, target: Any, **kwargs: Any) -> None:
        """pytest-benchmark's `weave` (alias `patch`): patch `target` (a function, a method, a
        class or a dotted name, whatever `aspectlib.weave` takes, with its keyword arguments)
        so that the test's call of it is measured like `benchkit(target, ...)` and returns its
        result; undone when the test ends. Needs aspectlib (`pip install aspectlib`)."""
        try:
            import aspectlib
        except ImportError:
            raise DependencyMissingError(
                f"{self.name}: benchkit.weave needs aspectlib; pip install aspectlib") from None

        def measured(function: Callable) -> Callable:
            @functools.wraps(function)
            def call(*args: Any, **kw: Any) -> Any:
                return self(function, *args, **kw)
            return call

        self._undo.append(aspectlib.weave(target, measured, **kwargs).rollback)

    patch = weave

    def _teardown(self) -> None:
        """After the test: roll back what `weave` patched, newest first."""
        while self._undo:
            self._undo.pop()()

    def pedantic(self, target: Callable, args: tuple = (), kwargs: dict | None = None,
                 setup: Callable | None = None, teardown: Callable | None = None,
                 rounds: int = 1, warmup_rounds: int = 0, iterations: int = 1) -> Any:
        """pytest-benchmark's pedantic mode: `warmup_rounds` untimed rounds, then `rounds`
        timed rounds of `iterations` calls each. `setup()` runs before every round, untimed;
        if it returns `(args, kwargs)` those are the call's arguments (then `args`/`kwargs`
        must not be given: TypeError, and `iterations` must be 1: ValueError). `teardown`
        gets the round's arguments. With `iterations > 1` one more call, untimed, gives
        the result returned."""
        from benchkit.core.records import validate
        from benchkit.core.measure.measurement import Measurement
        from benchkit.core.measure.task import TaskSpec
        from benchkit.engines.wall.clock import default_timer
        self._claim()
        validate.integer("rounds", rounds, where="benchkit.pedantic")
        validate.integer("iterations", iterations, where="benchkit.pedantic")
        validate.integer("warmup_rounds", warmup_rounds, minimum=0, where="benchkit.pedantic")
        if setup is not None and iterations > 1:
            raise InvalidArgumentError(
                "iterations", iterations, "1 when a setup function is given (each call needs "
                "the setup's fresh state)", "benchkit.pedantic")
        given = bool(args or kwargs)

        def arguments() -> tuple[tuple, dict]:
            prepared = setup() if setup is not None else None
            if not prepared:
                return tuple(args), dict(kwargs or {})
            if given:
                raise ArgumentCombinationError(
                    f"{self.name}: benchkit.pedantic: setup returned arguments and args/kwargs "
                    "were given too; pass one or the other")
            return tuple(prepared[0]), dict(prepared[1])

        def one_round() -> tuple[float, Any]:
            call_args, call_kwargs = arguments()
            start = default_timer()
            for _ in range(iterations):
                result = target(*call_args, **call_kwargs)
            elapsed = default_timer() - start
            if teardown is not None:
                teardown(*call_args, **call_kwargs)
            return elapsed, result

        if self._options.disable:
            call_args, call_kwargs = arguments()
            return target(*call_args, **call_kwargs)
        for _ in range(warmup_rounds):
            one_round()
        times = []
        for _ in range(rounds):
            elapsed, result = one_round()
            times.append(max(elapsed, 1e-9))
        if iterations > 1:
            call_args, call_kwargs = arguments()
            result = target(*call_args, **call_kwargs)
            if teardown is not None:
                teardown(*call_args, **call_kwargs)
        spec = TaskSpec(stmt=_describe(target), setup="pass", label=self._label(),
                        sub_label=self._sub_label(_describe(target)))
        self._finish(Measurement(iterations, times, spec), None)
        if self._cprofile:
            self._profile(target, *arguments(), calls=iterations, teardown=teardown)
        return result


def _describe(target: Any) -> str:
    inner = target.func if isinstance(target, functools.partial) else target
    name = getattr(inner, "__qualname__", None) or repr(inner)
    module = inspect.getmodule(inner)
    return f"{module.__name__}.{name}()" if module else f"{name}()"
