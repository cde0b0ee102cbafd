"""Benchmark suites: plain Python files of named Timers, discovered from paths.

A suite file (`bench_*.py`, or any .py file named on the command line) declares benchmarks as

    from benchkit import Timer, benchmark

    @benchmark(fail_on="slower>5%")          # optional per-benchmark gate
    def mul():
        return Timer("x * y", setup="x = torch.ones(128); y = torch.ones(128)")

    bench_add = Timer("x + 1", setup="x = 1")  # a module-level Timer named bench_*

A decorated function (or a `bench_*` function) may return one Timer or a list of Timers;
each becomes a benchmark named `file::function` (with `[i]` when several). With
`@benchmark(params={"n": [...], ...})` it is called once per point of the grid and each
point is a benchmark named by its values: `file::function[n=1024]`. Anything with a
`task()` method counts as a Timer here (core.task.Measurable), so this module needs no Timer.
"""
from __future__ import annotations

import collections

import dataclasses
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from benchkit.core.measure import params
from benchkit.core.metrics.gates import Gate
from benchkit.core.records.keywords import keyword_filter
from benchkit.core.measure.params import check_grid
from benchkit.core.records.records import Benchmark, Failure, FailureKind, Phase
from benchkit.core.measure.task import Measurable
from benchkit.engines.transfer import load_suite_module, suite_module_name
from benchkit.errors import BenchkitError, SuiteError

_MARK = "__benchkit_benchmark__"


def benchmark(fn: Callable | None = None, *, fail_on: str | Iterable[str] | None = None,
              name: str | None = None, params: Mapping[str, Sequence] | None = None):
    """Mark a function returning Timer(s) as a benchmark, with optional gates.

    With `params` ({name: values}), the function is called once per point of the grid with
    the point as keyword arguments and returns that point's Timer; each point is a benchmark
    named by its values, `file::fn[n=1024,dtype=float32]`, whose results keep the point
    (metadata "params"). Timers without label/sub_label/description get them from the
    point, so Compare lays the grid out: the last parameter as columns, the others as rows."""
    gates = [fail_on] if isinstance(fail_on, str) else list(fail_on or [])
    parsed = tuple(Gate.parse(g) for g in gates)

    def mark(f):
        grid = None
        if params is not None:
            grid = check_grid(params, f"@benchmark(params=...) of {f.__qualname__}")
        setattr(f, _MARK, {"gates": parsed, "name": name, "params": grid})
        return f
    return mark(fn) if fn is not None else mark


def _load_module(path: Path):
    # Under the same name in every process (engines.transfer loads it in children too), so
    # what the suite defines can be pickled into any of them.
    try:
        module = load_suite_module(suite_module_name(path), str(path))
    except BenchkitError:
        raise
    except SystemExit as error:
        raise SuiteError(f"{path}: the suite called sys.exit({error.code!r}) while being "
                         "imported; a suite file must only define benchmarks") from None
    except Exception as error:
        raise _user_error(f"{path}: importing the suite failed", error, path) from None
    return module


def _user_error(message: str, error: BaseException, path: Path) -> SuiteError:
    """A SuiteError for an exception in the user's own code, carrying the frames of their
    file (the CLI shows them, marked as theirs)."""
    import traceback
    frames = [f for f in traceback.extract_tb(error.__traceback__)
              if f.filename == str(path)]
    out = SuiteError(f"{message}: {type(error).__name__}: {error}")
    out.user_traceback = "".join(traceback.format_list(frames))
    return out


def _timers(value: Any, where: str) -> list[Measurable]:
    items = value if isinstance(value, (list, tuple)) else [value]
    for item in items:
        if not isinstance(item, Measurable):
            raise SuiteError(f"{where} must return a benchkit.Timer or a list of them, "
                             f"got {type(item).__name__}")
    return list(items)


# on_failure(failure, error): a benchmark (or a file) that failed to load, and its error
OnFailure = Callable[[Failure, SuiteError], None]


def load_file(path: Path, on_failure: OnFailure | None = None,
              wanted: Callable[[str], bool] | None = None) -> list[Benchmark]:
    """The benchmarks a suite file declares, in file order (its Timers' tasks). With
    `on_failure`, a benchmark function that raises is reported to it and the others load.
    With `wanted` (a -k filter), grid points whose names it refuses are not even built: a
    grid of 10^5 points selected by `-k n=1024` calls the function for those points only."""
    module = _load_module(path)
    out: list[Benchmark] = []
    for attr, value in vars(module).items():
        mark = getattr(value, _MARK, None)
        if mark is None and not attr.startswith("bench_"):
            continue
        if isinstance(value, Measurable) and not isinstance(value, type):
            out.append(Benchmark(f"{path.stem}::{attr}", task=value.task(), file=str(path)))
            continue
        if not callable(value) or isinstance(value, type):
            continue
        base = f"{path.stem}::{(mark or {}).get('name') or attr}"
        gates = (mark or {}).get("gates", ())
        grid = (mark or {}).get("params")
        for point in (params.points(grid) if grid else [None]):
            name = base if point is None else f"{base}[{params.point_name(point)}]"
            if point is not None and wanted is not None and not wanted(name):
                continue
            try:
                timers = _call(value, attr, path, point)
                if point is not None:
                    out.append(_grid_benchmark(name, gates, timers, point, path, base))
                    continue
            except SuiteError as error:
                if on_failure is None:
                    raise
                on_failure(Failure(name, Phase.LOAD, FailureKind.RAISED, str(error),
                                   str(path)), error)
                continue
            for i, timer in enumerate(timers):
                out.append(Benchmark(name if len(timers) == 1 else f"{name}[{i}]", gates,
                                     task=timer.task(), file=str(path)))
    return out


