"""`benchkit report`: the history database as a static dashboard, or as markdown."""
from __future__ import annotations

import sys

from benchkit.cli import args as types
from benchkit.cli.exit_codes import Outcome
from benchkit.cli.history.options import db_option, open_db, step_options
from benchkit.cli.history.output import held, narrowing
from benchkit.errors import ReportError
from benchkit.system.files import check_site_dir


def add_parsers(sub) -> None:
    """`report`."""
    report = sub.add_parser(
        "report", help="the history as a static HTML dashboard (or --markdown)",
        description="Write the history database as a static site that opens from the file "
                    "system (no server, no network): index.html lists the benchmarks, each "
                    "has a page of charts over commits with its change points.")
    report.add_argument("out_dir", nargs="?", metavar="OUT_DIR",
                        help="the site's directory (new, empty, or a report written before)")
    report.add_argument("--markdown", action="store_true",
                        help="print a markdown summary for a pull-request comment")
    report.add_argument("--machine", metavar="NAME", help="only this machine's series")
    report.add_argument("--env", metavar="NAME", help="only this environment's series")
    report.add_argument("--max-steps", type=types.positive_int, default=20, metavar="N",
                        help="with --markdown: list at most N change points (default 20)")
    step_options(report)
    db_option(report)


def cmd_report(args) -> Outcome | tuple[Outcome, ...]:
    """`benchkit report`."""
    from benchkit.orchestration.dashboard import gather, markdown_report, write_report
    if not args.out_dir and not args.markdown:
        raise ReportError("report: give OUT_DIR for the HTML site, or --markdown")
    if args.out_dir:
        check_site_dir(args.out_dir)
    with open_db(args, create=False) as db:
        report = gather(db, machine=args.machine, environment=args.env, alpha=args.alpha,
                        noise=args.noise)
        source = str(db.path)
        if not report.views and (args.machine is not None or args.env is not None):
            raise ReportError(f"{source}: no benchmarks with that "
                              f"{narrowing(args, ('machine', 'env'))}; "
                              f"{held(db.summaries())} (see `benchkit history list`)")
    if not report.views:
        raise ReportError(f"{source}: no benchmarks; add results with `benchkit history add` "
                          "first")
    if args.out_dir:
        out = write_report(report, args.out_dir, source=source)
        shared = f" ({len(report.shared)} shared by many series)" if report.shared else ""
        print(f"{len(report.views)} benchmarks, {report.commits} commits, {report.steps} "
              f"change points{shared}: {out / 'index.html'}", file=sys.stderr)
    if args.markdown:
        print(markdown_report(report, args.max_steps), end="")
    return Outcome.OK


COMMANDS = {"report": cmd_report}
