"""argparse types that validate at the boundary: type, finiteness and range, one clear error."""
from __future__ import annotations

import argparse
import math


def positive_float(text: str) -> float:
    """Seconds and the like: a finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a finite number > 0")
    return value


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be 1 or more")
    return value


def non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be 0 or more")
    return value


def percent(text: str) -> float:
    """'2%' or '2' -> 0.02; between 0 and 100 %."""
    try:
        value = float(text.strip().rstrip("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a percentage like 2%") from None
    if not math.isfinite(value) or not 0 <= value < 100:
        raise argparse.ArgumentTypeError(f"{text!r} must be a percentage from 0% to 100%")
    return value / 100


def probability(text: str) -> float:
    """A significance level: 0 < alpha < 0.5."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or not 0 < value < 0.5:
        raise argparse.ArgumentTypeError(f"{text!r} must be between 0 and 0.5 (e.g. 0.01)")
    return value


def gate(text: str):
    from benchkit.errors import BenchkitError
    from benchkit.core.gates import parse_gate
    try:
        return parse_gate(text)
    except BenchkitError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def keyword_expression(text: str) -> str:
    """-k EXPR, parsed here so a bad expression stops the command before any work."""
    from benchkit.errors import BenchkitError
    from benchkit.orchestration.suite import keyword_filter
    try:
        keyword_filter(text)
    except BenchkitError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text
