"""pytest-style -k expressions over benchmark names: words match as substrings, combined with
and/or/not and parentheses; a word with `=` (`n=1024`) matches a grid parameter's value
exactly; a word followed at once by parentheses is one word, spaces and all, so asv's
spelling of a grid point (`time_sum(100, 'float64')`) selects it. Pure."""
from __future__ import annotations

import re
from typing import Callable

from benchkit.errors import BenchkitError

_OPERATORS = ("and", "or", "not")
# `n=1024`, not asv's spelling `time_eq(100, '!=')` whose values hold an `=`
_PARAMETER = re.compile(r"[A-Za-z_]\w*=")


def _tokens(expression: str) -> list[str]:
    """Parentheses, operators and words; `word(...)` (no space before the parenthesis, the
    parentheses balanced, quotes respected) is one word."""
    out: list[str] = []
    i, n = 0, len(expression)
    while i < n:
        char = expression[i]
        if char.isspace():
            i += 1
        elif char in "()":
            out.append(char)
            i += 1
        else:
            start = i
            while i < n and not expression[i].isspace() and expression[i] not in "()":
                i += 1
            if i < n and expression[i] == "(" and expression[start:i] not in _OPERATORS:
                i = _closing(expression, i)
            out.append(expression[start:i])
    return out


def _closing(text: str, i: int) -> int:
    """The index after the parenthesis that closes the one at `i` (or the text's end)."""
    depth, quote = 0, ""
    while i < len(text):
        char = text[i]
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return i


def keyword_filter(expression: str | None) -> Callable[[str], bool]:
    """A predicate over names for `-k EXPR` (everything passes without one)."""
    if not expression:
        return lambda name: True
    tokens = _tokens(expression)
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
        if _PARAMETER.match(token):   # a grid parameter: that value exactly, not n=10 in n=1024
            exact = re.compile(r"[\[,]" + re.escape(token) + r"[,\]]")
            return lambda n: exact.search(n) is not None
        return lambda n: token in n

    predicate = either()
    if position != len(tokens):
        fail(f"unexpected {tokens[position]!r}")
    return predicate
