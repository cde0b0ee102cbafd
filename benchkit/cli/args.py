"""argparse types that validate at the boundary (rules from core.validate): one clear error
before any work starts."""
from __future__ import annotations

import argparse

from benchkit.core import validate
from benchkit.errors import BenchkitError

positive_float = validate.cli_type(validate.POSITIVE_SECONDS, whole=False)
positive_int = validate.cli_type(validate.POSITIVE_INT, whole=True)
non_negative_int = validate.cli_type(validate.NON_NEGATIVE_INT, whole=True)
probability = validate.cli_type(validate.SIGNIFICANCE, whole=False)
percent = validate.cli_percent


def gate(text: str):
    """--fail-on GATE: parsed here, so a bad gate stops the command before any work."""
    from benchkit.core.gates import Gate
    try:
        return Gate.parse(text)
    except BenchkitError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def keyword_expression(text: str) -> str:
    """-k EXPR, parsed here so a bad expression stops the command before any work."""
    from benchkit.core.keywords import keyword_filter
    try:
        keyword_filter(text)
    except BenchkitError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text
