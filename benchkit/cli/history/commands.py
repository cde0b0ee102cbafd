"""`benchkit history ...` and `benchkit bisect`: the history database at the command line."""
from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from pathlib import Path

from benchkit.cli import args as types
from benchkit.cli import shared_options as shared
from benchkit.cli.exit_codes import Outcome
from benchkit.cli.history.confirm import confirmed
from benchkit.cli.history.options import (db_option, metric_type, open_db, revision_options,
                                         step_options)
from benchkit.cli.history.run import cmd_run
from benchkit.cli.history.output import (breaks_a_gate, check_gates, format_value, held,
                                         narrowing, place, shared_json, shared_line,
                                         summary_line, warn_by_date, warn_host_named,
                                         warn_shared_places)
from benchkit.core.text import printable
from benchkit.errors import BenchkitError, HistoryError


ENV_HELP = ("only this environment's series (as `history list` names them, e.g. asv's "
            "py3.11-numpy1.26)")


def add_parsers(sub) -> None:
    """`history` (add, list, show, export, regressions, import-asv, run)."""
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
    show.add_argument("--env", metavar="NAME", help=ENV_HELP)
    show.add_argument("--metric", type=metric_type, default=None, metavar="METRIC",
                      help="time, instructions, mem, peakmem or track")
    db_option(show)

    export = hsub.add_parser("export", help="every observation as JSON or CSV")
    export.add_argument("--format", choices=("json", "csv"), default="json")
    export.add_argument("-o", "--output", metavar="FILE", help="default: standard output")
    db_option(export)

    regressions = hsub.add_parser("regressions", help="the steps in every series")
    regressions.add_argument("--machine", metavar="NAME")
    regressions.add_argument("--env", metavar="NAME", help=ENV_HELP)
    regressions.add_argument("--metric", type=metric_type, default=None,
                             metavar="METRIC",
                             help="time, instructions, mem, peakmem or track")
    regressions.add_argument("--benchmark", metavar="NAME")
    regressions.add_argument("--since", metavar="REV",
                             help="only steps from this commit on (a commit id or prefix)")
    step_options(regressions)
    regressions.add_argument("--fail-on", type=types.gate, action="append", default=[],
                             metavar="GATE", help="exit 1 when a step breaks the gate "
                                                  "(slower>5%%, instructions>1%%)")
    regressions.add_argument("--all", action="store_true",
                             help="also list transient steps (a level that came back: a slow "
                                  "spell or a revert)")
    regressions.add_argument("--confirm", nargs="+", metavar="PATH",
                             help="re-measure each wall-time step at its two commits, "
                                  "interleaved as `ab` does, with the suite at PATH: the "
                                  "step is confirmed, rejected or not re-measurable")
    regressions.add_argument("--repo", metavar="DIR",
                             help="with --confirm: the project's git checkout (default .)")
    regressions.add_argument("--install", metavar="CMD",
                             help="with --confirm: install command, as for `ab`")
    regressions.add_argument("--rounds", type=types.positive_int, metavar="R",
                             help="with --confirm: a fixed design of R rounds per `ab`")
    regressions.add_argument("--json", action="store_true", help="print the steps as JSON")
    db_option(regressions)

    asv = hsub.add_parser("import-asv", help="add an asv results directory's runs")
    asv.add_argument("results_dir", metavar="RESULTS_DIR",
                     help="asv's results directory (holding benchmarks.json and a folder "
                          "per machine)")
    asv.add_argument("--machine", metavar="NAME", help="default: each file's asv machine name")
    asv.add_argument("--repo", metavar="DIR",
                     help="the project's git checkout or a bare clone of it: commit "
                          "subjects and order from it")
    db_option(asv)

    run = hsub.add_parser("run", help="measure a range of commits and add them")
    revision_options(run, paths="*")
    run.add_argument("--revs", nargs="+", metavar="REVSPEC",
                     help="A..B as git rev-list reads it, or explicit revisions (default: "
                          "the branches of asv.conf.json when it is here)")
    run.add_argument("--steps", type=types.positive_int, metavar="N",
                     help="at most N revisions, spread evenly over the range")
    run.add_argument("--skip-existing", action=argparse.BooleanOptionalAction,
                     default=True, help="skip commits the history already holds (default)")
    shared.CALLGRIND.add(run)
    shared.NO_WALL_TIME.add(run)
    shared.FAST.add(run)
    shared.PROCESSES.add(run, default=shared.RUN_PROCESSES)
    shared.MIN_RUN_TIME.add(run, default=shared.RUN_MIN_RUN_TIME)


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


def cmd_add(args) -> Outcome | tuple[Outcome, ...]:
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
    return Outcome.OK


