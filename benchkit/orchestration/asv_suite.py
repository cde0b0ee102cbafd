"""asv benchmark suites, run as they are: `benchkit run benchmarks/` on a project's asv
directory.

The directory is imported as the package it is (so `from .common import Benchmark` works)
and its benchmarks are found by asv's own runner library (asv_runner), so the names, the
parameters and the attributes are asv's by construction. Each parameter combination is a
benchkit benchmark named as `history import-asv` names it (`module.Class.time_x[n=100]`),
so a benchmark keeps its name between imported asv results and benchkit's runs. `time_`
benchmarks are timed by benchkit (engines.asv_benchmark prepares the call in the worker);
`track_`, `mem_` and `peakmem_` are ValueBenchmarks, whose values orchestration.asv_values
takes, and so are `timeraw_` benchmarks, each sample timed in a fresh interpreter (their
kind is None: a time, not a value).
"""
from __future__ import annotations

import contextlib
import dataclasses
import importlib
import io
import itertools
import math
import pkgutil
import re
import sys
from pathlib import Path
from typing import Callable

from benchkit.core.history.asv import grid_point_names
from benchkit.core.records.records import Benchmark, Failure, FailureKind, Phase
from benchkit.core.measure.task import Task, TaskSpec
from benchkit.errors import SuiteError

# asv benchmark types benchkit times in its workers, and those taken in fresh processes of
# their own (engines/asv_value.py): values, and timeraw_'s times (kind None)
MEASURED = {"TimeBenchmark"}
VALUES = {"TrackBenchmark": "track", "MemBenchmark": "mem",
          "PeakMemBenchmark": "peakmem", "TimerawBenchmark": None}


@dataclasses.dataclass(frozen=True)
class ValueBenchmark:
    """One parameter combination of an asv track_, mem_, peakmem_ or timeraw_ benchmark
    (`kind` None: a time taken in fresh interpreters, not a value): `name` as benchkit
    names it, `asv_name` as asv_runner finds it (`name-index` on a grid)."""

    name: str
    asv_name: str
    root: str
    kind: str | None
    unit: str
    spec: TaskSpec
    file: str
    params: dict | None = None


def looks_like_asv(directory: Path) -> bool:
    """An asv suite directory: a package (an `__init__.py`) that an `asv.conf.json` next to
    it (or above it) names as its `benchmark_dir`, or whose `bench_*.py` files (benchkit's
    own suite files, and numpy's asv modules) do not import benchkit. Read as text, never
    imported."""
    if not (directory / "__init__.py").is_file():
        return False
    if _named_by_asv_config(directory):
        return True
    return not any(_imports_benchkit(path) for path in directory.rglob("bench_*.py"))


_IMPORTS_BENCHKIT = re.compile(rb"^[ \t]*(from|import)[ \t]+benchkit\b", re.MULTILINE)


def _imports_benchkit(path: Path) -> bool:
    try:
        return bool(_IMPORTS_BENCHKIT.search(path.read_bytes()))
    except OSError:
        return False


def _named_by_asv_config(directory: Path) -> bool:
    from benchkit.orchestration.asv_config import read_asv_config
    here = directory.resolve()
    for parent in list(here.parents)[:3]:
        try:
            config = read_asv_config(parent)
        except SuiteError:
            continue            # not asv's JSON: decided by the files instead
        if config is not None:
            return config.benchmark_dir.resolve() == here
    return False


def _import_all(root: Path, on_failure: Callable[[Failure, Exception], None] | None) -> None:
    """Import the package and every module under it as asv does; a module that raises is a
    load failure of its own and the others still import. As asv does, only the suite's own
    package is found in its parent directory, which is not put on sys.path: that directory
    is often the project's checkout, and its source would shadow the revision installed
    (`ab` measured the working tree's code on both sides of an asv project)."""
    from asv_runner._aux import update_sys_path    # what asv_runner's discovery calls
    update_sys_path(str(root))
    stack = [root.name]
    while stack:
        name = stack.pop()
        try:
            module = importlib.import_module(name)
        except Exception as error:
            failure = Failure(name, Phase.LOAD, FailureKind.RAISED,
                              f"importing {name} raised {type(error).__name__}: {error}",
                              str(root))
            if on_failure is None:
                raise SuiteError(failure.error) from None
            on_failure(failure, SuiteError(failure.error))
            continue
        if getattr(module, "__path__", None):
            stack += [n for _, n, _ in sorted(pkgutil.iter_modules(module.__path__,
                                                                   f"{name}."), reverse=True)]


