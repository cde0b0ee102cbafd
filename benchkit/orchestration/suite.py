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
from benchkit.core.gates import Gate, parse_gate

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


def _timers(value: Any, where: str) -> list:
    from benchkit.api.timer import Timer
    items = value if isinstance(value, (list, tuple)) else [value]
    for item in items:
        if not isinstance(item, Timer):
            raise SuiteError(f"{where} must return a benchkit.Timer or a list of them, "
                             f"got {type(item).__name__}")
    return list(items)


def load_file(path: Path) -> list[Benchmark]:
    from benchkit.api.timer import Timer
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
        try:
            made = value()
        except BenchkitError:
            raise
        except Exception as error:
            raise _user_error(f"{path}::{attr}() raised", error, path) from None
        timers = _timers(made, f"{path}::{attr}()")
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
    position = 0

    def fail(why: str):
        raise BenchkitError(f"-k {expression!r} is not a keyword expression ({why}); use words "
                            "with and/or/not and parentheses, e.g. -k 'mul and not cpp'")

    def peek():
        return tokens[position] if position < len(tokens) else None

    def take():
        nonlocal position
        position += 1
        return tokens[position - 1]

    def chain(word, operand, combine):
        """operand (word operand)*, folded left with combine."""
        left = operand()
        while peek() == word:
            take()
            left = (lambda a, b: lambda n: combine(a(n), b(n)))(left, operand())
        return left

    def either():
        return chain("or", both, lambda a, b: a or b)

    def both():
        return chain("and", factor, lambda a, b: a and b)

    def factor():
        token = peek()
        if token is None:
            fail("it ends too early")
        take()
        if token == "not":
            inner = factor()
            return lambda n: not inner(n)
        if token == "(":
            inner = either()
            if peek() != ")":
                fail("a '(' is not closed")
            take()
            return inner
        if token in ("and", "or", ")"):
            fail(f"unexpected {token!r}")
        return lambda n: token in n

    predicate = either()
    if position != len(tokens):
        fail(f"unexpected {tokens[position]!r}")
    return predicate
