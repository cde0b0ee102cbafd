"""`benchkit ab`: an interleaved A/B of two environments on the same suites, judged round by
round. A benchmark that fails on either side is recorded and the others go on; an A/B stopped
by Ctrl-C, SIGTERM or an error saves its finished rounds, marked partial, and removes the
worktrees and environments it made."""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from benchkit.cli import args as types
from benchkit.cli import shared_options as shared
from benchkit.cli import saving
from benchkit.cli.history import commands as history_commands
from benchkit.cli.history import options as history_options
from benchkit.cli.exit_codes import Outcome, comparison_outcome
from benchkit.cli.run_command import DEFAULT_TIMEOUT
from benchkit.errors import ArgumentCombinationError, BenchkitError, InvalidArgumentError

MAX_ROUNDS = 30
UNTIL_DECIDED_ROUNDS = 100


def add_parsers(sub) -> None:
    """The `ab` subcommand."""
    ab = sub.add_parser("ab", help="interleaved A/B of two environments on the same suites")
    ab.add_argument("paths", nargs="+", metavar="PATH", help="suite files or directories")
    shared.KEYWORD.add(ab)
    for side in ("base", "new"):
        ab.add_argument(f"--{side}-python", metavar="PYTHON",
                        help=f"interpreter of {side.upper()} (default: this one)")
        ab.add_argument(f"--{side}-env", action="append", metavar="NAME=VALUE",
                        help=f"environment variable for {side.upper()} (repeatable)")
        ab.add_argument(f"--{side}-rev", metavar="REV",
                        help=f"git revision of --repo installed as {side.upper()}")
    ab.add_argument("--repo", metavar="DIR", help="git repository of the revisions (default .)")
    ab.add_argument("--install", metavar="CMD",
                    help="shell command installing a revision: {src} is its checkout, {env} "
                         "the virtual environment to create, {python} this interpreter "
                         "(default: a venv seeing this one's packages + pip install {src})")
    ab.add_argument("--rounds", type=types.positive_int, metavar="R",
                    help="a fixed design: exactly R rounds for every benchmark, judged at "
                         "the end against a fixed band (default: sequential, each "
                         "benchmark stops once its verdict is clear)")
    ab.add_argument("--max-rounds", type=types.positive_int, metavar="N",
                    help=f"sequential: at most N rounds per benchmark (default "
                         f"{MAX_ROUNDS}; {UNTIL_DECIDED_ROUNDS} with --until-decided)")
    ab.add_argument("--max-time", type=types.positive_float, metavar="S",
                    help="sequential: start no round that would end more than S seconds "
                         "after the first began (default: no limit but --max-rounds)")
    ab.add_argument("--until-decided", action="store_true",
                    help=f"sequential: keep going up to {UNTIL_DECIDED_ROUNDS} rounds (or "
                         "--max-rounds, --max-time) until every verdict is clear")
    ab.add_argument("--equivalence-error", type=types.probability, metavar="P",
                    help="sequential: the error an 'unchanged' verdict may spend, the chance "
                         "of calling a change beyond the band unchanged (default 0.10; "
                         "claims spend --alpha)")
    ab.add_argument("--trials", type=types.positive_int, default=20, metavar="T",
                    help="back-to-back BASE/NEW trial pairs per benchmark per round (default 20)")
    ab.add_argument("--trial-time", type=types.positive_float, default=0.025, metavar="S",
                    help="seconds of one trial (default 0.025)")
    shared.NUM_THREADS.add(ab)
    ab.add_argument("--seed", type=int, metavar="N",
                    help="seed of the trial order, for a repeatable schedule (default: random)")
    ab.add_argument("--timeout", type=types.positive_float, default=DEFAULT_TIMEOUT,
                    metavar="S", help="seconds a benchmark's trial may take before the "
                                      f"benchmark is recorded as failed (default "
                                      f"{DEFAULT_TIMEOUT:g})")
    shared.add_verdict_options(ab, "sequential: each benchmark's round spread, at least "
                                  "1%%; with --rounds, 2%%")
    ab.add_argument("-o", "--output", metavar="FILE",
                    help="results file holding both sides; default results/ab-<time>.json")
    ab.add_argument("--save-sides", action="store_true",
                    help="also write FILE.base.json and FILE.new.json")
    shared.MEMORY.add(ab, help_suffix="; once per side, after the rounds")
    history_options.history_option(ab)


