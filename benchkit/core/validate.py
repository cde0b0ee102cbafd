"""Argument checks at the API boundary: type, finiteness and range, before any work starts.

Each raises InvalidArgumentError naming the argument, the value given and what is accepted.
"""
from __future__ import annotations

import math
import numbers
from typing import Any

from benchkit.errors import InvalidArgumentError


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def integer(name: str, value: Any, *, minimum: int = 1, where: str = "") -> int:
    """A whole number >= minimum (bools refused: True is not a count)."""
    if not _is_int(value) or value < minimum:
        raise InvalidArgumentError(name, value, f"a whole number >= {minimum}", where)
    return int(value)


def seconds(name: str, value: Any, *, allow_zero: bool = False, where: str = "") -> float:
    """A finite number of seconds > 0 (or >= 0)."""
    ok = _is_real(value) and math.isfinite(value) and (value >= 0 if allow_zero else value > 0)
    if not ok:
        raise InvalidArgumentError(name, value, "a finite number of seconds "
                                   + (">= 0" if allow_zero else "> 0"), where)
    return float(value)


def optional_seconds(name: str, value: Any, *, where: str = "") -> float | None:
    return None if value is None else seconds(name, value, where=where)


def non_negative(name: str, value: Any, *, where: str = "") -> float:
    """A finite number >= 0."""
    if not (_is_real(value) and math.isfinite(value) and value >= 0):
        raise InvalidArgumentError(name, value, "a finite number >= 0", where)
    return float(value)


def clock(timer: Any) -> None:
    """A `timer=` must be callable and return a finite number of seconds."""
    if not callable(timer):
        raise InvalidArgumentError("timer", timer, "a callable returning seconds as a float")
    value = timer()
    if not (_is_real(value) and math.isfinite(value)):
        raise InvalidArgumentError("timer", timer, "a callable returning seconds as a float "
                                   f"(it returned {value!r})")
