"""`benchkit history import-asv`: an asv results directory into the history database.

Import keeps going: a file that cannot be read, parsed or placed is skipped with its reason
and the rest of the directory still imports; a benchmark that failed or was skipped is kept
as such. Files already imported (by content digest) are not parsed again, so importing a
newer copy of a directory adds only its new files. Runs are added in batches of one
transaction each (thousands of files: one commit per file would spend the import in fsync).
"""
from __future__ import annotations

import collections
import dataclasses
import hashlib
import itertools
import json
import re
from pathlib import Path
from typing import Callable

from benchkit.core.history.asv import AsvRun, parse_run
from benchkit.core.history.series import Commit, Status
from benchkit.errors import BenchkitError, HistoryError, RevisionError
from benchkit.system import git
from benchkit.system.bulk import paused_gc
from benchkit.system.history_db import HistoryDB
from benchkit.system.reading import read_bounded

# Files of an asv results directory that hold no run.
NOT_RUNS = {"machine.json", "benchmarks.json"}
# Real asv results files are kilobytes to a few megabytes; a bigger one is not read.
FILE_LIMIT = 64 << 20
BATCH = 500


def history_root(repo: str | Path | None) -> Path:
    """Where `import-asv --repo` reads commit order: a checkout's top, or a bare repository
    (nothing is checked out to import)."""
    path = Path(repo or ".").resolve()
    found = git.history_source(path)
    if found is None:
        raise RevisionError(f"--repo {path}: not a git repository; pass --repo with the "
                            "project's checkout or a bare clone of it")
    return found


@dataclasses.dataclass(frozen=True)
class AsvImport:
    """What one import did."""

    files: int
    added: int            # runs new to the database
    already: int          # runs it held (the same file imported before)
    observations: int     # values added
    failed: int           # benchmarks added as failed or skipped (no value)
    skipped_files: tuple[tuple[str, str], ...]    # (file, why it was not imported)
    ignored: tuple[str, ...]                      # benchmarks of types the history ignores
    ordered_by: str       # "repository" (first-parent line), "date", "shallow" (by date)
    index_problem: str = ""   # why benchmarks.json could not be used ("" when it was)
    outdated: int = 0         # results of benchmarks whose code changed since, left out
    runs_per_machine: tuple[int, ...] = ()    # of the runs added, how many each machine has

    def skipped_summary(self) -> str:
        """One line: how many files were skipped, by reason, with an example of each."""
        reasons = collections.Counter(_reason_kind(r) for _, r in self.skipped_files)
        first = {}
        for path, reason in self.skipped_files:
            first.setdefault(_reason_kind(reason), f"{path}: {reason}")
        return "; ".join(f"{n} {kind} (e.g. {first[kind]})" for kind, n in
                         reasons.most_common())


def _reason_kind(reason: str) -> str:
    """What a skip reason says without the file's own quoted values (a commit id that is
    not one): files skipped for one reason count together."""
    return re.sub(r"'[^']*'", "...", reason.split(" (", 1)[0].split(";", 1)[0])[:60]


def _json(raw: bytes):
    """Parsed JSON, or ValueError: deep nesting and numbers too large for Python are a
    damaged file, not a crash (asv writes NaN and Infinity: accepted)."""
    try:
        return json.loads(raw)
    except RecursionError:
        raise ValueError("nested too deeply") from None
    except (UnicodeDecodeError, OverflowError) as error:
        raise ValueError(str(error)) from None


def _read(path: Path) -> bytes:
    return read_bounded(path, lambda problem: HistoryError(problem), limit=FILE_LIMIT)


def _benchmarks(root: Path) -> tuple[dict, str]:
    """asv's index of the benchmarks (parameter names, types, units), and why it could not
    be used ("" when it could)."""
    index = root / "benchmarks.json"
    if not index.is_file():
        return {}, "is missing"
    try:
        parsed = _json(_read(index))
    except (BenchkitError, ValueError, MemoryError) as error:
        return {}, f"could not be read ({_why(error, str(index))})"
    return (parsed, "") if isinstance(parsed, dict) else ({}, "is not a JSON object")


