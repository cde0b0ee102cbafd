"""Performance over time: results files added to the history database, a range of commits
measured one revision at a time (each installed as `ab` installs one), the steps found in
every series, and the first bad commit found by bisection."""
from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import datetime
import functools
import hashlib
import json
import multiprocessing
import os
import socket
import tempfile
from pathlib import Path
from typing import Callable, Sequence

from benchkit.core.history.changes import in_environment
from benchkit.core.history.machine import told_by_the_machine
from benchkit.core.history.machine.runners import on_one_kind_with
from benchkit.core.metrics.metric import metric_named
from benchkit.core.history.series import Commit, Series, observations
from benchkit.core.history.step import (steps_from_records, steps_to_records,
                                        with_confirmations)
from benchkit.core.history.steps import DEFAULT_ALPHA, DEFAULT_NOISE, Step, steps_of
from benchkit.errors import BenchkitError, HistoryError, RevisionError
from benchkit.system import results_files
from benchkit.system.bulk import paused_gc
from benchkit.system.history_db import AddedRun, HistoryDB, evidence_reader
from benchkit.system import git
from benchkit.system.processes import last_lines, owned_prefix, run_command


def git_root(repo: str | Path | None) -> Path:
    """The top of the git checkout at `repo` (default: the working directory)."""
    path = Path(repo or ".").resolve()
    top = git.toplevel(path)
    if top is None:
        raise RevisionError(f"--repo {path}: not inside a git repository; pass --repo with a "
                            "git checkout")
    return top


def commit_of(repo: Path | None, rev: str, *, required: str | None = None) -> Commit:
    """The commit `rev` names in `repo` with its date, first-parent position and subject.
    With `required` (the option that named it), `rev` must name a commit of `repo`, else a
    RevisionError names the option. Without it, `rev` is a commit id read from data: hex
    only (git.commit_id), and a bare id when no repository knows it."""
    if required:
        git.checked_name(rev, required)
    else:
        rev = git.commit_id(rev, "commit")
    sha = git.resolve(repo, rev, required or "commit") if repo is not None else None
    if sha:
        described = git.describe(repo, sha)
        if described is not None:
            date, subject, order = described
            return Commit(sha, date, order, subject)
    if required:
        raise RevisionError(f"{required}: {rev!r} is not a revision of {repo}; pass a branch, "
                            "tag or commit that `git rev-parse` knows")
    return Commit(rev, "", None, "")


def _range_ends(repo: Path, spec: str) -> list[str]:
    """`A..B` (either end defaulting to HEAD) or `^A`/`A` as resolved rev-list arguments."""
    def sha(name: str) -> str:
        found = git.resolve(repo, name, "--revs")
        if not found:
            raise RevisionError(f"--revs: {name!r} is not a revision of {repo}; pass a "
                                "branch, tag or commit that `git rev-parse` knows")
        return found
    if "..." in spec:
        raise RevisionError(f"--revs: {spec!r}: symmetric ranges (A...B) are not supported; "
                            "pass A..B")
    if ".." in spec:
        low, high = spec.split("..", 1)
        return [f"{sha(low or 'HEAD')}..{sha(high or 'HEAD')}"]
    if spec.startswith("^"):
        return [f"^{sha(spec[1:])}"]
    return [sha(spec)]


def revisions(repo: Path, revspec: Sequence[str], steps: int | None = None) -> list[Commit]:
    """The commits REVSPEC names, oldest first: a range on the first-parent line (`A..B`,
    `^A B`) or explicit revisions; with `steps`, at most that many spread evenly (first and
    last kept). Every name is checked and resolved before git lists anything."""
    for rev in revspec:
        git.checked_name(rev, "--revs")
    if len(revspec) == 1 and ".." in revspec[0] or any(r.startswith("^") for r in revspec):
        ranges = [end for spec in revspec for end in _range_ends(repo, spec)]
        listed = git.rev_list(repo, *ranges)
        if listed.returncode != 0:
            raise RevisionError(f"--revs {' '.join(revspec)}: git rev-list failed: "
                                f"{listed.stderr.strip()}")
        shas = listed.stdout.split()
    else:
        shas = [commit_of(repo, rev, required="--revs").sha for rev in revspec]
    if not shas:
        raise RevisionError(f"--revs {' '.join(revspec)}: names no commits")
    if steps and len(shas) > steps:
        picks = sorted({round(i * (len(shas) - 1) / (steps - 1)) for i in range(steps)}
                       if steps > 1 else {len(shas) - 1})
        shas = [shas[i] for i in picks]
    return [commit_of(repo, sha) for sha in shas]


