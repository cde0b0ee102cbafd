"""Compile stmt/setup into one timeit-style loop function.

The loop is compiled source (like `timeit`), so a string `stmt` costs no Python-level
call per iteration and a `pass` statement times the same as with `timeit`. Standard library
only: the callgrind server runs this very loop under valgrind.
"""
from __future__ import annotations

import itertools
import linecache
from typing import Any, Callable

from benchkit.core.measure.snippets import normalize
from benchkit.errors import SnippetError, SnippetSyntaxError

_FILENAME_PREFIX = "<benchkit-loop-"
_counter = itertools.count()


class CompiledLoop:
    """`time_block(number)` runs setup once, then `stmt` `number` times, and returns seconds."""

    def __init__(self, stmt: str | Callable[[], object], setup: str | Callable[[], object],
                 timer: Callable[[], float], globals_: dict[str, Any]):
        self._filename = f"{_FILENAME_PREFIX}{next(_counter)}>"
        lines = ["def inner(_it, _timer, _stmt=_stmt, _setup=_setup):"]
        self._spans: list[tuple[str, int, list[str]]] = []  # (snippet, first line, its lines)
        namespace: dict[str, Any] = {"_stmt": stmt, "_setup": setup}
        for name, body, indent in (("setup", setup, "    "), ("stmt", stmt, "        ")):
            src = normalize(body) if isinstance(body, str) else f"_{name}()"
            src_lines = (src or "pass").splitlines()
            if name == "stmt":
                lines += ["    _t0 = _timer()", "    for _i in _it:"]
            self._spans.append((name, len(lines) + 1, src_lines))
            lines += [indent + line for line in src_lines]
        lines += ["    _t1 = _timer()", "    return _t1 - _t0"]
        source = "\n".join(lines) + "\n"
        try:
            code = compile(source, self._filename, "exec")
        except SyntaxError as error:
            snippet, line = self._locate(error.lineno)
            raise SnippetSyntaxError(snippet, "\n".join(self._lines_of(snippet)),
                                     SyntaxError(error.msg, (snippet, line, None, None))) from None
        # Registering the source lets tracebacks through the loop show the snippet's lines.
        linecache.cache[self._filename] = (len(source), None, source.splitlines(True),
                                           self._filename)
        exec(code, globals_, namespace)
        self.globals = globals_
        self._inner = namespace["inner"]
        self._timer = timer

    def _lines_of(self, snippet: str) -> list[str]:
        return next(lines for name, _, lines in self._spans if name == snippet)

    def _locate(self, lineno: int | None) -> tuple[str, int | None]:
        for name, first, lines in self._spans:
            if lineno is not None and first <= lineno < first + len(lines):
                return name, lineno - first + 1
        return "stmt", None

    def describe(self, filename: str, lineno: int) -> str | None:
        """'stmt:2 <its text>' for a line of this loop's code, None for other files (names
        allocation sites; a TimeitClassLoop has none: the user's class compiles its code)."""
        if filename != self._filename:
            return None
        snippet, line = self._locate(lineno)
        if line is None:
            return snippet
        return f"{snippet}:{line} {self._lines_of(snippet)[line - 1].strip()}"

    def time_block(self, number: int, timer: Callable[[], float] | None = None) -> float:
        """Seconds of `number` runs of stmt after setup, by `timer` (default: the loop's clock)."""
        try:
            return self._inner(itertools.repeat(None, number), timer or self._timer)
        except (Exception, SystemExit) as error:   # sys.exit() in a snippet is its error too
            tb, lineno = error.__traceback__, None
            while tb is not None:
                if tb.tb_frame.f_code.co_filename == self._filename:
                    lineno = tb.tb_lineno
                tb = tb.tb_next
            snippet, line = self._locate(lineno)
            text = None
            if line is not None:
                text = self._lines_of(snippet)[line - 1]
            raise SnippetError(snippet, error, line, text) from error

    def __del__(self) -> None:
        linecache.cache.pop(getattr(self, "_filename", ""), None)


class TimeitClassLoop:
    """time_block over a user-supplied timeit.Timer-like class (Timer's `_timer_cls` seam,
    as in torch.utils.benchmark): `cls(stmt, setup, timer, globals).timeit(number)`."""

    def __init__(self, timer: Any, globals_: dict[str, Any] | None = None):
        self._timer = timer
        # the namespace the user's class was given: what profile() runs the statement in
        self.globals = dict(globals_ or {})

    def time_block(self, number: int, timer: Callable[[], float] | None = None) -> float:
        """Seconds of `number` runs, as the user's class times them."""
        return self._timer.timeit(number)
