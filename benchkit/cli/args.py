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
    from benchkit.core.decisions.gates import Gate
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


def add_verdict_options(parser, noise_default: str) -> None:
    """The options of the commands that judge A/B verdicts and gates (`ab`, `compare`),
    declared once: --fail-on, --allow-missing, --strict, --noise (its default told by
    `noise_default`), --alpha, --json, --markdown, --wide."""
    from benchkit.core.compare.comparison import DEFAULT_ALPHA
    parser.add_argument("--fail-on", type=gate, action="append", default=[], metavar="GATE",
                        help="exit 1 when a benchmark breaks GATE, e.g. 'slower>5%%' or "
                             "'instructions>1%%'; 'instructions>0%%' fails on any increase "
                             "beyond the layout band (repeatable; suite gates take "
                             "precedence)")
    parser.add_argument("--allow-missing", action="store_true",
                        help="a gate that cannot be evaluated (no counts on a side, a "
                             "benchmark missing or failed on a side) is reported, not failed")
    parser.add_argument("--strict", action="store_true",
                        help="a 'slower' gate an inconclusive verdict cannot decide (its CI "
                             "reaches past the limit) fails too (default: reported as "
                             "undecided)")
    parser.add_argument("--noise", type=percent, default=None, metavar="PCT",
                        help=f"changes inside +-PCT count as noise (default {noise_default})")
    parser.add_argument("--alpha", type=probability, default=DEFAULT_ALPHA, metavar="ALPHA",
                        help=f"significance level (default {DEFAULT_ALPHA:g})")
    parser.add_argument("--json", action="store_true", help="print the verdicts as JSON")
    parser.add_argument("--markdown", action="store_true", help="print the table as markdown")
    add_wide(parser)


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
