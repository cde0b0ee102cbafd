"""The history database: one SQLite file (by default `.benchkit/history.db` in the project)
that keeps every observation of every results file added to it, keyed by benchmark, metric,
machine and git commit.

Writers take SQLite's write lock for the whole addition (BEGIN IMMEDIATE), so two processes
adding at once serialise and a process killed while adding leaves the database as it was
before (SQLite's journal rolls the half-written transaction back on the next open). A results
file is recorded by its content digest: adding it again changes nothing. The schema is
versioned (`PRAGMA user_version`) and marked as benchkit's (`PRAGMA application_id`); an older
database is migrated forward on open, a newer or foreign one refused. Reading runs no code:
the evidence kept per observation is the results file's own JSON for that item, compressed,
checked against the results schema when it is read back.
"""
from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import sqlite3
import zlib
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

from benchkit.core import schema
from benchkit.core.history.series import Commit, HistoryMetric, Observation, Point, Series
from benchkit.errors import HistoryError, SchemaError
from benchkit.system.machine import git_toplevel
from benchkit.system.reading import read_limit

DB_ENV = "BENCHKIT_DB"
DEFAULT_RELATIVE = Path(".benchkit") / "history.db"
APPLICATION_ID = 0x626B6869          # "bkhi"
VERSION = 1
BUSY_TIMEOUT_MS = 120_000

_SCHEMA_1 = """
CREATE TABLE commits (
    sha TEXT PRIMARY KEY,
    date TEXT NOT NULL,            -- ISO 8601 commit date, '' when unknown
    ord INTEGER,                   -- number of ancestors (git rev-list --count), NULL unknown
    message TEXT NOT NULL DEFAULT ''
);
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    sha TEXT NOT NULL REFERENCES commits(sha),
    machine TEXT NOT NULL,
    measured_at TEXT NOT NULL,     -- the results file's timestamp
    source TEXT NOT NULL,          -- the file name it was added from
    digest TEXT NOT NULL UNIQUE,   -- of the file's content: adding it twice changes nothing
    environment TEXT NOT NULL      -- the environment fingerprint, JSON
);
CREATE TABLE observations (
    run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    benchmark TEXT NOT NULL,
    metric TEXT NOT NULL CHECK (metric IN ('time', 'instructions')),
    value REAL NOT NULL,
    low REAL NOT NULL,
    high REAL NOT NULL,
    units INTEGER NOT NULL,
    relative REAL,                 -- time over the speed probe (series.speed_relative)
    format INTEGER NOT NULL,       -- results format version of the evidence
    evidence BLOB NOT NULL         -- zlib-compressed results-file JSON of the item
);
CREATE INDEX observations_series ON observations (benchmark, metric, run);
CREATE INDEX runs_commit ON runs (sha, machine);
CREATE TABLE failed_revisions (
    sha TEXT NOT NULL,
    machine TEXT NOT NULL,
    failed_at TEXT NOT NULL,
    message TEXT NOT NULL,
    PRIMARY KEY (sha, machine)
);
"""
# version -> statements that bring a database of version - 1 to it
MIGRATIONS: dict[int, str] = {1: _SCHEMA_1}
# what the current version's queries need
EXPECTED_COLUMNS = {
    "commits": {"sha", "date", "ord", "message"},
    "runs": {"id", "sha", "machine", "measured_at", "source", "digest", "environment"},
    "observations": {"run", "benchmark", "metric", "value", "low", "high", "units", "relative",
                     "format", "evidence"},
    "failed_revisions": {"sha", "machine", "failed_at", "message"},
}


def default_path(cwd: str | os.PathLike | None = None) -> Path:
    """BENCHKIT_DB, else `.benchkit/history.db` at the top of the git checkout holding `cwd`
    (or in `cwd` itself outside one)."""
    if os.environ.get(DB_ENV):
        return Path(os.environ[DB_ENV])
    cwd = Path(cwd or os.getcwd())
    root = git_toplevel(cwd) or cwd
    return root / DEFAULT_RELATIVE


