"""`benchkit bisect`: the first commit of a range whose change against a good revision
passes a judge (instruction counts from the history or measured, wall time by an
interleaved `ab`)."""
from __future__ import annotations

import dataclasses
import math
import sys
import tempfile
from pathlib import Path
from typing import Callable, Sequence

from benchkit.core.history.series import Commit
from benchkit.core.history.step import Step
from benchkit.errors import BenchkitError, RevisionError
from benchkit.orchestration.history import add_file, measure_revision
from benchkit.system.history_db import HistoryDB
from benchkit.system.processes import last_lines, run_command



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
                 metric: str, threshold: float, machine: str, install: str | None,
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
        if self.metric == "instructions":
            from benchkit.core.decisions.bands import instruction_change
            _, a, _ = self.counted(good)
            _, b, how = self.counted(commit)
            beyond = instruction_change(a.band(), b.band())
            change = b.value / a.value - 1
            moved = abs(beyond) > self.threshold and (
                self.direction == 0 or math.copysign(1, beyond) == self.direction)
            return change, moved, how
        return self._ab(good, commit)

    def _ab(self, good: Commit, commit: Commit) -> tuple[float | None, bool, str]:
        wall = ab_wall(self.repo, self.paths, good, commit, self.benchmark, self.install,
                       self.ab_args, self.workdir)
        change = wall["ratio"] - 1 if wall["ratio"] is not None else None
        claimed = wall["verdict"] in ("slower", "faster")
        direction = 1 if wall["verdict"] == "slower" else -1
        moved = (claimed and change is not None and abs(change) > self.threshold
                 and (self.direction == 0 or direction == self.direction))
        return change, moved, "interleaved ab"


def _selects_itself(name: str) -> bool:
    """Whether `-k NAME` is a keyword expression that selects the benchmark NAME (and is not
    read as an option)."""
    from benchkit.core.records.keywords import keyword_filter
    try:
        return not name.startswith("-") and keyword_filter(name)(name)
    except BenchkitError:
        return False


def ab_wall(repo: Path, paths: Sequence[str], base: Commit, new: Commit, benchmark: str,
            install: str | None, ab_args: Sequence[str], workdir: Path) -> dict:
    """The wall-time verdict of one benchmark from `benchkit ab` between two commits
    (interleaved rounds, each revision installed). Other benchmarks of the suite that
    fail do not matter; this one must have been measured."""
    import json
    output = Path(tempfile.mkdtemp(dir=workdir)) / "ab.json"
    # only the benchmark judged, where its name is one -k word: a sequential ab runs until
    # every verdict is clear, and the others' would be time spent on nothing
    select = ["-k", benchmark] if _selects_itself(benchmark) else []
    done = run_command(
        [sys.executable, "-m", "benchkit", "ab", *paths, "--repo", str(repo),
         "--base-rev", base.sha, "--new-rev", new.sha, "--json", "-o", str(output), *select,
         *([] if install is None else ["--install", install]), *ab_args], timeout=None)
    try:
        report = json.loads(done.stdout)
    except ValueError:
        # the first line says why (`--confirm` keeps only that): ab's last line is its
        # error, or the install's (pip: "... is not installable")
        said = last_lines(done.stdout + done.stderr, 20)
        raise RevisionError(f"{new.sha[:12]}: `benchkit ab` against {base.sha[:12]} "
                            f"failed (exit {done.returncode}): "
                            f"{said.splitlines()[-1] if said else 'no output'}\n"
                            f"{said}") from None
    row = next((r for r in report.get("rows", []) if r.get("name") == benchmark), None)
    if row is None or row.get("wall") is None:
        raise RevisionError(f"{new.sha[:12]}: `benchkit ab` measured no benchmark "
                            f"{benchmark!r} (it failed, or the suite has no such name)")
    return row["wall"]


def confirm_steps(steps: Sequence[Step], repo: Path | None, paths: Sequence[str], *,
                  install: str | None, ab_args: Sequence[str], workdir: Path,
                  on_step: Callable[[Step], None] | None = None) -> list[Step]:
    """Each wall-time step re-measured at its two commits, interleaved, as `ab` measures:
    confirmed when ab's verdict goes the step's way, rejected when it says unchanged or the
    other way, and not re-measurable (with why) when the commits or the suite cannot be
    run here. Other metrics are exact or not re-measured: left as they are."""
    from benchkit.system import git
    out = []
    for step in steps:
        if step.metric != "time" or step.transient:
            out.append(step)
            continue
        # an unplaced step is re-measured across its span: the change is somewhere in it
        after, through = step.range
        if repo is None:
            verdict = "not re-measurable: no repository (pass --repo)"
        elif missing := [c.sha[:12] for c in (through, after)
                         if not git.resolve(repo, c.sha, "commit")]:
            # named: the end that is not a commit of the repository (the last, if neither is)
            verdict = f"not re-measurable: {missing[0]} is not a commit of {repo}"
        else:
            try:
                wall = ab_wall(repo, paths, after, through, step.benchmark,
                               install, ab_args, workdir)
            except (BenchkitError, OSError) as error:
                verdict = f"not re-measurable: {str(error).splitlines()[0]}"
            else:
                said = wall["verdict"]
                agrees = said == ("slower" if step.change > 0 else "faster")
                ratio = wall.get("ratio")
                shown = "" if ratio is None else f" ({ratio - 1:+.1%})"
                verdict = (f"confirmed: ab says {said}{shown}" if agrees else
                           f"inconclusive: ab could not tell{shown}" if said == "inconclusive"
                           else f"rejected: ab says {said}{shown}")
        out.append(dataclasses.replace(step, confirmation=verdict))
        if on_step:
            on_step(out[-1])
    return out


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
    if judge.metric == "instructions":
        from benchkit.core.history.steps import moved_functions
        series, before, _ = judge.counted(last_good)
        _, after, _ = judge.counted(commits[high])
        functions = moved_functions(judge.db.evidence(series, before),
                                    judge.db.evidence(series, after))
    return Bisection(commits[high], last_good, changes.get(high), tuple(steps), functions)
