"""The options that `run`, `ab`, `compare`, `history run`, `profile` and the pytest plugin
share, declared once: one flag, one type (checked at the boundary), one help text. A command
may set its own default, and the help then says that default; the pytest plugin adds them
under `--benchkit-` (`--benchkit-processes`), since pytest owns the plain names."""
from __future__ import annotations

import dataclasses
from typing import Any, Callable

from benchkit.cli import args as types

# `benchkit run` (and `history run`, which runs it): worker processes per benchmark and
# the seconds each measures it; --fast: a quick look, weaker verdicts
RUN_PROCESSES = 10
RUN_MIN_RUN_TIME = 0.1
FAST_PROCESSES = 3
FAST_MIN_RUN_TIME = 0.05


@dataclasses.dataclass(frozen=True)
class Option:
    """One shared option. `help` may hold `{default}`, filled with the default each command
    declares (an option with a default but no `{default}` gets none in its help)."""

    flag: str                                  # without dashes: "min-run-time"
    help: str
    type: Callable[[str], Any] | None = None
    metavar: str | None = None
    flag_action: bool = False                  # a switch (store_true)
    repeatable: bool = False                   # append, default []
    short: str | None = None                   # "-k"
    dest: str | None = None

    def add(self, parser, *, prefix: str = "", default: Any = None,
            help_suffix: str = "") -> None:
        """Declare this option on an argparse parser (or a pytest option group, whose
        `addoption` takes the same arguments), as `--{prefix}{flag}`."""
        # a short flag (-k) stands alone on the command line; the plugin has no short ones
        names = [self.short] if self.short and not prefix else [f"--{prefix}{self.flag}"]
        shown = "" if default is None else f"{default:g}" if isinstance(
            default, float) else str(default)
        text = self.help.format(default=shown) + help_suffix
        keywords: dict[str, Any] = {"help": text}
        if self.flag_action:
            keywords["action"] = "store_true"
        else:
            keywords.update(type=self.type, metavar=self.metavar)
            keywords["default"] = [] if self.repeatable else default
            if self.repeatable:
                keywords["action"] = "append"
        if self.dest and not prefix:
            keywords["dest"] = self.dest
        (parser.addoption if hasattr(parser, "addoption") else parser.add_argument)(
            *names, **keywords)


KEYWORD = Option("keyword", "only benchmarks whose names match EXPR, as pytest -k: words "
                            "match as substrings, combined with and/or/not", short="-k",
                 type=types.keyword_expression, metavar="EXPR", dest="keyword")
PROCESSES = Option("processes", "fresh worker processes that each measure every benchmark "
                                "(default {default})", type=types.positive_int, metavar="N")
MIN_RUN_TIME = Option("min-run-time", "seconds each process measures each benchmark "
                                      "(default {default})",
                      type=types.positive_float, metavar="S")
FAST = Option("fast", f"quick look: {FAST_PROCESSES} processes of {FAST_MIN_RUN_TIME:g} s "
                      "(weaker verdicts)", flag_action=True)
CALLGRIND = Option("callgrind", "also count instructions (valgrind; exact, for "
                                "deterministic gates)", flag_action=True)
MEMORY = Option("memory", "also count memory per run: allocations, bytes, peak, retained "
                          "(exact; a counting allocator in a worker process)",
                flag_action=True)
NO_WALL_TIME = Option("no-wall-time", "with --callgrind or --memory: skip wall-time "
                                      "measurement", flag_action=True)
NUM_THREADS = Option("num-threads", "torch threads of every benchmark (default: each "
                                    "benchmark's own num_threads)",
                     type=types.positive_int, metavar="N")
FAIL_ON = Option("fail-on", "fail (exit 1) when a benchmark breaks GATE, e.g. 'slower>5%%' "
                            "or 'instructions>1%%'; 'instructions>0%%' fails on any increase "
                            "beyond the layout band (repeatable; gates a suite or a marker "
                            "sets take precedence)",
                 type=types.gate, metavar="GATE", repeatable=True)
ALLOW_MISSING = Option("allow-missing", "a gate that cannot be evaluated (no counts on a "
                                        "side, a benchmark missing or failed on a side) is "
                                        "reported, not failed", flag_action=True)
STRICT = Option("strict", "a 'slower' gate an inconclusive verdict cannot decide (its CI "
                          "reaches past the limit) fails too (default: reported as "
                          "undecided)", flag_action=True)


def add_verdict_options(parser, noise_default: str) -> None:
    """The options of the commands that judge A/B verdicts and gates (`ab`, `compare`):
    --fail-on, --allow-missing, --strict, --noise (its default told by `noise_default`),
    --alpha, --json, --markdown, --wide."""
    from benchkit.core.compare.comparison import DEFAULT_ALPHA
    FAIL_ON.add(parser)
    ALLOW_MISSING.add(parser)
    STRICT.add(parser)
    parser.add_argument("--noise", type=types.percent, default=None, metavar="PCT",
                        help=f"changes inside +-PCT count as noise (default {noise_default})")
    parser.add_argument("--alpha", type=types.probability, default=DEFAULT_ALPHA,
                        metavar="ALPHA", help=f"significance level (default {DEFAULT_ALPHA:g})")
    parser.add_argument("--json", action="store_true", help="print the verdicts as JSON")
    parser.add_argument("--markdown", action="store_true", help="print the table as markdown")
    types.add_wide(parser)