@dataclasses.dataclass(frozen=True)
class AddedRun:
    """What one `add` did: the run's id, or None when the same file was already there."""

    source: str
    run: int | None
    observations: int


@dataclasses.dataclass(frozen=True)
class Summary:
    """What `history list` prints: per benchmark and metric, the machines, commits and
    observations held."""

    benchmark: str
    metric: str
    machines: tuple[str, ...]
    commits: int
    observations: int
    first: str
    last: str


class HistoryDB:
    """An open history database (a context manager; `close()` when done)."""

    def __init__(self, path: str | os.PathLike, *, create: bool = True):
        self.path = Path(path)
        if not self.path.exists():
            if not create:
                raise HistoryError(f"{self.path}: no history database here; add results "
                                   "with `benchkit history add FILE` or pass --db PATH")
            self.path.parent.mkdir(parents=True, exist_ok=True)
        elif not self.path.is_file():
            raise HistoryError(f"{self.path}: not a regular file; pass --db with the path of "
                               "a history database")
        try:
            self._db = sqlite3.connect(str(self.path), timeout=BUSY_TIMEOUT_MS / 1000,
                                       isolation_level=None)
            self._db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            self._db.execute("PRAGMA foreign_keys = ON")
            self._open()
        except sqlite3.DatabaseError as error:
            with contextlib.suppress(Exception):
                self._db.close()
            raise HistoryError(f"{self.path}: not a usable history database ({error}); "
                               "pass --db with another path, or move this file away") from None

    # -- schema -----------------------------------------------------------------------------
    def _open(self) -> None:
        app = self._db.execute("PRAGMA application_id").fetchone()[0]
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        tables = self._db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        if app != APPLICATION_ID and (app != 0 or tables):
            raise HistoryError(f"{self.path}: an SQLite database, but not a benchkit history "
                               "database; pass --db with another path")
        if version > VERSION:
            raise HistoryError(f"{self.path}: written by a newer benchkit (history schema "
                               f"{version}, this one reads up to {VERSION}); upgrade benchkit")
        if version < VERSION:
            with self._write():
                # another process may have migrated it while this one waited for the lock
                version = self._db.execute("PRAGMA user_version").fetchone()[0]
                for step in range(version + 1, VERSION + 1):
                    for statement in MIGRATIONS[step].split(";"):
                        if statement.strip():
                            self._db.execute(statement)
                self._db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                self._db.execute(f"PRAGMA user_version = {VERSION}")
        for table, columns in EXPECTED_COLUMNS.items():
            found = {row[1] for row in self._db.execute(f"PRAGMA table_info({table})")}
            if not columns <= found:
                raise HistoryError(f"{self.path}: damaged: table {table} lacks "
                                   f"{sorted(columns - found)}; pass --db with another path, "
                                   "or move this file away")

    @contextlib.contextmanager
    def _write(self) -> Iterator[None]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def close(self) -> None:
        """Close the connection."""
        self._db.close()

    def __enter__(self) -> "HistoryDB":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- writing ----------------------------------------------------------------------------
    def add(self, observations: Sequence[Observation], *, commit: Commit, machine: str,
            measured_at: str, source: str, digest: str, environment: dict[str, Any]
            ) -> AddedRun:
        """Add one results file's observations as one run, in one transaction."""
        with self._write():
            if self._db.execute("SELECT 1 FROM runs WHERE digest = ?", (digest,)).fetchone():
                return AddedRun(source, None, 0)
            self._db.execute(
                "INSERT INTO commits (sha, date, ord, message) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (sha) DO UPDATE SET date = CASE WHEN excluded.date != '' "
                "THEN excluded.date ELSE date END, ord = coalesce(excluded.ord, ord), "
                "message = CASE WHEN excluded.message != '' THEN excluded.message "
                "ELSE message END",
                (commit.sha, commit.date, commit.order, commit.message))
            run = self._db.execute(
                "INSERT INTO runs (sha, machine, measured_at, source, digest, environment) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (commit.sha, machine, measured_at, source, digest,
                 json.dumps(environment, sort_keys=True))).lastrowid
            self._db.executemany(
                "INSERT INTO observations (run, benchmark, metric, value, low, high, units, "
                "relative, format, evidence) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(run, o.benchmark, str(o.metric), o.value, o.low, o.high, o.units, o.relative,
                  schema.FORMAT_VERSION,
                  zlib.compress(json.dumps(o.evidence, allow_nan=False).encode(), 6))
                 for o in observations])
            self._db.execute("DELETE FROM failed_revisions WHERE sha = ? AND machine = ?",
                             (commit.sha, machine))
        return AddedRun(source, run, len(observations))

    def record_failure(self, commit: Commit, machine: str, failed_at: str,
                       message: str) -> None:
        """Remember that a revision could not be measured (a later success replaces it)."""
        with self._write():
            self._db.execute(
                "INSERT OR IGNORE INTO commits (sha, date, ord, message) VALUES (?, ?, ?, ?)",
                (commit.sha, commit.date, commit.order, commit.message))
            self._db.execute("INSERT OR REPLACE INTO failed_revisions VALUES (?, ?, ?, ?)",
                             (commit.sha, machine, failed_at, message))

    # -- reading ----------------------------------------------------------------------------
    def has_commit(self, sha: str, machine: str, *, metric: HistoryMetric | None = None
                   ) -> bool:
        """Whether observations (of `metric`, if given) exist for this commit and machine."""
        query = ("SELECT 1 FROM runs r JOIN observations o ON o.run = r.id WHERE r.sha = ? "
                 "AND r.machine = ?")
        params: list[Any] = [sha, machine]
        if metric is not None:
            query += " AND o.metric = ?"
            params.append(str(metric))
        return self._db.execute(query + " LIMIT 1", params).fetchone() is not None

    def failures(self) -> list[tuple[str, str, str, str]]:
        """(sha, machine, when, message) of each revision that could not be measured."""
        return self._db.execute("SELECT sha, machine, failed_at, message FROM failed_revisions "
                                "ORDER BY failed_at").fetchall()

    def commit(self, sha: str) -> Commit | None:
        """The commit as recorded, or None."""
        row = self._db.execute("SELECT sha, date, ord, message FROM commits WHERE sha = ?",
                               (sha,)).fetchone()
        return Commit(*row) if row else None

    def commits_matching(self, prefix: str) -> list[str]:
        """Full ids of the recorded commits that start with `prefix`."""
        return [r[0] for r in self._db.execute(
            "SELECT sha FROM commits WHERE substr(sha, 1, ?) = ?", (len(prefix), prefix))]

    def series(self, *, benchmark: str | None = None, metric: HistoryMetric | None = None,
               machine: str | None = None) -> list[Series]:
        """Every series (filtered), its points in commit order. Points carry no evidence;
        `evidence()` reads it for the points that need it."""
        where, params = [], []
        for column, value in (("o.benchmark", benchmark), ("o.metric", metric),
                              ("r.machine", machine)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(str(value))
        # Sorted by SQLite in history order, so each series is one run of rows and each
        # commit's first row is its earliest measurement (Commit.key's order).
        rows = self._db.execute(
            "SELECT o.benchmark, o.metric, r.machine, c.sha, c.date, c.ord, c.message, "
            "o.value, o.low, o.high, o.units, o.relative FROM observations o "
            "JOIN runs r ON o.run = r.id JOIN commits c ON c.sha = r.sha "
            + (("WHERE " + " AND ".join(where)) if where else "")
            + " ORDER BY o.benchmark, o.metric, r.machine, c.date, coalesce(c.ord, -1), "
              "r.measured_at", params)
        out: list[Series] = []
        known: dict[str, Commit] = {}

        def finish(key, commits) -> None:
            if key is not None:
                out.append(Series(key[0], HistoryMetric(key[1]), key[2], tuple(
                    Point.of_values(known[sha], values) for sha, values in commits.items())))
        current, commits = None, {}
        for (name, metric_, mach, sha, date, order, message, value, low, high, units,
             relative) in rows:
            key = (name, metric_, mach)
            if key != current:
                finish(current, commits)
                current, commits = key, {}
            if sha not in known:
                known[sha] = Commit(sha, date, order, message)
            values = commits.get(sha)
            if values is None:
                commits[sha] = [(value, low, high, units, relative)]
            else:
                values.append((value, low, high, units, relative))
        finish(current, commits)
        return out

    def evidence(self, series: Series, point: Point) -> list[Any]:
        """The Measurements (or CallgrindStats) observed at one point, checked against the
        results schema as they are read."""
        from benchkit.system.results_files import results_validator
        rows = self._db.execute(
            "SELECT o.format, o.evidence FROM observations o JOIN runs r ON o.run = r.id "
            "WHERE o.benchmark = ? AND o.metric = ? AND r.machine = ? AND r.sha = ? "
            "ORDER BY r.id", (series.benchmark, str(series.metric), series.machine,
                              point.commit.sha)).fetchall()
        key = "callgrind" if series.metric is HistoryMetric.INSTRUCTIONS else "measurements"
        out = []
        for version, blob in rows:
            try:
                inflater = zlib.decompressobj()
                raw = inflater.decompress(blob, read_limit())
                if inflater.unconsumed_tail:
                    raise HistoryError(f"{self.path}: a stored item of {series.benchmark!r} "
                                       "inflates beyond BENCHKIT_READ_LIMIT")
                item = json.loads(raw)
                doc = {"format": schema.FORMAT_NAME, "version": version, key: [item]}
                results = schema.from_document(doc, results_validator())
            except (zlib.error, ValueError, SchemaError) as error:
                raise HistoryError(f"{self.path}: a stored item of {series.benchmark!r} at "
                                   f"{point.commit.sha[:12]} is damaged ({error})") from None
            out += results.measurements + results.callgrind
        return out

    def summaries(self) -> list[Summary]:
        """Per benchmark and metric: machines, commits and observations held."""
        merged: dict[tuple[str, str], Summary] = {}
        for series in self.series():
            key = (series.benchmark, str(series.metric))
            count = sum(p.observations for p in series.points)
            prior = merged.get(key) or Summary(*key, (), 0, 0, series.points[0].commit.sha,
                                               series.points[-1].commit.sha)
            merged[key] = dataclasses.replace(
                prior, machines=prior.machines + (series.machine,),
                commits=max(prior.commits, len(series.points)),
                observations=prior.observations + count)
        return list(merged.values())

    def rows(self) -> Iterable[dict[str, Any]]:
        """Every observation as a flat record (what `history export` writes)."""
        cursor = self._db.execute(
            "SELECT o.benchmark, o.metric, r.machine, c.sha, c.date, c.message, r.measured_at, "
            "o.value, o.low, o.high, o.units, r.source FROM observations o "
            "JOIN runs r ON o.run = r.id JOIN commits c ON c.sha = r.sha "
            "ORDER BY o.benchmark, o.metric, r.machine, c.date, c.ord, r.measured_at")
        names = ("benchmark", "metric", "machine", "commit", "commit_date", "message",
                 "measured_at", "value", "low", "high", "units", "source")
        for row in cursor:
            yield dict(zip(names, row))


def evidence_reader(db: HistoryDB, series: Series) -> Callable[[Point], list[Any]]:
    """`evidence(point)` of one series, as the step finders take it."""
    return lambda point: db.evidence(series, point)