class _Commits:
    """Commit dates, subjects and first-parent positions from the repository, read once,
    and the repository's other commits: a merged branch's (HEAD's history, off its
    first-parent line) and other branches'."""

    def __init__(self, repo: Path | None):
        self.repo = repo
        self.known: dict[str, Commit] = {}
        self.merged: set[str] = set()
        self.elsewhere: set[str] = set()
        # a shallow clone's history stops short of the root: positions counted in it are
        # not the commits' places (kept as unknown: the series are ordered by date)
        self.shallow = repo is not None and git.shallow(repo)
        if repo is None:
            return
        listed = git.git(repo, "log", "--first-parent", "--format=%H%x00%cI%x00%s",
                         "--end-of-options", "HEAD")
        lines = listed.stdout.splitlines() if listed.returncode == 0 else []
        # places counted from the root as 1, as `git rev-list --count` (history add) counts
        for position, line in enumerate(reversed(lines), 1):
            sha, date, subject = (line.split("\0") + ["", ""])[:3]
            self.known[sha] = Commit(sha, date, None if self.shallow else position, subject)
        history = git.git(repo, "rev-list", "--end-of-options", "HEAD")
        everything = git.git(repo, "rev-list", "--all")
        ancestors = set(history.stdout.split()) if history.returncode == 0 else set()
        self.merged = ancestors - self.known.keys()
        if everything.returncode == 0:
            self.elsewhere = set(everything.stdout.split()) - ancestors

    def of(self, run: AsvRun, where: str) -> Commit:
        sha = git.commit_id(run.commit.sha, f"{where}: commit_hash")
        found = self.known.get(sha)
        if found is None and self.repo is not None and len(sha) < 40:
            sha = git.resolve(self.repo, sha, "commit_hash") or sha
            found = self.known.get(sha)
        # a series is one line of commits: another line's results would be ordered among
        # them by date (asv's graphs leave them out too)
        if found is None and sha in self.merged:
            raise HistoryError(f"{where}: a commit of a branch merged into HEAD, not on its "
                               "first-parent line (asv's graphs leave it out too)")
        if found is None and sha in self.elsewhere:
            raise HistoryError(f"{where}: a commit of another branch, not in the history of "
                               "--repo's HEAD (check that branch out to import its results)")
        if found is None and not run.commit.date:
            # neither a date nor a place in the history: it would be sorted first, and its
            # values read as a step at the start of every series
            raise HistoryError(f"{where}: no date, and no place in "
                               + ("the repository's first-parent history" if self.repo
                                  else "a repository (pass --repo with the project's checkout)"))
        if found is None:
            return Commit(sha, run.commit.date, None, "")
        return found if found.date else dataclasses.replace(found, date=run.commit.date)


def import_asv(db: HistoryDB, results_dir: str | Path, *, machine: str | None = None,
               repo: Path | None = None,
               progress: Callable[[int, int, int], None] | None = None) -> AsvImport:
    """Add every run under `results_dir` (asv's `results/`: a folder per machine, a file per
    commit and environment). Runs already there are skipped without being parsed. With
    `repo`, commits get their subject and their position on the first-parent line (the
    order of the history); without, series are ordered by commit date (UTC).
    `progress(done, total, skipped)` is called as files are read."""
    root = Path(results_dir)
    if not root.is_dir():
        raise HistoryError(f"{root}: not a directory; pass asv's results directory (the "
                           "`results_dir` of asv.conf.json)")
    benchmarks, index_problem = _benchmarks(root)
    files = sorted(p for p in root.glob("*/*.json") if p.name not in NOT_RUNS)
    if not files:
        raise HistoryError(f"{root}: no asv results files (MACHINE/COMMIT-ENV.json) here; "
                           "pass asv's results directory")
    commits = _Commits(repo)
    added = already = values = failed = 0
    per_machine: collections.Counter = collections.Counter()
    skipped: list[tuple[str, str]] = []
    ignored: dict[str, None] = {}
    outdated = 0
    known = db.digests()
    # (parsing on several cores was tried: pickling the runs back cost more than it saved)
    prepared = (_prepare(path, root, benchmarks, known) for path in files)
    for start in range(0, len(files), BATCH):
        with db.batch(), paused_gc():
            for where, digest, run, why in itertools.islice(prepared, BATCH):
                if why is None and run is not None:
                    try:
                        commit = commits.of(run, where)
                    except BenchkitError as error:
                        why = _why(error, where)
                if why is not None:
                    skipped.append((where, why))
                    continue
                if run is None:
                    already += 1
                    continue
                named = machine or (run.machine if run.machine != "unknown"
                                    else (root / where).parent.name)
                done = db.add(run.observations, commit=commit, machine=named,
                              measured_at=run.measured_at, source=f"asv:{where}",
                              digest=digest, environment=run.environment,
                              env=run.env_name)
                if done.run is None:
                    already += 1
                    continue
                added += 1
                per_machine[named] += 1
                values += sum(o.status is Status.OK for o in run.observations)
                failed += sum(o.status is not Status.OK for o in run.observations)
                ignored.update(dict.fromkeys(run.ignored))
                outdated += len(run.outdated)
        if progress:
            progress(min(start + BATCH, len(files)), len(files), len(skipped))
    done = AsvImport(len(files), added, already, values, failed, tuple(skipped),
                     tuple(ignored), "date" if repo is None else
                     "shallow" if commits.shallow else "repository",
                     index_problem, outdated, tuple(per_machine.values()))
    if len(skipped) == len(files):
        raise HistoryError(f"{root}: none of its {len(files)} results files could be "
                           f"imported: {done.skipped_summary()}; pass asv's results "
                           "directory")
    return done




def _prepare(path: Path, root: Path, benchmarks: dict, known: set[str]
             ) -> tuple[str, str, AsvRun | None, str | None]:
    """(file, digest, run or None when `known` has its digest, why it is skipped or
    None)."""
    where = str(path.relative_to(root))
    try:
        raw = _read(path)
        digest = f"asv:{hashlib.sha256(raw).hexdigest()}"
        if digest in known:
            return where, digest, None, None
        return where, digest, parse_run(_json(raw), benchmarks, where), None
    except (BenchkitError, ValueError, MemoryError) as error:
        return where, "", None, _why(error, where)


def _why(error: BaseException, where: str) -> str:
    if isinstance(error, MemoryError):
        return "too large to hold in memory"
    if not isinstance(error, BenchkitError):
        return f"not JSON ({error})"
    text = str(error)
    return text[len(where) + 2:] if text.startswith(f"{where}: ") else text
