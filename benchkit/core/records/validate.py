"""Argument checks at the boundary, before any work starts: one module for the Python API,
the command line and the pytest options.

A Rule says what a value must be, in the API's words ('a whole number >= 1') and in the
command line's ('must be 1 or more'). API checks raise InvalidArgumentError naming the
argument, the value and what is accepted; `cli_type` turns a rule into an argparse type.
"""
from __future__ import annotations

import argparse
import dataclasses
import math
import numbers
from typing import Any, Callable, Mapping

from benchkit.errors import InvalidArgumentError


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _finite(value: Any) -> bool:
    return _is_real(value) and math.isfinite(value)


@dataclasses.dataclass(frozen=True)
class Rule:
    """A check on a number: `accepts(value)`, described for the API (`accepted`) and for the
    command line (`must`)."""

    accepts: Callable[[Any], bool]
    accepted: str
    must: str


POSITIVE_INT = Rule(lambda v: _is_int(v) and v >= 1, "a whole number >= 1", "must be 1 or more")
NON_NEGATIVE_INT = Rule(lambda v: _is_int(v) and v >= 0, "a whole number >= 0",
                        "must be 0 or more")
POSITIVE_SECONDS = Rule(lambda v: _finite(v) and v > 0, "a finite number of seconds > 0",
                        "must be a finite number > 0")
NON_NEGATIVE_SECONDS = Rule(lambda v: _finite(v) and v >= 0, "a finite number of seconds >= 0",
                            "must be a finite number >= 0")
NON_NEGATIVE = Rule(lambda v: _finite(v) and v >= 0, "a finite number >= 0",
                    "must be a finite number >= 0")
FRACTION = Rule(lambda v: _finite(v) and 0 <= v < 1, "a fraction from 0 to 1",
                "must be a percentage from 0% to 100%")
SIGNIFICANCE = Rule(lambda v: _finite(v) and 0 < v < 0.5, "a significance level in (0, 0.5)",
                    "must be between 0 and 0.5 (e.g. 0.01)")


def check(rule: Rule, name: str, value: Any, where: str = "") -> Any:
    """`value` if the rule accepts it, else InvalidArgumentError."""
    if not rule.accepts(value):
        raise InvalidArgumentError(name, value, rule.accepted, where)
    return value


def integer(name: str, value: Any, *, minimum: int = 1, where: str = "") -> int:
    """A whole number >= minimum (bools refused: True is not a count)."""
    if not _is_int(value) or value < minimum:
        raise InvalidArgumentError(name, value, f"a whole number >= {minimum}", where)
    return int(value)


def seconds(name: str, value: Any, *, allow_zero: bool = False, where: str = "") -> float:
    """A finite number of seconds > 0 (or >= 0)."""
    return float(check(NON_NEGATIVE_SECONDS if allow_zero else POSITIVE_SECONDS, name, value,
                       where))


def optional_seconds(name: str, value: Any, *, where: str = "") -> float | None:
    """None, or a finite number of seconds > 0."""
    return None if value is None else seconds(name, value, where=where)


def non_negative(name: str, value: Any, *, where: str = "") -> float:
    """A finite number >= 0."""
    return float(check(NON_NEGATIVE, name, value, where))


def clock(timer: Any) -> None:
    """A `timer=` must be callable and return a finite number of seconds."""
    if not callable(timer):
        raise InvalidArgumentError("timer", timer, "a callable returning seconds as a float")
    value = timer()
    if not _finite(value):
        raise InvalidArgumentError("timer", timer, "a callable returning seconds as a float "
                                   f"(it returned {value!r})")


def optional_text(name: str, value: Any, *, where: str = "") -> str | None:
    """None or a string (labels, descriptions)."""
    if value is not None and not isinstance(value, str):
        raise InvalidArgumentError(name, value, "a string or None", where, message=(
            f"{name} must be a string or None, got {type(value).__name__}."))
    return value


def text(name: str, value: Any, *, where: str = "") -> str:
    """A string."""
    if not isinstance(value, str):
        raise InvalidArgumentError(name, value, "a string", where, message=(
            f"{name} must be a string, got {type(value).__name__}."))
    return value


def optional_dict(name: str, value: Any, *, where: str = "") -> dict | None:
    """None or a dict (globals)."""
    if value is not None and not isinstance(value, dict):
        raise InvalidArgumentError(name, value, "a dict", where, message=(
            f"{name} must be a dict, got {type(value).__name__}."))
    return value


def at_least(name: str, value: float, other_name: str, other: float, *,
             where: str = "") -> None:
    """`value` >= `other` (max_run_time >= min_run_time)."""
    if value < other:
        raise InvalidArgumentError(name, value, f"a value >= {other_name}", where, message=(
            f"{where}: {name}={value!r} is below {other_name}={other!r}; raise {name}."))


def settings(values: Mapping[str, Any], *, seconds_fields: tuple[str, ...],
             count_fields: tuple[str, ...]) -> None:
    """Sampling settings: every seconds field > 0 and finite, every count field >= 1."""
    for field in seconds_fields:
        value = values[field]
        if not POSITIVE_SECONDS.accepts(value):
            raise InvalidArgumentError(field, value, "", message=(
                f"{field} must be a positive finite number of seconds, got {value!r}"))
    for field in count_fields:
        value = values[field]
        if not POSITIVE_INT.accepts(value):
            raise InvalidArgumentError(field, value, "", message=(
                f"{field} must be a positive integer, got {value!r}"))


# ----------------------------------------------------------------------------- command line


def _number(text: str, whole: bool) -> float | int:
    try:
        return int(text) if whole else float(text)
    except ValueError:
        kind = "a whole number" if whole else "a number"
        raise argparse.ArgumentTypeError(f"{text!r} is not {kind}") from None


def cli_type(rule: Rule, whole: bool) -> Callable[[str], Any]:
    """An argparse `type=` that parses a number and checks it against `rule`."""
    def parse(text: str):
        value = _number(text, whole)
        if not rule.accepts(value):
            raise argparse.ArgumentTypeError(f"{text!r} {rule.must}")
        return value
    parse.__name__ = rule.accepted
    return parse


def cli_percent(text: str) -> float:
    """'2%' or '2' -> 0.02; from 0 to 100 %."""
    try:
        value = float(text.strip().rstrip("%")) / 100
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a percentage like 2%") from None
    if not FRACTION.accepts(value):
        raise argparse.ArgumentTypeError(f"{text!r} {FRACTION.must}")
    return value
