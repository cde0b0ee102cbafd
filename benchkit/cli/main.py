"""`benchkit` command line: the only place that prints and picks exit codes.

Each command ends with an Outcome; `cli.exit_codes.exit_code` alone turns outcomes into the
exit code: 0 fine, 1 a regression, a failed measurement or problems found, 2 a usage or input
error, 130 interrupted, 141 output cut short, 143 terminated.
"""
from __future__ import annotations

import argparse
import gc
import os
import sys

from benchkit.cli import (ab_command, profile_commands, results_commands, run_command,
                          scaling_command)
from benchkit.cli.history import bisect, commands as history_commands, report
from benchkit.cli.exit_codes import Outcome, exit_code
from benchkit.core.text import printable
from benchkit.errors import BenchkitError, Terminated
from benchkit.system.processes import sigterm_as_interrupt

MODULES = (run_command, ab_command, results_commands, scaling_command, profile_commands,
           history_commands, bisect, report)


class OneLineErrors(argparse.ArgumentParser):
    """Usage errors as one line that names the argument and points to --help."""

    def error(self, message: str):
        """Exit 2 with the message on one line."""
        self.exit(exit_code(Outcome.BAD_INPUT),
                  f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The `benchkit` parser with every subcommand."""
    from importlib.metadata import PackageNotFoundError, version
    try:
        installed = version("benchkit-perf")
    except PackageNotFoundError:      # run from a source tree that was never installed
        installed = "unknown (not installed)"
    parser = OneLineErrors(
        prog="benchkit",
        description="Micro-benchmarks for Python, PyTorch and NumPy: wall time with A/B "
                    "verdicts, instruction counts, profiles, and a history over commits.",
        epilog="Exit status: 0 done, 1 a gate caught a regression, a benchmark could not "
               "be measured or a check found problems, 2 a usage or input error (or results "
               "not written where asked), 130 interrupted, 141 output cut short (| head), "
               "143 terminated. "
               "`benchkit COMMAND --help` describes each command.")
    parser.add_argument("--version", action="version",
                        version=f"benchkit {installed} (Python {sys.version.split()[0]})")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in MODULES:
        module.add_parsers(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns its exit code (`exit_code` of the outcomes it ended with)."""
    return exit_code(*_outcomes(argv))


# Commands that hold a whole history in memory (millions of points, none in a cycle): the
# cycle collector's full passes walked them all, over and over, as later objects were made.
# Run far less often there: `report` on 4,000,000 values 22.5 -> 17.6 s, `history
# regressions` 23.9 -> 17 s. Commands that time code keep Python's defaults.
HOLD_HISTORIES = ("history", "report", "bisect")
HISTORY_GC_THRESHOLDS = (100_000, 50, 100)


def _outcomes(argv: list[str] | None) -> tuple[Outcome, ...]:
    args = build_parser().parse_args(argv)
    handler = next(m.COMMANDS[args.command] for m in MODULES if args.command in m.COMMANDS)
    thresholds = gc.get_threshold()
    if args.command in HOLD_HISTORIES:
        gc.set_threshold(*HISTORY_GC_THRESHOLDS)
    try:
        with sigterm_as_interrupt():
            ended = handler(args)
            return ended if isinstance(ended, tuple) else (ended,)
    except BenchkitError as error:
        print(f"benchkit {args.command}: error: {printable(error)}", file=sys.stderr)
        theirs = getattr(error, "user_traceback", "")
        if theirs:
            print("-- where it happened in your code:\n" + printable(theirs.rstrip()),
                  file=sys.stderr)
        return (Outcome.BAD_INPUT,)
    except BrokenPipeError:
        # Python would print a traceback at exit flushing stdout again: point it nowhere.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return (Outcome.BROKEN_PIPE,)
    except Terminated:
        print("terminated (SIGTERM)", file=sys.stderr)
        return (Outcome.TERMINATED,)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return (Outcome.INTERRUPTED,)
    finally:
        gc.set_threshold(*thresholds)


if __name__ == "__main__":
    sys.exit(main())
