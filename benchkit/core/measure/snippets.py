"""Snippet source text: how it is normalised, checked and read for the names it uses (pure).

Standard library only: the callgrind server imports this under valgrind, where every import
costs.
"""
from __future__ import annotations

import textwrap
import types
from typing import Any, Callable, Iterable

from benchkit.errors import SnippetSyntaxError


def normalize(source: str) -> str:
    """Dedent and trim a snippet the way Timer stores it."""
    source = textwrap.dedent(source)
    if source.startswith("\n"):
        source = source[1:]
    return source.rstrip()


def check_syntax(name: str, source: str) -> types.CodeType:
    """Compile `source` (the `name` snippet); a syntax error is a SnippetSyntaxError."""
    try:
        return compile(source or "pass", f"<{name}>", "exec")
    except SyntaxError as error:
        raise SnippetSyntaxError(name, source, error) from None


def referenced_names(code: types.CodeType) -> set[str]:
    """All global/attribute names a code object (and nested ones) mentions."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= referenced_names(const)
    return names


def needs_torch(stmt: str | Callable[[], object], setup: str | Callable[[], object],
                global_names: Iterable[str] = ()) -> bool:
    """Whether the snippets use `torch` without importing it or being given it: then torch is
    put in their namespace, as torch.utils.benchmark does. Callables bring their own."""
    if "torch" in set(global_names):
        return False
    for name, snippet in (("stmt", stmt), ("setup", setup)):
        if isinstance(snippet, str) and "torch" in referenced_names(check_syntax(name, snippet)):
            return True
    return False


def describe_callable(snippet: Any) -> str:
    """How a callable stmt/setup is shown in a TaskSpec: `qualname()`."""
    return getattr(snippet, "__qualname__", repr(snippet)) + "()"
