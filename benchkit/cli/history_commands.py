"""`benchkit history ...` and `benchkit bisect`: the history database at the command line."""
from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from pathlib import Path

from benchkit.cli import args as types
from benchkit.cli.exit_codes import ExitCode
from benchkit.core.text import printable
from benchkit.errors import BenchkitError

RUN_PASSTHROUGH = ("callgrind", "no_wall_time", "fast")


def db_option(parser) -> None:
    """--db PATH."""
    parser.add_argument("--db", metavar="PATH",
                        help="history database (default: $BENCHKIT_DB, else "
                             ".benchkit/history.db at the top of the git checkout)")


def _metric(text: str):
    from benchkit.core.history.series import HistoryMetric
    try:
        return HistoryMetric(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: choose time or instructions") from None


def add_parsers(sub) -> None:
    """`history` (add, list, show, export, regressions, run) and `bisect`."""
    history = sub.add_parser("history", help="performance over commits: a history database")
    hsub = history.add_subparsers(dest="history_command", required=True, metavar="ACTION")

    add = hsub.add_parser("add", help="add results files to the history")
    add.add_argument("files", nargs="+", metavar="FILE")
    add.add_argument("--commit", metavar="SHA", help="the commit measured (default: the "
                                                     "file's fingerprint)")
    add.add_argument("--machine", metavar="NAME", help="default: the file's host name")
    db_option(add)

    listing = hsub.add_parser("list", help="benchmarks, machines and commits held")
    db_option(listing)

    show = hsub.add_parser("show", help="one benchmark's series as a table")
    show.add_argument("benchmark", metavar="BENCHMARK")
    show.add_argument("--machine", metavar="NAME")
    show.add_argument("--metric", type=_metric, default=None, metavar="time|instructions")
    db_option(show)

    export = hsub.add_parser("export", help="every observation as JSON or CSV")
    export.add_argument("--format", choices=("json", "csv"), default="json")
    export.add_argument("-o", "--output", metavar="FILE", help="default: standard output")
    db_option(export)

    regressions = hsub.add_parser("regressions", help="the steps in every series")
    regressions.add_argument("--machine", metavar="NAME")
    regressions.add_argument("--metric", type=_metric, default=None,
                             metavar="time|instructions")
    regressions.add_argument("--benchmark", metavar="NAME")
    regressions.add_argument("--since", metavar="REV",
                             help="only steps from this commit on (a commit id or prefix)")
    regressions.add_argument("--noise", type=types.percent, default=0.02, metavar="PCT",
                             help="wall-time steps must clear this band (default 2%%)")
    regressions.add_argument("--alpha", type=types.probability, default=0.01)
    regressions.add_argument("--fail-on", type=types.gate, action="append", default=[],
                             metavar="GATE", help="exit 1 when a step breaks the gate "
                                                  "(slower>5%%, instructions>1%%)")
    regressions.add_argument("--json", action="store_true", help="print the steps as JSON")
    db_option(regressions)

    asv = hsub.add_parser("import-asv", help="add an asv results directory's runs")
    asv.add_argument("results_dir", metavar="RESULTS_DIR",
                     help="asv's results directory (holding benchmarks.json and a folder "
                          "per machine)")
    asv.add_argument("--machine", metavar="NAME", help="default: each file's asv machine name")
    asv.add_argument("--repo", metavar="DIR",
                     help="the project's git checkout: commit subjects and order from it")
    db_option(asv)

    run = hsub.add_parser("run", help="measure a range of commits and add them")
    _revision_options(run)
    run.add_argument("--revs", nargs="+", required=True, metavar="REVSPEC",
                     help="A..B as git rev-list reads it, or explicit revisions")
    run.add_argument("--steps", type=types.positive_int, metavar="N",
                     help="at most N revisions, spread evenly over the range")
    run.add_argument("--skip-existing", action=argparse.BooleanOptionalAction,
                     default=True, help="skip commits the history already holds (default)")
    run.add_argument("--callgrind", action="store_true", help="also count instructions")
    run.add_argument("--no-wall-time", action="store_true",
                     help="with --callgrind: counts only")
    run.add_argument("--fast", action="store_true", help="`benchkit run --fast`")
    run.add_argument("--processes", type=types.positive_int, metavar="N",
                     help="`benchkit run --processes N` (wall time)")
    run.add_argument("--min-run-time", type=types.positive_float, metavar="S",
                     help="`benchkit run --min-run-time S` (wall time)")

    bisect = sub.add_parser("bisect", help="find the commit that changed a benchmark")
    _revision_options(bisect)
    bisect.add_argument("--good", required=True, metavar="REV")
    bisect.add_argument("--bad", required=True, metavar="REV")
    bisect.add_argument("--benchmark", required=True, metavar="NAME")
    bisect.add_argument("--metric", type=_metric, default=_metric("instructions"),
                        metavar="instructions|time")
    bisect.add_argument("--threshold", type=types.percent, default=0.01, metavar="PCT",
                        help="a change beyond this is bad (default 1%%)")
    bisect.add_argument("--rounds", type=types.positive_int, metavar="R",
                        help="with --metric time: rounds of each `ab` (its default: 8)")
    bisect.add_argument("--json", action="store_true", help="print the result as JSON")


def _revision_options(parser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH", help="suite files or directories")
    parser.add_argument("--repo", metavar="DIR", help="git repository (default .)")
    parser.add_argument("--install", metavar="CMD", help="install command, as for `ab`")
    parser.add_argument("--machine", metavar="NAME", help="default: this host's name")
    db_option(parser)


def open_db(args, create: bool = True):
    """The history database --db names (or the default one)."""
    from benchkit.system.history_db import HistoryDB, default_path
    path = Path(args.db) if args.db else default_path(getattr(args, "repo", None))
    return HistoryDB(path, create=create)


def history_option(parser) -> None:
    """`--history` of `run` and `ab`."""
    parser.add_argument("--history", action="store_true",
                        help="also add what was measured to the history database")
    parser.add_argument("--db", metavar="PATH", help="with --history: the database "
                                                     "(default as for `benchkit history`)")


def add_to_history(args, path: Path, rev: str | None = None) -> None:
    """Add a results file just written (`--history` of `run` and `ab`); `rev` is the
    revision measured when it is not the working directory's commit."""
    from benchkit.orchestration.history import add_file, commit_of, git_root
    commit = None
    repo = None
    if rev is not None:
        repo = git_root(getattr(args, "repo", None))
        commit = commit_of(repo, rev, required="--new-rev").sha
    with open_db(args) as db:
        added = add_file(db, path, commit=commit, repo=repo)
        print(f"{added.observations} observations added to {db.path}", file=sys.stderr)


def _format_value(metric, value: float) -> str:
    from benchkit.core.stats import format_time
    return format_time(value) if str(metric) == "time" else f"{value:,.0f}"


def cmd_add(args) -> int:
    """`benchkit history add FILE...`."""
    from benchkit.orchestration.history import add_file
    for path in args.files:
        if not Path(path).exists():
            raise BenchkitError(f"{path}: no such file")
    with open_db(args) as db:
        for path in args.files:
            added = add_file(db, path, commit=args.commit, machine=args.machine)
            if added.run is None:
                print(f"{printable(path)}: already in the history ({db.path})")
            else:
                print(f"{printable(path)}: {added.observations} observations added to "
                      f"{db.path}")
    return ExitCode.OK


def cmd_list(args) -> int:
    """`benchkit history list`."""
    from tabulate import tabulate
    with open_db(args, create=False) as db:
        rows = [(printable(s.benchmark), s.metric, ", ".join(map(printable, s.machines)),
                 s.commits, s.observations, f"{s.first[:12]}..{s.last[:12]}")
                for s in db.summaries()]
        failures = db.failures()
    if not rows:
        print("the history holds nothing yet; add results with `benchkit history add FILE`")
    else:
        print(tabulate(rows, headers=("benchmark", "metric", "machines", "commits",
                                      "observations", "commits (oldest..newest)")))
    for sha, machine, when, message in failures:
        print(f"failed revision {sha[:12]} on {printable(machine)} ({when}): "
              f"{printable(message.splitlines()[0] if message else '')}")
    return ExitCode.OK


def cmd_show(args) -> int:
    """`benchkit history show BENCHMARK`."""
    from tabulate import tabulate
    with open_db(args, create=False) as db:
        found = db.series(benchmark=args.benchmark, metric=args.metric, machine=args.machine)
        if not found:
            names = sorted({s.benchmark for s in db.summaries()})
            narrowed = " with that --machine/--metric" if args.machine or args.metric else ""
            raise BenchkitError(f"no series of benchmark {args.benchmark!r}{narrowed} in "
                                f"{db.path}; benchmarks held: {names[:20]} (see `benchkit "
                                "history list`)")
    for series in found:
        print(f"== {printable(series.benchmark)} — {series.metric} per run on "
              f"{printable(series.machine)}")
        rows = [(p.commit.sha[:12], p.commit.date[:19], _format_value(series.metric, p.value),
                 f"{_format_value(series.metric, p.low)} .. "
                 f"{_format_value(series.metric, p.high)}", p.observations,
                 printable(p.commit.message[:50])) for p in series.points]
        print(tabulate(rows, headers=("commit", "date", str(series.metric), "range", "runs",
                                      "message")))
        print()
    return ExitCode.OK


def cmd_export(args) -> int:
    """`benchkit history export`."""
    with open_db(args, create=False) as db:
        rows = list(db.rows())
    if args.format == "json":
        text = json.dumps(rows, indent=1)
    else:
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=list(rows[0]) if rows else ["benchmark"])
        writer.writeheader()
        writer.writerows(rows)
        text = buffer.getvalue()
    if args.output:
        from benchkit.system.files import atomic_write_bytes
        atomic_write_bytes(args.output, text.encode())
        print(f"wrote {len(rows)} observations to {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return ExitCode.OK


def cmd_import_asv(args) -> int:
    """`benchkit history import-asv`."""
    from benchkit.orchestration.asv_import import import_asv
    from benchkit.orchestration.history import git_root
    repo = git_root(args.repo) if args.repo else None
    with open_db(args) as db:
        done = import_asv(db, args.results_dir, machine=args.machine, repo=repo)
        print(f"{done.files} asv results files: {done.added} added ({done.observations} "
              f"observations), {done.already} already there; {db.path}")
    if done.skipped:
        print(f"not imported (not time benchmarks, or no result): "
              f"{', '.join(printable(s) for s in done.skipped[:10])}"
              + (f" and {len(done.skipped) - 10} more" if len(done.skipped) > 10 else ""))
    return ExitCode.OK


def _breaks(step, gates) -> bool:
    from benchkit.core.gates import Metric
    wanted = Metric.INSTRUCTIONS if str(step.metric) == "instructions" else Metric.SLOWER
    return any(g.metric is wanted and step.change > g.limit for g in gates)


def cmd_regressions(args) -> int:
    """`benchkit history regressions`."""
    from benchkit.orchestration.history import find_steps
    with open_db(args, create=False) as db:
        since = None
        if args.since:
            matches = db.commits_matching(args.since)
            if not matches:
                raise BenchkitError(f"--since {args.since!r}: no such commit in {db.path}")
            since = matches[0]
        steps = find_steps(db, machine=args.machine, benchmark=args.benchmark,
                           metric=args.metric, since=since, alpha=args.alpha,
                           noise=args.noise)
    broken = [s for s in steps if _breaks(s, args.fail_on)]
    if args.json:
        print(json.dumps([s.to_json() for s in steps], indent=1))
    elif not steps:
        print("no steps found")
    for step in steps if not args.json else []:
        mark = "  <- breaks a gate" if step in broken else ""
        print(f"{printable(step.benchmark)} [{step.metric}, {printable(step.machine)}]: "
              f"{step.change:+.2%} (interval {step.ci_low:+.2%} .. {step.ci_high:+.2%}) at "
              f"{step.commit.sha[:12]} {printable(step.commit.message[:60])!r} (after "
              f"{step.previous.sha[:12]}){mark}")
        print(f"    {_format_value(step.metric, step.before)} -> "
              f"{_format_value(step.metric, step.after)}; {step.evidence}")
        for f in step.functions:
            print(f"    {f.delta:+14,.1f}  {printable(f.function)}")
    return ExitCode.FAILED if broken else ExitCode.OK


def _run_args(args) -> list[str]:
    out = [f"--{name.replace('_', '-')}" for name in RUN_PASSTHROUGH
           if getattr(args, name, False)]
    for name in ("processes", "min_run_time"):
        if getattr(args, name, None) is not None:
            out += [f"--{name.replace('_', '-')}", str(getattr(args, name))]
    return out


def cmd_run(args) -> int:
    """`benchkit history run PATH... --revs REVSPEC`."""
    from benchkit.orchestration import history
    from benchkit.cli.saving import progress
    if args.no_wall_time and not args.callgrind:
        raise BenchkitError("--no-wall-time without --callgrind measures nothing; add "
                            "--callgrind")
    paths = [str(Path(p).resolve()) for p in args.paths]
    for path in paths:
        if not Path(path).exists():
            raise BenchkitError(f"{path}: no such file or directory")
    from benchkit.orchestration.sampling.sides import check_install
    check_install(args.install)
    repo = history.git_root(args.repo)
    commits = history.revisions(repo, args.revs, args.steps)
    machine = args.machine or history.this_machine()
    counts_only = args.callgrind and args.no_wall_time
    bar = progress("revisions")
    bar.total = len(commits)

    def report(outcome) -> None:
        bar.update(1)
        print(f"{outcome.commit.sha[:12]} {outcome.status}: "
              f"{printable(outcome.detail.splitlines()[0] if outcome.detail else '')}",
              file=sys.stderr)

    with open_db(args) as db:
        from benchkit.core.history.series import HistoryMetric
        try:
            outcomes = history.run_history(
                db, repo, commits, paths, _run_args(args), machine=machine,
                install=args.install, skip_existing=args.skip_existing,
                metric=HistoryMetric.INSTRUCTIONS if counts_only else None,
                on_revision=report)
        finally:
            bar.close()
        path = db.path
    tally = {s: sum(o.status == s for o in outcomes) for s in ("measured", "skipped",
                                                                "failed")}
    print(f"{len(outcomes)} revisions: {tally['measured']} measured, {tally['skipped']} "
          f"already there, {tally['failed']} failed; history in {path}")
    return ExitCode.FAILED if tally["failed"] else ExitCode.OK


def cmd_bisect(args) -> int:
    """`benchkit bisect PATH... --good REV --bad REV --benchmark NAME`."""
    import tempfile
    from benchkit.orchestration import history
    from benchkit.system.processes import owned_prefix
    from benchkit.orchestration.sampling.sides import check_install
    check_install(args.install)
    paths = [str(Path(p).resolve()) for p in args.paths]
    repo = history.git_root(args.repo)
    good = history.commit_of(repo, args.good, required="--good")
    bad = history.commit_of(repo, args.bad, required="--bad")
    commits = history.revisions(repo, [f"{good.sha}..{bad.sha}"])
    counting = str(args.metric) == "instructions"
    run_args = ["--callgrind", "--no-wall-time"] if counting else []
    machine = args.machine or history.this_machine()

    def report(step) -> None:
        change = "?" if step.change is None else f"{step.change:+.2%}"
        print(f"{step.commit.sha[:12]} {'bad ' if step.bad else 'good'} {change} "
              f"({step.how}) {printable(step.commit.message[:60])}", file=sys.stderr)

    with open_db(args) as db, tempfile.TemporaryDirectory(prefix=owned_prefix("bisect")) as tmp:
        judge = history.Judge(db, repo, paths, args.benchmark, args.metric, args.threshold,
                              machine, args.install, run_args,
                              ["--rounds", str(args.rounds)] if args.rounds else [], Path(tmp))
        found = history.bisect(judge, commits, good, on_step=report)
    if args.json:
        print(json.dumps(found.to_json(), indent=1))
        return ExitCode.OK
    change = "?" if found.change is None else f"{found.change:+.2%}"
    print(f"first bad commit: {found.first_bad.sha} {printable(found.first_bad.message)!r}")
    print(f"  {args.metric} {change} against {good.sha[:12]}; last good "
          f"{found.last_good.sha[:12]}; {len(found.steps)} revisions judged "
          f"(of {len(commits)} commits)")
    for f in found.functions:
        print(f"    {f.delta:+14,.1f}  {printable(f.function)}")
    return ExitCode.OK


_HISTORY = {"add": cmd_add, "list": cmd_list, "show": cmd_show, "export": cmd_export,
            "regressions": cmd_regressions, "run": cmd_run, "import-asv": cmd_import_asv}


def cmd_history(args) -> int:
    """`benchkit history ACTION`."""
    return _HISTORY[args.history_command](args)


COMMANDS = {"history": cmd_history, "bisect": cmd_bisect}