def cmd_list(args) -> Outcome | tuple[Outcome, ...]:
    """`benchkit history list`."""
    from tabulate import tabulate
    with open_db(args, create=False) as db:
        summaries = db.summaries()
        failures = db.failures()
    rows = [(printable(s.benchmark), s.metric, ", ".join(map(printable, s.machines)),
             len(s.environments), s.commits, s.observations, s.failed,
             f"{s.first[:12]}..{s.last[:12]}") for s in summaries]
    if not rows:
        print("the history holds nothing yet; add results with `benchkit history add FILE`")
    else:
        print(tabulate(rows, headers=("benchmark", "metric", "machines", "environments",
                                      "commits", "observations", "failed",
                                      "commits (oldest..newest)")))
        names = sorted({env for s in summaries for env in s.environments if env})
        if names:
            print(f"environments (--env): {', '.join(map(printable, names))}")
    for sha, machine, when, message in failures:
        print(f"failed revision {sha[:12]} on {printable(machine)} ({when}): "
              f"{printable(message.splitlines()[0] if message else '')}")
    return Outcome.OK


def cmd_show(args) -> Outcome | tuple[Outcome, ...]:
    """`benchkit history show BENCHMARK`."""
    from tabulate import tabulate
    with open_db(args, create=False) as db:
        found = db.series(benchmark=args.benchmark, metric=args.metric, machine=args.machine,
                          environment=args.env)
        if not found:
            narrowed = narrowing(args, ("machine", "env", "metric"))
            raise BenchkitError(f"no series of benchmark {args.benchmark!r}"
                                f"{' with that ' + narrowed if narrowed else ''} in {db.path}; "
                                f"{held(db.summaries())} (see `benchkit history list`)")
    warn_by_date(found)
    warn_shared_places(found)
    for series in found:
        print(f"== {printable(series.benchmark)} — {series.metric} per run on "
              f"{place(series)}")
        rows = [(p.commit, (p.commit.sha[:12], p.commit.date[:19],
                            format_value(series.metric, p.value, series.unit),
                            f"{format_value(series.metric, p.low, series.unit)} .. "
                            f"{format_value(series.metric, p.high, series.unit)}",
                            p.observations, printable(p.commit.message[:50])))
                for p in series.points]
        rows += [(c, (c.sha[:12], c.date[:19], str(status), "", 0,
                      printable(c.message[:50]))) for c, status in series.failed]
        # failed commits in their place in the series' order
        rows = [row for _, row in sorted(rows, key=lambda r: (
            (r[0].date,) if series.by_date else (r[0].order if r[0].order is not None
                                                 else -1, r[0].date)))]
        print(tabulate(rows, headers=("commit", "date", str(series.metric), "range", "runs",
                                      "message")))
        print()
    return Outcome.OK


def cmd_export(args) -> Outcome | tuple[Outcome, ...]:
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
    return Outcome.OK


def cmd_import_asv(args) -> Outcome | tuple[Outcome, ...]:
    """`benchkit history import-asv`."""
    from benchkit.orchestration.asv_import import history_root, import_asv
    repo = history_root(args.repo) if args.repo else None

    def progress(done: int, total: int, skipped: int) -> None:
        if total > 500:
            print(f"import-asv: {done}/{total} files read, {skipped} skipped", file=sys.stderr)

    with open_db(args) as db:
        done = import_asv(db, args.results_dir, machine=args.machine, repo=repo,
                          progress=progress)
        print(f"{done.files} asv results files: {done.added} added ({done.observations} "
              f"values, {done.failed} failed or skipped benchmarks), {done.already} already "
              f"there, {len(done.skipped_files)} skipped; {db.path}")
    if done.skipped_files:
        print(f"skipped files: {printable(done.skipped_summary())}")
    if done.outdated:
        print(f"left out, as asv publish leaves them out: {done.outdated} results of "
              "benchmarks measured with older code (their version is not benchmarks.json's)")
    if done.ignored:
        print(f"not followed (benchmark types the history does not keep): "
              f"{', '.join(printable(s) for s in done.ignored[:10])}"
              + (f" and {len(done.ignored) - 10} more" if len(done.ignored) > 10 else ""))
    if done.index_problem:
        print(f"warning: {printable(str(Path(args.results_dir) / 'benchmarks.json'))} "
              f"{printable(done.index_problem)}: parameters are named as asv names them "
              "without it (param1, param2, ...) and each benchmark's type comes from its "
              "name's prefix; copy asv's benchmarks.json next to the machine folders",
              file=sys.stderr)
    if not args.machine:
        warn_host_named(done.runs_per_machine, "runs",
                        "import into a new --db with --machine NAME")
    if done.ordered_by == "date":
        print("warning: commits are ordered by commit date (UTC); pass --repo with the "
              "project's checkout to order them by its first-parent history", file=sys.stderr)
    elif done.ordered_by == "shallow":
        print("warning: --repo is a shallow clone: commits are ordered by commit date (UTC); "
              "fetch its whole history (`git fetch --unshallow`) to order them by its "
              "first-parent history", file=sys.stderr)
    return Outcome.OK