def add_file(db: HistoryDB, path: str | Path, *, commit: str | None = None,
             machine: str | None = None, repo: Path | None = None) -> AddedRun:
    """Add one results file; the commit and machine default to its fingerprint's, and the
    commit's date and subject come from `repo` (default: the working directory's checkout).
    A merged file (`benchkit merge` of several machines' runs) adds one run per environment:
    each result keeps its own machine and environment."""
    results, digest = results_files.load_with_digest(path)
    repo = repo or git.toplevel(Path.cwd())
    parts = _by_environment(results)
    given = _given_commit(repo, commit) if commit is not None else None
    added = []
    for i, (env, part) in enumerate(parts):
        if given is not None:
            found = given
        else:
            sha = (env.get("git") or {}).get("commit") if isinstance(env.get("git"),
                                                                     dict) else None
            if not sha:
                raise HistoryError(f"{path}: its fingerprint names no git commit (it was not "
                                   "run in a git checkout); pass --commit SHA")
            found = commit_of(repo, git.commit_id(sha, f"{path}: git.commit"))
        added.append(db.add(
            observations(part), commit=found,
            machine=machine or str(env.get("hostname") or "unknown"),
            measured_at=str(env.get("timestamp") or ""), source=Path(path).name,
            digest=digest if len(parts) == 1 else f"{digest}:{i}", environment=dict(env)))
    runs = [a.run for a in added if a.run is not None]
    return AddedRun(Path(path).name, runs[0] if runs else None,
                    sum(a.observations for a in added))


def _by_environment(results) -> list[tuple[dict, "results_files.Results"]]:
    """A results file split by the environment each item ran in (one part unless merged;
    a merged file from before `merged_items` was kept files everything under its first)."""
    env = results.environment if isinstance(results.environment, dict) else {}
    merged, counts = env.get("merged"), env.get(results_files.MERGED_ITEMS)
    if not merged:
        return [(env, results)]
    from benchkit.core.records.schema import Results
    kinds = ("measurements", "callgrind", "memory")
    usable = (isinstance(counts, list) and len(counts) == len(merged) and all(
        isinstance(c, list) and len(c) == 3 and all(isinstance(n, int) and n >= 0 for n in c)
        for c in counts) and [sum(c[k] for c in counts) for k in range(3)]
        == [len(getattr(results, kind)) for kind in kinds])
    if not usable:
        return [(dict(merged[0]) if isinstance(merged[0], dict) else {}, results)]
    parts, start = [], [0, 0, 0]
    for part_env, count in zip(merged, counts):
        part = Results()
        for k, kind in enumerate(kinds):
            getattr(part, kind).extend(getattr(results, kind)[start[k]:start[k] + count[k]])
            start[k] += count[k]
        if list(part):
            parts.append((dict(part_env) if isinstance(part_env, dict) else {}, part))
    return parts


def _given_commit(repo: Path | None, rev: str) -> Commit:
    """--commit: a revision of `repo`, or a bare commit id that no checkout here knows."""
    git.checked_name(rev, "--commit")
    if repo is not None and git.resolve(repo, rev, "--commit"):
        return commit_of(repo, rev, required="--commit")
    if not git.COMMIT_ID.fullmatch(rev):
        raise RevisionError(f"--commit: {rev!r} is neither a revision of "
                            f"{repo or 'a checkout'} nor a commit id (4-64 hex digits); pass "
                            "the commit measured")
    return Commit(rev.lower(), "", None, "")


def this_machine() -> str:
    """The default machine name: this host's, as the fingerprint records it."""
    return socket.gethostname()


# ----------------------------------------------------------------------------- regressions


# Points (of the series without stored evidence) at which finding steps is shared among
# forked processes, one per core: below it the start-up (each process imports ruptures and
# scipy's statistics, 1.2 s) costs more than it saves. In points, not series: 96 series of
# 5,000 commits are as much work as 2,400 of 200, and were found in one process (measured,
# `history regressions` on two cores: 25 series of 200 points 1.5 s alone, 1.9 shared;
# 96 of 200 2.4 -> 2.0; 8 of 5,000 2.8 -> 2.2; 96 of 5,000 11.4 -> 7.8).
PARALLEL_POINTS = 10_000


# The jobs of the find_steps running now: forked workers inherit them, so only indexes
# (and the few steps found) cross between processes, not the series.
_JOBS: list[tuple] = []


def _plain_steps(index: int) -> list[Step]:
    """The steps of one series that needs no database (a forked worker's task)."""
    series, options = _JOBS[index]
    return steps_of(series, None, **options)