def asv_benchmarks(directory: Path, on_failure=None,
                   wanted: Callable[[str], bool] | None = None,
                   not_measured: list[str] | None = None,
                   values: list[ValueBenchmark] | None = None) -> list[Benchmark]:
    """The timed benchmarks of an asv suite directory, one per parameter combination, in
    asv's order. Those whose value benchkit takes (track_, mem_, peakmem_) are appended to
    `values` (matching `wanted`), the ones it does not measure yet to `not_measured`."""
    try:
        from asv_runner.discovery import disc_benchmarks
        from benchkit.engines.asv_benchmark import prepared
    except ImportError:
        raise SuiteError(f"{directory}: an asv benchmark suite; running it needs asv's "
                         "runner library: pip install asv_runner (benchkit's [asv] extra)"
                         ) from None
    root = directory.resolve()
    _import_all(root, on_failure)
    out: list[Benchmark] = []
    # modules that failed to import were reported above; asv_runner prints them again
    with contextlib.redirect_stderr(io.StringIO()):
        found = list(disc_benchmarks(str(root), ignore_import_errors=True))
    for bench in found:
        grid = tuple(tuple(str(v) for v in values) for values in bench.params)
        names = grid_point_names(bench.name, tuple(bench.param_names), grid)
        kind = type(bench).__name__
        if kind not in MEASURED and (kind not in VALUES or values is None):
            if not_measured is not None and kind not in VALUES:
                not_measured += names
            continue
        points = itertools.product(*grid) if grid else [()]
        for index, (name, point) in enumerate(zip(names, points)):
            aliases = (f"{bench.name}({', '.join(point)})",) if point else ()
            if wanted is not None and not wanted("\n".join((name, *aliases))):
                continue
            if kind in VALUES:
                values.append(ValueBenchmark(
                    name, bench.name if not grid else f"{bench.name}-{index}", str(root),
                    VALUES[kind], str(getattr(bench, "unit", "") or ""),
                    TaskSpec(stmt=f"asv {kind}", setup="", label=bench.name,
                             sub_label=", ".join(point[:-1]) or bench.name.rsplit(".", 1)[-1],
                             description=point[-1] if point else None),
                    _source_file(bench, root),
                    dict(zip(bench.param_names, point)) if point else None))
                continue
            spec = TaskSpec(stmt="__bk_asv_call()",
                            setup=f"__bk_asv_call = __bk_asv_prepare({str(root)!r}, "
                                  f"{bench.name!r}, {index if grid else None!r})",
                            # Compare's layout: a table per benchmark, the last parameter
                            # as columns, the others as rows
                            label=bench.name,
                            sub_label=", ".join(point[:-1]) or bench.name.rsplit(".", 1)[-1],
                            description=point[-1] if point else None)
            task = Task(spec, spec.stmt, spec.setup, {"__bk_asv_prepare": prepared})
            params = dict(zip(bench.param_names, point)) if point else None
            out.append(Benchmark(name, task=task, file=_source_file(bench, root),
                                 params=params, aliases=aliases, **_limits(bench)))
    return out


def _limits(bench) -> dict:
    """asv's `number` (0: asv chooses, as benchkit's autorange does) and `timeout` of a
    benchmark, where they are what asv takes: a positive whole number, a positive finite
    number of seconds (anything else is left to benchkit's own)."""
    number = getattr(bench, "number", 0)
    timeout = getattr(bench, "timeout", None)
    real = (int, float)
    return {"number": number if isinstance(number, int) and not isinstance(number, bool)
            and number > 0 else None,
            "timeout": float(timeout) if isinstance(timeout, real) and not isinstance(
                timeout, bool) and math.isfinite(timeout) and timeout > 0 else None}


def _source_file(bench, root: Path) -> str:
    module = sys.modules.get(getattr(bench.func, "__module__", ""), None)
    return getattr(module, "__file__", None) or str(root)
