"""The options the history commands share (history, report, bisect, and `--history` of run
and ab), declared once, and the database they name."""
from __future__ import annotations

import argparse
import os
from pathlib import Path

from benchkit.cli import args as types


def db_option(parser) -> None:
    """--db PATH."""
    parser.add_argument("--db", metavar="PATH",
                        help="history database (default: $BENCHKIT_DB, else "
                             ".benchkit/history.db at the top of the git checkout)")


def step_options(parser) -> None:
    """--noise and --alpha: how sure a wall-time step must be (history regressions, report)."""
    from benchkit.core.history.time_steps import DEFAULT_ALPHA, DEFAULT_NOISE, SIGMAS
    parser.add_argument("--noise", type=types.percent, default=DEFAULT_NOISE, metavar="PCT",
                        help=f"wall-time steps must clear this band and {SIGMAS:g} times the "
                             f"series' own noise (default {DEFAULT_NOISE:.0%})"
                             .replace("%", "%%"))
    parser.add_argument("--alpha", type=types.probability, default=DEFAULT_ALPHA,
                        metavar="P", help=f"false-step rate a series may have; lower reports "
                                          f"fewer steps (default {DEFAULT_ALPHA:g})")


def metric_type(text: str):
    """--metric: a history metric."""
    from benchkit.core.metrics.metric import history_metric, history_metrics
    try:
        return history_metric(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: choose one of "
                                         f"{', '.join(history_metrics())}") from None


def revision_options(parser, paths: str = "+") -> None:
    """The options of commands that install and measure revisions (history run, bisect)."""
    parser.add_argument("paths", nargs=paths, metavar="PATH",
                        help="suite files or directories" + (
                            " (default: asv.conf.json's benchmark_dir)" if paths == "*" else ""))
    parser.add_argument("--repo", metavar="DIR", help="git repository (default .)")
    parser.add_argument("--install", metavar="CMD", help="install command, as for `ab`")
    parser.add_argument("--machine", metavar="NAME", help="default: this host's name")
    db_option(parser)


DB_ENV = "BENCHKIT_DB"
DEFAULT_RELATIVE = Path(".benchkit") / "history.db"


def default_path(cwd: str | os.PathLike | None = None) -> Path:
    """BENCHKIT_DB, else `.benchkit/history.db` at the top of the git checkout holding `cwd`
    (or in `cwd` itself outside one)."""
    from benchkit.system.git import toplevel
    if os.environ.get(DB_ENV):
        return Path(os.environ[DB_ENV])
    cwd = Path(cwd or os.getcwd())
    return (toplevel(cwd) or cwd) / DEFAULT_RELATIVE


def open_db(args, create: bool = True):
    """The history database --db names (or the default one)."""
    from benchkit.system.history_db import HistoryDB
    path = Path(args.db) if args.db else default_path(getattr(args, "repo", None))
    return HistoryDB(path, create=create)


def history_option(parser) -> None:
    """`--history` of `run` and `ab`."""
    parser.add_argument("--history", action="store_true",
                        help="also add what was measured to the history database")
    parser.add_argument("--db", metavar="PATH", help="with --history: the database "
                                                     "(default as for `benchkit history`)")