def _grid_benchmark(name: str, gates, timers: list[Measurable], point: params.Point,
                    path: Path, base: str) -> Benchmark:
    """A grid point's benchmark: its one Timer placed in the grid's Compare layout."""
    if len(timers) != 1:
        raise SuiteError(f"{path}::{name}: a grid point must return one Timer, got "
                         f"{len(timers)}; make what varies between them a parameter")
    task = timers[0].task()
    spec = task.spec
    if spec.label is None and spec.sub_label is None and spec.description is None:
        sub_label, description = params.table_place(point)
        spec = dataclasses.replace(spec, label=base, sub_label=sub_label,
                                   description=description)
        task = dataclasses.replace(task, spec=spec)
    return Benchmark(name, gates, task=task, file=str(path), params=params.stored(point))


def _call(function: Callable, attr: str, path: Path,
          point: params.Point | None = None) -> list[Measurable]:
    """What a benchmark function returns (called with a grid point's keyword arguments),
    as Timers; a SuiteError naming it otherwise."""
    try:
        made = function(**(point or {}))
    except BenchkitError as error:
        raise SuiteError(f"{path}::{attr}() raised {type(error).__name__}: {error}") from None
    except Exception as error:
        raise _user_error(f"{path}::{attr}() raised", error, path) from None
    return _timers(made, f"{path}::{attr}()")


def discover(paths: Iterable[str | Path], on_failure: OnFailure | None = None,
             wanted: Callable[[str], bool] | None = None) -> list[Benchmark]:
    """Benchmarks from files and directories (directories: their bench_*.py files, or an
    asv suite as it is: orchestration.asv_suite). With `on_failure`, a file that cannot be
    imported (or a benchmark function that raises) is reported to it and the rest load;
    without, it raises."""
    from benchkit.orchestration.asv_suite import asv_benchmarks, looks_like_asv
    files: list[Path] = []
    benchmarks = []
    for p in map(Path, paths):
        if p.is_dir() and looks_like_asv(p):
            benchmarks += asv_benchmarks(p, on_failure, wanted)
        elif p.is_dir():
            files += sorted(p.rglob("bench_*.py"))
        elif p.is_file():
            files.append(p)
        else:
            raise SuiteError(f"{p}: no such file or directory")
    for f in files:
        try:
            benchmarks += load_file(f.resolve(), on_failure, wanted)
        except SuiteError as error:
            if on_failure is None:
                raise
            on_failure(Failure(f.stem, Phase.LOAD, FailureKind.RAISED, str(error),
                               str(f.resolve())), error)
    names = [b.name for b in benchmarks]
    dupes = sorted(n for n, count in collections.Counter(names).items() if count > 1)
    if dupes:
        raise SuiteError(f"benchmark names used twice: {dupes}")
    return benchmarks


def select(paths: Iterable[str | Path], keyword: str | None = None,
           failures: list[Failure] | None = None) -> list[Benchmark]:
    """The benchmarks of `paths` whose names match `-k keyword` (and, with `failures`, the
    ones that failed to load recorded there). Nothing to measure is an error: the first
    load failure's own (with the user's frames), else 'no benchmarks'."""
    paths = list(paths)
    matches = keyword_filter(keyword)
    errors: list[tuple[Failure, SuiteError]] = []
    selected = [b for b in discover(paths, lambda f, e: errors.append((f, e)), matches)
                if matches(b.selector())]
    unmatched = [(f, e) for f, e in errors if not matches(f.benchmark)]
    errors = [(f, e) for f, e in errors if matches(f.benchmark)]
    if not selected and errors:
        raise errors[0][1]
    if not selected and unmatched and keyword:
        # a package that failed to import may hold what -k asks for: say so
        raise SuiteError(f"no benchmarks in {' '.join(map(str, paths))} match -k {keyword!r}; "
                         f"{len(unmatched)} could not be imported, which may hold them: "
                         f"{unmatched[0][1]}")
    if failures is not None:
        failures += [f for f, _ in errors]
    elif errors:
        raise errors[0][1]
    if not selected:
        raise SuiteError(f"no benchmarks in {' '.join(map(str, paths))}"
                         + (f" match -k {keyword!r}" if keyword else ""))
    return selected
