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

import functools
import inspect
from typing import Any, Callable

from benchkit.core.gates import Gate
from benchkit.core.records import Benchmark
from benchkit.core.schema import storable
from benchkit.errors import (BenchkitError, FixtureAlreadyUsed, GlobalNotTransferableError,
                             SchemaError)


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
        self._used = False

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

    def _label(self) -> str:
        return self.group or self.name

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
        timer = Timer(call, label=self._label(), sub_label=_describe(target))
        self._finish(self._measure(timer), timer)
        return result

    def pedantic(self, target: Callable, args: tuple = (), kwargs: dict | None = None,
                 setup: Callable | None = None, teardown: Callable | None = None,
                 rounds: int = 1, warmup_rounds: int = 0, iterations: int = 1) -> Any:
        """Explicit rounds of `iterations` calls each; `setup()` before every round (untimed,
        and if it returns (args, kwargs) those are used), `teardown()` after."""
        from benchkit.core import validate
        from benchkit.core.measurement import Measurement
        from benchkit.core.task import TaskSpec
        from benchkit.engines.wall.clock import default_timer
        self._claim()
        validate.integer("rounds", rounds, where="benchkit.pedantic")
        validate.integer("iterations", iterations, where="benchkit.pedantic")
        validate.integer("warmup_rounds", warmup_rounds, minimum=0, where="benchkit.pedantic")
        if setup is not None and (args or kwargs) and iterations > 1:
            raise BenchkitError("benchkit.pedantic: with setup returning arguments, "
                                "iterations must be 1 (each call needs fresh arguments)")
        kwargs = dict(kwargs or {})
        result = None
        times = []
        for index in range(warmup_rounds + rounds):
            call_args, call_kwargs = args, kwargs
            if setup is not None:
                prepared = setup()
                if prepared is not None:
                    call_args, call_kwargs = prepared
            if self._options.disable:
                result = target(*call_args, **call_kwargs)
                if teardown is not None:
                    teardown()
                return result
            start = default_timer()
            for _ in range(iterations):
                result = target(*call_args, **call_kwargs)
            elapsed = default_timer() - start
            if teardown is not None:
                teardown()
            if index >= warmup_rounds:
                times.append(max(elapsed, 1e-9))
        spec = TaskSpec(stmt=_describe(target), setup="pass", label=self._label(),
                        sub_label=_describe(target))
        self._finish(Measurement(iterations, times, spec), None)
        return result


def _describe(target: Any) -> str:
    inner = target.func if isinstance(target, functools.partial) else target
    name = getattr(inner, "__qualname__", None) or repr(inner)
    module = inspect.getmodule(inner)
    return f"{module.__name__}.{name}()" if module else f"{name}()"
