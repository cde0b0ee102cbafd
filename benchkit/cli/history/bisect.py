"""`benchkit bisect`: the commit that changed a benchmark, at the command line."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from benchkit.cli import args as types
from benchkit.cli.exit_codes import Outcome
from benchkit.cli.history.options import metric_type, open_db, revision_options
from benchkit.core.text import printable


def add_parsers(sub) -> None:
    """`bisect`."""
    bisect = sub.add_parser("bisect", help="find the commit that changed a benchmark")
    revision_options(bisect)
    bisect.add_argument("--good", required=True, metavar="REV",
                        help="a revision where the benchmark was as it should be")
    bisect.add_argument("--bad", required=True, metavar="REV",
                        help="a later revision where it changed")
    bisect.add_argument("--benchmark", required=True, metavar="NAME",
                        help="the benchmark's name, as `benchkit history list` shows it")
    bisect.add_argument("--metric", type=metric_type, default=metric_type("instructions"),
                        metavar="instructions|time",
                        help="what is judged: instruction counts (exact, the default) or "
                             "wall time (each revision by an interleaved `ab`)")
    bisect.add_argument("--threshold", type=types.percent, default=0.01, metavar="PCT",
                        help="a change beyond this is bad (default 1%%)")
    bisect.add_argument("--rounds", type=types.positive_int, metavar="R",
                        help="with --metric time: a fixed design of R rounds for each `ab` "
                             "(default: ab's sequential design)")
    bisect.add_argument("--json", action="store_true", help="print the result as JSON")


def cmd_bisect(args) -> Outcome | tuple[Outcome, ...]:
    """`benchkit bisect PATH... --good REV --bad REV --benchmark NAME`."""
    import tempfile
    from benchkit.orchestration import history
    from benchkit.orchestration import bisect as bisection
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
        judge = bisection.Judge(db, repo, paths, args.benchmark, args.metric, args.threshold,
                              machine, args.install, run_args,
                              ["--rounds", str(args.rounds)] if args.rounds else [], Path(tmp))
        found = bisection.bisect(judge, commits, good, on_step=report)
    if args.json:
        print(json.dumps(found.to_json(), indent=1))
        return Outcome.OK
    change = "?" if found.change is None else f"{found.change:+.2%}"
    print(f"first bad commit: {found.first_bad.sha} {printable(found.first_bad.message)!r}")
    print(f"  {args.metric} {change} against {good.sha[:12]}; last good "
          f"{found.last_good.sha[:12]}; {len(found.steps)} revisions judged "
          f"(of {len(commits)} commits)")
    for f in found.functions:
        print(f"    {f.delta:+14,.1f}  {printable(f.function)}")
    return Outcome.OK


COMMANDS = {"bisect": cmd_bisect}