def cmd_ab(args) -> Outcome | tuple[Outcome, ...]:
    """`benchkit ab`: interleaved A/B of two environments, with verdicts and gates."""
    from benchkit.core.compare import comparison
    from benchkit.core.records.records import Side
    from benchkit.core.compare.report import comparison_to_json, format_comparison
    from benchkit.orchestration.sampling import interleaved, runs, sides
    from benchkit.system import machine
    from benchkit.system.results_files import check_writable

    for path in args.paths:
        if not Path(path).exists():
            raise BenchkitError(f"{path}: no such file or directory")
    stopping = _stopping(args)
    output = check_writable(args.output or saving.default_output("ab"))
    settings = runs.Settings(chunk_time=args.trial_time, seed=args.seed, timeout=args.timeout)
    revisions = {Side.BASE: args.base_rev, Side.NEW: args.new_rev}
    with sides.sides(base_python=args.base_python, new_python=args.new_python,
                     base_env=args.base_env, new_env=args.new_env, base_rev=args.base_rev,
                     new_rev=args.new_rev, repo=args.repo, install=args.install,
                     log=lambda m: print(m, file=sys.stderr)) as (base, new):
        measured = interleaved.Interleaved()

        def results(partial: str | None = None):
            return measured.results(base, new, revisions, args.trials, args.trial_time,
                                    args.seed, machine.collect(), partial)
        bar = saving.progress(f"A/B ({args.rounds} rounds)" if stopping is None else
                              f"A/B (up to {stopping.plan.max_rounds} rounds)")
        started = time.monotonic()
        try:
            interleaved.interleave(args.paths, base, new, rounds=args.rounds or 0,
                                   trials=args.trials, keyword=args.keyword,
                                   num_threads=args.num_threads, settings=settings,
                                   progress=bar, into=measured, stopping=stopping)
        except (BenchkitError, KeyboardInterrupt) as error:
            bar.close()
            if measured.rounds_done or measured.failures:
                saving.save(saving.partial_path(output),
                            results(saving.why_stopped(error, "the A/B")),
                            f"partial results ({measured.rounds_done} complete rounds)")
            raise
        bar.close()
        seconds_per_round = (time.monotonic() - started) / max(measured.rounds_done, 1)
        saved = results()
        if args.memory:
            _memory(args, {Side.BASE: base, Side.NEW: new}, saved)
    stored = saving.save(output, saved, "results", exclusive=args.output is None)
    written = stored.path
    if args.save_sides:
        for side, part in zip(Side, comparison.split_ab(saved)):
            saving.save(written.with_name(written.name.replace(".json", f".{side.value}.json",
                                                               1)), part, "results")
    compared = comparison.of_ab(saved, args.fail_on, noise=args.noise, alpha=args.alpha,
                                allow_missing=args.allow_missing, strict=args.strict)
    if args.json:
        print(json.dumps(comparison_to_json(compared), indent=1))
    else:
        print(format_comparison(compared, markdown=args.markdown,
                                width=types.table_width(args)))
        advice = settle_advice(compared, measured.rounds_done, seconds_per_round,
                               sequential=stopping is not None)
        if advice:
            print(advice)
    saving.report_failures(saved.failures, json_output=args.json)
    if args.history:
        history_commands.add_to_history(args, written, rev=args.new_rev)
    return (comparison_outcome(compared, allow_missing=args.allow_missing),
            saving.outcome(stored))


def _stopping(args):
    """The sequential design asked for (None: --rounds, a fixed one); options checked
    before any work starts."""
    from benchkit.core.decisions.sequential import EQUIVALENCE_ERROR, SequentialPlan
    from benchkit.orchestration.sampling.interleaved import Stopping
    sequential = (args.max_rounds or args.max_time or args.until_decided
                  or args.equivalence_error is not None)
    if args.rounds is not None:
        if sequential:
            raise ArgumentCombinationError(
                "--rounds is a fixed design; --max-rounds, --max-time, --until-decided and "
                "--equivalence-error belong to the sequential one: give one or the other")
        return None
    max_rounds = args.max_rounds or (UNTIL_DECIDED_ROUNDS if args.until_decided
                                     else MAX_ROUNDS)
    if max_rounds < 3:
        raise InvalidArgumentError("--max-rounds", max_rounds, "3 or more (a sequential A/B "
                                   "judges after 3 rounds at the earliest)")
    plan = SequentialPlan(max_rounds=max_rounds, first_look=min(5, max_rounds),
                          equivalence_error=args.equivalence_error or EQUIVALENCE_ERROR)
    return Stopping(plan, alpha=args.alpha, noise=args.noise, max_time=args.max_time)


def settle_advice(compared, rounds: int, seconds_per_round: float,
                  sequential: bool = False) -> str:
    """What it would take to settle the inconclusive verdicts at their current spread:
    the --rounds (or --max-rounds) to ask for and about how long that A/B would take."""
    import math

    from benchkit.core.decisions.verdicts import Verdict
    open_rows = [r for r in compared.rows if r.wall and r.wall.verdict is Verdict.INCONCLUSIVE]
    needed = [r.wall.to_settle for r in open_rows if math.isfinite(r.wall.to_settle)]
    if not needed:
        return ""
    total = max(int(max(needed)), rounds + 1)
    minutes = total * seconds_per_round / 60
    option = "--max-rounds" if sequential else "--rounds"
    return (f"to settle {len(needed)} inconclusive benchmark{'s' if len(needed) > 1 else ''} "
            f"at this spread: {option} {total} (about {minutes:.1f} min at this A/B's pace)")


def _memory(args, where: dict, saved) -> None:
    """Each side's memory per run, counted once in a memory worker of that side (exact
    figures need no interleaving), into `saved` (failures labelled with their side)."""
    import dataclasses

    from benchkit.core.records.records import Failure
    from benchkit.orchestration.memory import MemorySettings, counted
    from benchkit.orchestration.sampling.workers import SuiteLoad
    load = SuiteLoad(tuple(args.paths), args.keyword, args.num_threads)
    for side, interpreter in where.items():
        bar = saving.progress(f"memory ({side.value.upper()})")
        try:
            for benchmark, outcome in counted(load, MemorySettings(timeout=args.timeout),
                                              interpreter):
                bar.update()
                if isinstance(outcome, Failure):
                    saved.failures.append(dataclasses.replace(
                        outcome, error=f"{side.value.upper()}: {outcome.error}"))
                else:
                    outcome.metadata["side"] = side.value
                    saved.memory.append(outcome)
        finally:
            bar.close()


COMMANDS = {"ab": cmd_ab}
