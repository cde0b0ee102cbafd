"""One asv benchmark (one parameter combination) made ready to time in this process.

asv's own runner library (asv_runner, the code `asv run` imports in its benchmark
processes) finds the benchmark by its dotted name, so its attributes, `setup`, `teardown`,
`setup_cache` and skips behave as they do under asv; benchkit only times the call. The
benchmark and its `setup_cache` value are made once per process (asv: once per environment,
shared through a file), `setup` runs before each timed block as asv's `redo_setup` does,
and `teardown` after the previous block and when the process ends.
"""
from __future__ import annotations

import atexit
import functools
from typing import Any, Callable

from benchkit.errors import AsvSkipped

# the benchmark being measured (one at a time) and whether the exit hook is registered
_PREPARED: dict[tuple[str, str, int | None], Any] = {}
_REGISTERED: list[bool] = []


def prepared(root: str, name: str, index: int | None) -> Callable[[], object]:
    """The benchmark's call (parameters, and `setup_cache`'s value first when it has one)
    after its `setup`; AsvSkipped when asv would skip this combination (its `setup` raised
    NotImplementedError, or it is in `skip_params`)."""
    key = (root, name, index)
    bench = _PREPARED.get(key)
    if bench is None:
        _tear_down_all()
        from asv_runner.discovery import get_benchmark_from_name
        bench = get_benchmark_from_name(root, name if index is None else f"{name}-{index}")
        cache = bench.do_setup_cache()
        if cache is not None:
            bench.set_cache(cache)
        if not _REGISTERED:
            atexit.register(_tear_down_all)
            _REGISTERED.append(True)
        _PREPARED[key] = bench
    else:
        bench.do_teardown()
    if bench.do_setup():
        raise AsvSkipped(f"{name}: skipped, as asv skips it (its setup raised "
                         "NotImplementedError, or its skip_params name this combination)")
    # asv_runner's own argument list: the setup_cache value (if any), then the parameters
    return functools.partial(bench.func, *bench._build_params())


def _tear_down_all() -> None:
    for bench in _PREPARED.values():
        try:
            bench.do_teardown()
        except Exception:       # a user's teardown failing changes no figure
            pass
    _PREPARED.clear()
