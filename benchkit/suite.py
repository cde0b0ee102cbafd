"""Benchmark suites: plain Python files of named Timers, discovered from paths.

A suite file (`bench_*.py`, or any .py file named on the command line) declares benchmarks as

    from benchkit import Timer, benchmark

    @benchmark(fail_on="slower>5%")          # optional per-benchmark gate
    def mul():
        return Timer("x * y", setup="x = torch.ones(128); y = torch.ones(128)")

    bench_add = Timer("x + 1", setup="x = 1")  # a module-level Timer named bench_*

A decorated function (or a `bench_*` function) may return one Timer or a list of Timers;
each becomes a benchmark named `file::function` (with `[i]` when several).
"""
from __future__ import annotations

import dataclasses
import importlib.util
import re
import sys
from pathlib import Path
from typing import Any, Callable, Iterable

from benchkit.errors import BenchkitError, SuiteError
from benchkit.gates import Gate, parse_gate

_MARK = "__benchkit_benchmark__"


def benchmark(fn: Callable | None = None, *, fail_on: str | Iterable[str] | None = None,
              name: str | None = None):
    """Mark a function returning Timer(s) as a benchmark, with optional gates."""
    gates = [fail_on] if isinstance(fail_on, str) else list(fail_on or [])
    parsed = tuple(parse_gate(g) for g in gates)

    def mark(f):
        setattr(f, _MARK, {"gates": parsed, "name": name})
        return f
    return mark(fn) if fn is not None else mark


@dataclasses.dataclass
class Benchmark:
    name: str
    timer: Any                     # benchkit.Timer
    gates: tuple[Gate, ...] = ()


def _load_module(path: Path):
    name = f"benchkit_suite_{re.sub(r'[^0-9a-zA-Z_]', '_', str(path.with_suffix('')))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise SuiteError(f"{path}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # so Timers' pickled globals can refer to its classes
    try:
        spec.loader.exec_module(module)
    except BenchkitError:
        raise
    except Exception as error:
        raise SuiteError(f"{path}: importing the suite failed: {type(error).__name__}: {error}"
                         ) from error
    return module


def _timers(value: Any, where: str) -> list:
    from benchkit.timing.timer import Timer
    items = value if isinstance(value, (list, tuple)) else [value]
    for item in items:
        if not isinstance(item, Timer):
            raise SuiteError(f"{where} must return a benchkit.Timer or a list of them, "
                             f"got {type(item).__name__}")
    return list(items)


def load_file(path: Path) -> list[Benchmark]:
    from benchkit.timing.timer import Timer
    module = _load_module(path)
    out: list[Benchmark] = []
    for attr, value in vars(module).items():
        mark = getattr(value, _MARK, None)
        if mark is None and not attr.startswith("bench_"):
            continue
        if isinstance(value, Timer):
            out.append(Benchmark(f"{path.stem}::{attr}", value))
            continue
        if not callable(value) or isinstance(value, type):
            continue
        base = f"{path.stem}::{(mark or {}).get('name') or attr}"
        timers = _timers(value(), f"{path}::{attr}()")
        gates = (mark or {}).get("gates", ())
        for i, timer in enumerate(timers):
            out.append(Benchmark(base if len(timers) == 1 else f"{base}[{i}]", timer, gates))
    return out


def discover(paths: Iterable[str | Path]) -> list[Benchmark]:
    """Benchmarks from files and directories (directories: their bench_*.py files)."""
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            files += sorted(p.rglob("bench_*.py"))
        elif p.is_file():
            files.append(p)
        else:
            raise SuiteError(f"{p}: no such file or directory")
    benchmarks = [b for f in files for b in load_file(f.resolve())]
    names = [b.name for b in benchmarks]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise SuiteError(f"benchmark names used twice: {dupes}")
    return benchmarks


_WORD = re.compile(r"\(|\)|\band\b|\bor\b|\bnot\b|[^\s()]+")


def keyword_filter(expression: str | None) -> Callable[[str], bool]:
    """pytest-style -k: words match as substrings, combined with and/or/not/()."""
    if not expression:
        return lambda name: True
    tokens = _WORD.findall(expression)
    if not tokens:
        raise BenchkitError(f"-k {expression!r} is empty")
    code = " ".join(t if t in ("and", "or", "not", "(", ")") else f"({t!r} in name)"
                    for t in tokens)
    try:
        compiled = compile(code, "<-k>", "eval")
        eval(compiled, {"__builtins__": {}}, {"name": ""})
    except SyntaxError:
        raise BenchkitError(f"-k {expression!r} is not a valid expression; use words with "
                            "and/or/not and parentheses") from None
    return lambda name: bool(eval(compiled, {"__builtins__": {}}, {"name": name}))