def cmd_regressions(args) -> Outcome | tuple[Outcome, ...]:
    """`benchkit history regressions`."""
    from benchkit.core.history.changes import environment_changes
    from benchkit.core.history.steps import series_counts, shared_steps
    from benchkit.orchestration.history import find_steps
    with open_db(args, create=False) as db:
        since = None
        if args.since:
            matches = db.commits_matching(args.since)
            if not matches:
                raise BenchkitError(f"--since {args.since!r}: no such commit in {db.path}")
            since = matches[0]
        series_list = db.series(benchmark=args.benchmark, metric=args.metric,
                                machine=args.machine, environment=args.env)
        if not series_list and (args.machine is not None or args.env is not None
                                or args.benchmark is not None or args.metric is not None):
            # a mistyped filter must not pass a --fail-on gate as "no steps found"
            raise BenchkitError(f"no series with that {narrowing(args)} in {db.path}; "
                                f"{held(db.summaries())} (see `benchkit history list`)")
        steps = find_steps(db, since=since, alpha=args.alpha, noise=args.noise,
                           benchmark=args.benchmark, metric=args.metric,
                           machine=args.machine, environment=args.env,
                           series_list=series_list)
    check_gates(args.fail_on, series_list)
    warn_by_date(series_list)
    warn_shared_places(series_list)
    # a machine's longest series: its commits, without a pass over every point
    longest: dict[str, int] = {}
    for series in series_list:
        longest[series.machine] = max(longest.get(series.machine, 0), len(series.points))
    warn_host_named(longest.values(), "commits",
                    "add their results with --machine NAME (history add, import-asv)")
    if args.confirm:
        steps = confirmed(args, steps)
        try:
            with open_db(args, create=False) as db:
                db.keep_confirmations(steps)
        except HistoryError as error:   # the verdicts are printed all the same
            print(f"warning: the verdicts were not kept: {error}", file=sys.stderr)
    changes = environment_changes(series_list)
    shown = [s for s in steps if args.all or not s.transient]
    # a pending step (the newest few commits) breaks a gate once --confirm confirms it
    broken = [s for s in steps if s.to_act_on and breaks_a_gate(s, args.fail_on)]
    shared = shared_steps(steps, series_counts(series_list))
    group_of = {id(st): group for group in shared for st in group.steps}
    if args.json:
        print(json.dumps([dict(s.to_json(), shared=shared_json(group_of.get(id(s))))
                          for s in shown] + [c.to_json() for c in changes], indent=1))
    elif not shown:
        hidden = len(steps) - len(shown)
        print("no steps found" + (f" ({hidden} transient: --all lists them)" if hidden else ""))
    for step in shown if not args.json else []:
        mark = "  <- breaks a gate" if step in broken else ""
        kind = step.mark
        after, through = step.range
        # imported results carry no commit subject: no empty quotes then
        subject = step.commit.message[:60]
        where = (f"at {step.commit.sha[:12]}" + (f" {printable(subject)!r}" if subject else "")
                 if step.placed else "not placed: somewhere")
        print(f"{printable(step.benchmark)} [{step.metric}, {place(step)}]: "
              f"{step.change:+.2%}{kind} (interval {step.ci_low:+.2%} .. {step.ci_high:+.2%}) "
              f"{where} (in {after.sha[:12]}..{through.sha[:12]}){mark}")
        if step.confirmation:
            print(f"    {printable(step.confirmation)}")
        print(f"    {format_value(step.metric, step.before)} -> "
              f"{format_value(step.metric, step.after)}; {step.evidence}")
        for f in step.functions:
            print(f"    {f.delta:+14,.1f}  {printable(f.function)}")
    for change in changes if not args.json else []:
        print(f"environment change {printable(change.benchmark)} [{change.metric}, "
              f"{printable(change.machine)}]: {printable(change.before)} -> "
              f"{printable(change.after)} at {change.commit.sha[:12]} (not a code change)")
    for group in shared if not args.json else []:
        print(shared_line(group))
    if shown and not args.json:
        print(summary_line(shown, len(steps) - len(shown), len(series_list), len(changes),
                           len(broken), len(shared)), file=sys.stderr)
    return Outcome.REGRESSION if broken else Outcome.OK


_HISTORY = {"add": cmd_add, "list": cmd_list, "show": cmd_show, "export": cmd_export,
            "regressions": cmd_regressions, "run": cmd_run, "import-asv": cmd_import_asv}


def cmd_history(args) -> Outcome | tuple[Outcome, ...]:
    """`benchkit history ACTION`."""
    return _HISTORY[args.history_command](args)


COMMANDS = {"history": cmd_history}
