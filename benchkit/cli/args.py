"""argparse types that validate at the boundary (rules from core.validate): one clear error
before any work starts."""
from __future__ import annotations

import argparse

from benchkit.core.records import validate
from benchkit.errors import BenchkitError

positive_float = validate.cli_type(validate.POSITIVE_SECONDS, whole=False)
positive_int = validate.cli_type(validate.POSITIVE_INT, whole=True)
non_negative_int = validate.cli_type(validate.NON_NEGATIVE_INT, whole=True)
probability = validate.cli_type(validate.SIGNIFICANCE, whole=False)
percent = validate.cli_percent


def gate(text: str):
    """--fail-on GATE: parsed here, so a bad gate stops the command before any work."""
    from benchkit.core.metrics.gates import Gate
    try:
        return Gate.parse(text)
    except BenchkitError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def keyword_expression(text: str) -> str:
    """-k EXPR, parsed here so a bad expression stops the command before any work."""
    from benchkit.core.records.keywords import keyword_filter
    try:
        keyword_filter(text)
    except BenchkitError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def add_wide(parser) -> None:
    """The --wide option of commands that print a verdict table."""
    parser.add_argument("--wide", action="store_true",
                        help="every column of the verdict table (default: fit the terminal, "
                             "100 columns when not on one)")


def table_width(args) -> int | None:
    """How wide a verdict table may be: the terminal's width on a terminal, 100 columns
    elsewhere (a CI log, a file), unlimited with --wide."""
    import shutil
    import sys
    if getattr(args, "wide", False):
        return None
    if sys.stdout.isatty():
        return max(shutil.get_terminal_size((100, 24)).columns, 60)
    return 100