def find_steps(db: HistoryDB, *, machine: str | None = None, benchmark: str | None = None,
               metric: str | None = None, environment: str | None = None,
               since: str | None = None,
               alpha: float = DEFAULT_ALPHA, noise: float = DEFAULT_NOISE,
               series_list: Sequence[Series] | None = None) -> list[Step]:
    """The steps of every series (filtered; or of `series_list`, read from `db` with the
    same filters), oldest first within each series. Series without stored evidence
    (imported ones) are shared among the machine's cores when there are many. The steps
    are kept in the database for its current state: `report` after `regressions`, or a
    second look, does not find them again."""
    def key(machine, benchmark, metric, environment) -> str:
        fields = {"steps": _detector_version(), "alpha": alpha, "noise": noise,
                  "machine": machine, "benchmark": benchmark,
                  "metric": None if metric is None else str(metric)}
        if environment is not None:     # keys without it stay those of earlier versions
            fields["environment"] = environment
        return json.dumps(fields, sort_keys=True)

    # the steps of a wider search already kept hold these (the same steps, filtered or not):
    # a --benchmark query after `regressions` reads no other series
    steps = None
    for fields in dict.fromkeys([(machine, benchmark, metric, environment),
                                 (machine, None, None, None), (None, None, None, None)]):
        cached = db.cached(key(*fields))
        with contextlib.suppress(ValueError, RecursionError, TypeError):
            steps = None if cached is None else [s for s in steps_from_records(
                json.loads(cached)) if (machine is None or s.machine == machine)
                and benchmark in (None, s.benchmark)
                and (metric is None or str(s.metric) == str(metric))
                and (environment is None or in_environment(s.environment, environment))]
        if steps is not None:
            break
    if steps is None:
        if series_list is None:
            series_list = db.series(benchmark=benchmark, metric=metric, machine=machine,
                                    environment=environment)
        # kinds of runner are told from every wall-time series of a history, not the few a
        # --benchmark asks for: the same steps, filtered or not
        context = db.series(metric="time", machine=machine) if benchmark is not None and (
            metric is None or str(metric) == "time") else None
        steps = _all_steps(db, series_list, alpha, noise, context)
        db.keep(key(machine, benchmark, metric, environment),
                json.dumps(steps_to_records(steps)).encode())
    # what `regressions --confirm` said of a step before stays with it
    steps = with_confirmations(steps, db.confirmations())
    if since is None:
        return steps
    # found on the whole series (the levels before `since` are what a step is judged
    # against), then only those from `since` on are kept
    if series_list is None:
        series_list = db.series(benchmark=benchmark, metric=metric, machine=machine,
                                environment=environment)
    later = {}
    for series in series_list:
        keep = [i for i, p in enumerate(series.points) if p.commit.sha.startswith(since)]
        if keep:
            later[_series_key(series)] = {p.commit.sha for p in series.points[keep[0]:]}
    return [s for s in steps if s.commit.sha in later.get(_series_key(s), ())]


def _series_key(item: Series | Step) -> tuple:
    return (item.benchmark, item.metric, item.machine, item.environment)


# The modules of core/history and core/decisions whose code decides the steps found
# (tests/test_history_cache.py checks that every one `steps` imports is here).
STEP_FINDERS = tuple(f"benchkit.core.history.{name}" for name in (
    "changes", "level_change", "machine", "machine.held", "machine.newest_spell",
    "machine.runners", "machine.slower_share", "machine.slower_stretches", "noise",
    "placement", "step", "steps", "time_steps", "transient", "two_speed.own_speeds",
    "two_speed.read", "two_speed.steps")) + tuple(
        f"benchkit.core.decisions.{name}" for name in ("bands", "rank_test", "verdicts"))


@functools.lru_cache(maxsize=1)
def _detector_version() -> str:
    """benchkit's version and a digest of the step finders' code: steps cached by another
    version are found again."""
    import importlib

    import benchkit
    digest = hashlib.sha256()
    for name in STEP_FINDERS:
        module = importlib.import_module(name)
        digest.update(Path(module.__file__).read_bytes())
    return f"{benchkit.__version__}:{digest.hexdigest()[:16]}"


