"""`benchkit history run`: install and measure a range of commits into the history; with
no suite, range or repository given, the ones of the asv.conf.json here."""
from __future__ import annotations

import sys
from pathlib import Path

from benchkit.cli.exit_codes import Outcome
from benchkit.cli.history.options import open_db
from benchkit.core.text import printable
from benchkit.errors import BenchkitError

RUN_PASSTHROUGH = ("callgrind", "no_wall_time", "fast")


def _run_args(args) -> list[str]:
    out = [f"--{name.replace('_', '-')}" for name in RUN_PASSTHROUGH
           if getattr(args, name, False)]
    for name in ("processes", "min_run_time"):
        if getattr(args, name, None) is not None:
            out += [f"--{name.replace('_', '-')}", str(getattr(args, name))]
    return out


def _from_asv_config(args) -> None:
    """What `history run` was not told, from the asv.conf.json here: the suite, the
    repository and the branches; one note line says what was taken and what was not."""
    from benchkit.orchestration.asv_config import read_asv_config
    config = read_asv_config(Path.cwd()) if not (args.paths and args.revs and args.repo) \
        else None
    if config is None:
        if not args.paths or not args.revs:
            raise BenchkitError(f"history run: no {'PATH' if not args.paths else '--revs'} "
                                "given and no asv.conf.json here; pass suite files or "
                                "directories and --revs A..B")
        return
    print(f"note: {printable(config.note())}", file=sys.stderr)
    args.paths = args.paths or [str(config.benchmark_dir)]
    if args.repo is None and config.repo is not None:
        args.repo = str(config.repo)
    args.revs = args.revs or list(config.branches) or ["HEAD"]


def cmd_run(args) -> Outcome | tuple[Outcome, ...]:
    """`benchkit history run PATH... --revs REVSPEC`."""
    from benchkit.orchestration import history
    from benchkit.cli.saving import progress
    if args.no_wall_time and not args.callgrind:
        raise BenchkitError("--no-wall-time without --callgrind measures nothing; add "
                            "--callgrind")
    _from_asv_config(args)
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
        try:
            outcomes = history.run_history(
                db, repo, commits, paths, _run_args(args), machine=machine,
                install=args.install, skip_existing=args.skip_existing,
                metrics=[m for m, wanted in (("time", not counts_only),
                                             ("instructions", args.callgrind))
                         if wanted],
                on_revision=report)
        finally:
            bar.close()
        path = db.path
    tally = {s: sum(o.status == s for o in outcomes) for s in ("measured", "skipped",
                                                                "failed")}
    print(f"{len(outcomes)} revisions: {tally['measured']} measured, {tally['skipped']} "
          f"already there, {tally['failed']} failed; history in {path}")
    return Outcome.MEASUREMENT_FAILED if tally["failed"] else Outcome.OK
