"""Performance over time: results files added to the history database, a range of commits
measured one revision at a time (each installed as `ab` installs one), the steps found in
every series, and the first bad commit found by bisection."""
from __future__ import annotations

import dataclasses
import datetime
import math
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable, Sequence

from benchkit.core.environment import single
from benchkit.core.history.series import Commit, HistoryMetric, Series, observations
from benchkit.core.history.steps import Step, steps_of
from benchkit.errors import BenchkitError, HistoryError, RevisionError
from benchkit.system import results_files
from benchkit.system.history_db import AddedRun, HistoryDB, evidence_reader
from benchkit.system import git
from benchkit.system.git import toplevel as git_toplevel
from benchkit.system.processes import last_lines, owned_prefix


def git_root(repo: str | Path | None) -> Path:
    """The top of the git checkout at `repo` (default: the working directory)."""
    path = Path(repo or ".").resolve()
    top = git_toplevel(path)
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
    commit's date and subject come from `repo` (default: the working directory's checkout)."""
    results, digest = results_files.load_with_digest(path)
    env = single(results.environment)
    repo = repo or git_toplevel(Path.cwd())
    if commit is not None:
        found = _given_commit(repo, commit)
    else:
        sha = (env.get("git") or {}).get("commit")
        if not sha:
            raise HistoryError(f"{path}: its fingerprint names no git commit (it was not run "
                               "in a git checkout); pass --commit SHA")
        found = commit_of(repo, git.commit_id(sha, f"{path}: git.commit"))
    return db.add(observations(results), commit=found,
                  machine=machine or env.get("hostname") or "unknown",
                  measured_at=str(env.get("timestamp") or ""), source=Path(path).name,
                  digest=digest, environment=dict(env))


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


def find_steps(db: HistoryDB, *, machine: str | None = None, benchmark: str | None = None,
               metric: HistoryMetric | None = None, since: str | None = None,
               alpha: float = 0.01, noise: float = 0.02,
               series_list: Sequence[Series] | None = None) -> list[Step]:
    """The steps of every series (filtered; or of `series_list`, already read from `db`),
    oldest first within each series."""
    out = []
    if series_list is None:
        series_list = db.series(benchmark=benchmark, metric=metric, machine=machine)
    for series in series_list:
        if since is not None:
            keep = [i for i, p in enumerate(series.points) if p.commit.sha.startswith(since)]
            if not keep:
                continue
            series = dataclasses.replace(series, points=series.points[max(keep[0] - 1, 0):])
        options = {} if series.metric is HistoryMetric.INSTRUCTIONS else {
            "alpha": alpha, "noise": noise}
        out += steps_of(series, evidence_reader(db, series), **options)
    return out


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
            done = subprocess.run(
                [side.python, "-m", "benchkit", "run", *paths, *run_args, "-o", str(output)],
                capture_output=True, text=True)
    except SideError as error:
        raise RevisionError(f"{commit.sha[:12]}: {error}") from None
    if not output.exists():
        raise RevisionError(f"{commit.sha[:12]}: `benchkit run` wrote no results (exit "
                            f"{done.returncode}):\n{last_lines(done.stdout + done.stderr, 20)}")
    return output


def run_history(db: HistoryDB, repo: Path, commits: Sequence[Commit], paths: Sequence[str],
                run_args: Sequence[str], *, machine: str, install: str | None = None,
                skip_existing: bool = True, metric: HistoryMetric | None = None,
                log: Callable[[str], None] | None = None,
                on_revision: Callable[[RevisionOutcome], None] | None = None
                ) -> list[RevisionOutcome]:
    """Measure each commit in turn and add it; a revision that fails is recorded and the
    others go on."""
    outcomes = []
    with tempfile.TemporaryDirectory(prefix=owned_prefix("history")) as tmp:
        for commit in commits:
            if skip_existing and db.has_commit(commit.sha, machine, metric=metric):
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


# ----------------------------------------------------------------------------- bisect


@dataclasses.dataclass(frozen=True)
class BisectStep:
    """One revision judged: its change against the good revision, and the call."""

    commit: Commit
    change: float | None
    bad: bool
    how: str          # "measured", "from the history", "interleaved ab"

    def to_json(self) -> dict:
        """The step as `bisect --json` prints it."""
        return {"commit": self.commit.sha, "message": self.commit.message,
                "change": self.change, "bad": self.bad, "how": self.how}


@dataclasses.dataclass(frozen=True)
class Bisection:
    """The first bad commit, the last good one before it and the steps taken."""

    first_bad: Commit
    last_good: Commit
    change: float | None
    steps: tuple[BisectStep, ...]
    functions: tuple = ()

    def to_json(self) -> dict:
        """What `bisect --json` prints."""
        return {"first_bad": self.first_bad.sha, "message": self.first_bad.message,
                "last_good": self.last_good.sha, "change": self.change,
                "steps": [s.to_json() for s in self.steps],
                "functions": [{"function": f.function, "before": f.before, "after": f.after,
                               "delta": f.delta} for f in self.functions]}


class Judge:
    """Says whether a revision is bad: its change against the good revision beyond the
    threshold, in the direction the bad revision moved."""

    def __init__(self, db: HistoryDB, repo: Path, paths: Sequence[str], benchmark: str,
                 metric: HistoryMetric, threshold: float, machine: str, install: str | None,
                 run_args: Sequence[str], ab_args: Sequence[str], workdir: Path, log=None):
        self.db, self.repo, self.paths, self.benchmark = db, repo, list(paths), benchmark
        self.metric, self.threshold, self.machine = metric, threshold, machine
        self.install, self.run_args, self.ab_args = install, list(run_args), list(ab_args)
        self.workdir, self.log = workdir, log
        self.direction = 0

    def _series_point(self, commit: Commit):
        for series in self.db.series(benchmark=self.benchmark, metric=self.metric,
                                     machine=self.machine):
            for point in series.points:
                if point.commit.sha == commit.sha:
                    return series, point
        return None, None

    def counted(self, commit: Commit) -> tuple[object, object, str]:
        """The history point of `commit`, measured (and added) when not there yet."""
        series, point = self._series_point(commit)
        if point is not None:
            return series, point, "from the history"
        output = measure_revision(self.repo, commit, self.paths, self.run_args, self.install,
                                  Path(tempfile.mkdtemp(dir=self.workdir)), self.log)
        add_file(self.db, output, commit=commit.sha, machine=self.machine, repo=self.repo)
        series, point = self._series_point(commit)
        if point is None:
            raise RevisionError(f"{commit.sha[:12]}: no {self.metric} of benchmark "
                                f"{self.benchmark!r} was measured; check --benchmark against "
                                "`benchkit history list`")
        return series, point, "measured"

    def change(self, good: Commit, commit: Commit) -> tuple[float | None, bool, str]:
        """(change against good, beyond the threshold in the bisected direction, how)."""
        if self.metric is HistoryMetric.INSTRUCTIONS:
            from benchkit.core.bands import instruction_change
            _, a, _ = self.counted(good)
            _, b, how = self.counted(commit)
            beyond = instruction_change(a.band(), b.band())
            change = b.value / a.value - 1
            moved = abs(beyond) > self.threshold and (
                self.direction == 0 or math.copysign(1, beyond) == self.direction)
            return change, moved, how
        return self._ab(good, commit)

    def _ab(self, good: Commit, commit: Commit) -> tuple[float | None, bool, str]:
        import json
        output = Path(tempfile.mkdtemp(dir=self.workdir)) / "ab.json"
        done = subprocess.run(
            [sys.executable, "-m", "benchkit", "ab", *self.paths, "--repo", str(self.repo),
             "--base-rev", good.sha, "--new-rev", commit.sha, "--json", "-o", str(output),
             *([] if self.install is None else ["--install", self.install]), *self.ab_args],
            capture_output=True, text=True)
        try:
            report = json.loads(done.stdout)
        except ValueError:
            raise RevisionError(f"{commit.sha[:12]}: `benchkit ab` against {good.sha[:12]} "
                                f"failed (exit {done.returncode}):\n"
                                f"{last_lines(done.stdout + done.stderr, 20)}") from None
        row = next((r for r in report["rows"] if r["name"] == self.benchmark), None)
        if row is None or row["wall"] is None:
            raise RevisionError(f"{commit.sha[:12]}: `benchkit ab` measured no benchmark "
                                f"{self.benchmark!r}; check --benchmark")
        wall = row["wall"]
        change = wall["ratio"] - 1 if wall["ratio"] is not None else None
        claimed = wall["verdict"] in ("slower", "faster")
        direction = 1 if wall["verdict"] == "slower" else -1
        moved = (claimed and change is not None and abs(change) > self.threshold
                 and (self.direction == 0 or direction == self.direction))
        return change, moved, "interleaved ab"


def bisect(judge: Judge, commits: Sequence[Commit], good: Commit,
           on_step: Callable[[BisectStep], None] | None = None) -> Bisection:
    """Binary search for the first commit of `commits` (oldest first, the last one bad)
    whose change against `good` passes the judge."""
    steps: list[BisectStep] = []
    bad = commits[-1]
    change, moved, how = judge.change(good, bad)
    steps.append(BisectStep(bad, change, moved, how))
    if on_step:
        on_step(steps[-1])
    if not moved:
        raise RevisionError(
            f"--bad {bad.sha[:12]} is not bad: its {judge.metric} changed by "
            f"{'?' if change is None else f'{change:+.2%}'} against --good {good.sha[:12]}, "
            f"not beyond --threshold {judge.threshold:.1%}; nothing to bisect")
    judge.direction = 1 if (change or 0) > 0 else -1
    low, high = -1, len(commits) - 1          # commits[high] is bad; low is good (-1: good)
    changes = {high: change}
    while high - low > 1:
        mid = (low + high) // 2
        change, moved, how = judge.change(good, commits[mid])
        steps.append(BisectStep(commits[mid], change, moved, how))
        if on_step:
            on_step(steps[-1])
        if moved:
            high = mid
            changes[mid] = change
        else:
            low = mid
    last_good = good if low < 0 else commits[low]
    functions = ()
    if judge.metric is HistoryMetric.INSTRUCTIONS:
        from benchkit.core.history.steps import moved_functions
        series, before, _ = judge.counted(last_good)
        _, after, _ = judge.counted(commits[high])
        functions = moved_functions(judge.db.evidence(series, before),
                                    judge.db.evidence(series, after))
    return Bisection(commits[high], last_good, changes.get(high), tuple(steps), functions)