def _all_steps(db: HistoryDB, series_list: Sequence[Series], alpha: float, noise: float,
               context: Sequence[Series] | None = None) -> list[Step]:
    """The steps of each series, oldest first within each (`context`: all series of their
    histories, where `series_list` is some; read on one kind of runner, as steps are)."""
    with paused_gc():      # millions of points held: no collector pass over them
        series_list, notes, context = on_one_kind_with(series_list, context)
    jobs = [(series, {} if metric_named(series.metric).exact else {"alpha": alpha, "noise": noise})
            for series in series_list]
    found: list[list[Step] | None] = [None] * len(jobs)
    plain = [i for i, (series, _) in enumerate(jobs) if not series.evidence]
    cores = min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                else os.cpu_count() or 1, 8, len(plain))
    if cores > 1 and sum(len(jobs[i][0].points) for i in plain) >= PARALLEL_POINTS and \
            "fork" in multiprocessing.get_all_start_methods():
        forking = multiprocessing.get_context("fork")
        _JOBS[:] = jobs
        # chunks small enough that no core is left with most of the work (a series' cost
        # grows with its length), large enough that few indexes travel alone
        chunk = max(1, min(64, len(plain) // (cores * 8)))
        try:
            with concurrent.futures.ProcessPoolExecutor(cores, mp_context=forking) as pool:
                for i, steps in zip(plain, pool.map(_plain_steps, plain, chunksize=chunk)):
                    found[i] = steps
        finally:
            _JOBS.clear()
    def find(i: int, series: Series) -> list[Step]:
        reader = evidence_reader(db, series) if series.evidence else None
        return steps_of(series, reader, **jobs[i][1])

    found = [find(i, series) if steps is None else steps
             for i, ((series, _), steps) in enumerate(zip(jobs, found))]
    # what the machine's other series tell: a stretch it ran slower, a spell at the end
    found = told_by_the_machine(series_list, found, find, context)
    return [dataclasses.replace(s, evidence=s.evidence + notes[_series_key(s)])
            if _series_key(s) in notes else s for steps in found for s in steps]


# ----------------------------------------------------------------------------- measuring


@dataclasses.dataclass(frozen=True)
class RevisionOutcome:
    """What happened to one revision of a history run."""

    commit: Commit
    status: str          # "measured", "skipped" (already there), "failed"
    detail: str = ""


def measure_revision(repo: Path, commit: Commit, paths: Sequence[str], run_args: Sequence[str],
                     install: str | None, workdir: Path, log=None) -> Path:
    """Install `commit` (as `ab` does) and run `benchkit run` on `paths` with its
    interpreter; returns the results file written."""
    from benchkit.errors import SideError
    from benchkit.orchestration.sampling.sides import revision_side
    output = workdir / f"{commit.sha}.json"
    try:
        with revision_side("rev", repo, commit.sha, install, workdir, (), log) as side:
            done = run_command(
                [side.python, "-m", "benchkit", "run", *paths, *run_args, "-o", str(output)],
                timeout=None)
    except SideError as error:
        raise RevisionError(f"{commit.sha[:12]}: {error}") from None
    if not output.exists():
        raise RevisionError(f"{commit.sha[:12]}: `benchkit run` wrote no results (exit "
                            f"{done.returncode}):\n{last_lines(done.stdout + done.stderr, 20)}")
    return output


def run_history(db: HistoryDB, repo: Path, commits: Sequence[Commit], paths: Sequence[str],
                run_args: Sequence[str], *, machine: str, install: str | None = None,
                skip_existing: bool = True,
                metrics: Sequence[str] = ("time",),
                log: Callable[[str], None] | None = None,
                on_revision: Callable[[RevisionOutcome], None] | None = None
                ) -> list[RevisionOutcome]:
    """Measure each commit in turn and add it; a revision that fails is recorded and the
    others go on."""
    outcomes = []
    with tempfile.TemporaryDirectory(prefix=owned_prefix("history")) as tmp:
        for commit in commits:
            # skipped only when every metric asked for is there: a commit that holds time
            # is measured again when instructions are asked for, and the reverse
            if skip_existing and all(db.has_commit(commit.sha, machine, metric=m)
                                     for m in metrics):
                outcome = RevisionOutcome(commit, "skipped", "already in the history")
            else:
                try:
                    workdir = Path(tempfile.mkdtemp(dir=tmp))
                    output = measure_revision(repo, commit, paths, run_args, install, workdir,
                                              log)
                    added = add_file(db, output, commit=commit.sha, machine=machine,
                                     repo=repo)
                    outcome = RevisionOutcome(commit, "measured",
                                              f"{added.observations} observations")
                except (BenchkitError, OSError) as error:
                    db.record_failure(commit, machine, _now(), str(error))
                    outcome = RevisionOutcome(commit, "failed", str(error))
            outcomes.append(outcome)
            if on_revision:
                on_revision(outcome)
    return outcomes


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
