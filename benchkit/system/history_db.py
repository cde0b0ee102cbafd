"""The history database: one SQLite file (by default `.benchkit/history.db` in the project)
that keeps every observation of every results file added to it, keyed by benchmark, metric,
machine, environment and git commit.

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

from benchkit.core.history.changes import hardware_sql, labelled_runs
from benchkit.core.metrics.metric import metric_named
from benchkit.core.dashboard.views import Summary, summaries
from benchkit.core.history.step import Step, step_key
from benchkit.core.history.series import Commit, Observation, Point, Series, utc_date
from benchkit.core.history.series_rows import series_from_observations
from benchkit.errors import HistoryError
from benchkit.system.bulk import paused_gc
from benchkit.system.history_schema import (EXPECTED_COLUMNS, INSERT_OBSERVATION,
                                           INSERT_PLAIN, MIGRATIONS, VERSION,
                                           observation_rows)

APPLICATION_ID = 0x626B6869          # "bkhi"
BUSY_TIMEOUT_MS = 120_000
# Received databases are not trusted: a stored item inflates to at most this many bytes.
EVIDENCE_LIMIT = 64 << 20


@dataclasses.dataclass(frozen=True)
class AddedRun:
    """What one `add` did: the run's id, or None when the same file was already there."""

    source: str
    run: int | None
    observations: int


# What series() reads: observations with a value; those without (failed, skipped); and the
# few rows that carry a unit or evidence.
_SERIES_QUERIES = (
    # a low or high equal to the value (asv's imports) comes back as NULL: less to fetch
    "SELECT bench, run, value, NULLIF(low, value), NULLIF(high, value), units, relative "
    "FROM observations WHERE status = 'ok' AND value IS NOT NULL",
    "SELECT bench, run, status FROM observations WHERE NOT (status = 'ok' AND value IS NOT NULL)",
    "SELECT bench, run, unit, evidence IS NOT NULL FROM observations "
    "WHERE (unit != '' OR evidence IS NOT NULL)")


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
        self._batch = False
        self._ids: dict[tuple[str, str], int] = {}
        self._labels: tuple[Any, dict[int, str]] = (None, {})
        try:
            self._db = sqlite3.connect(str(self.path), timeout=BUSY_TIMEOUT_MS / 1000,
                                       isolation_level=None)
            self._db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            # a large history's index pages stay in memory (64 MiB, not SQLite's 2 MiB)
            self._db.execute("PRAGMA cache_size = -65536")
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
                    MIGRATIONS[step](self._db)
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
        if self._batch:
            # inside batch(): the batch's transaction; a failure stops the batch (no
            # savepoint per add: they made a 5,000-file import's inserts 1.7x slower)
            yield
            return
        with self._guard("write to"):
            self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._ids.clear()
            with contextlib.suppress(sqlite3.Error):
                self._db.execute("ROLLBACK")
            raise
        with self._guard("write to"):
            self._db.execute("COMMIT")

    @contextlib.contextmanager
    def _guard(self, action: str) -> Iterator[None]:
        """SQLite's errors after the database was opened (a full disk, a read-only
        directory, a page overwritten mid-file) as one HistoryError naming the file."""
        try:
            yield
        except sqlite3.Error as error:
            raise HistoryError(f"{self.path}: could not {action} the history database "
                               f"({error}); check the disk and the directory's permissions, "
                               "or pass --db with another path") from None

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """Many adds in one transaction (an import of thousands of files). An add that
        fails stops the batch, and a batch stopped part-way (an error, a kill) leaves the
        database as it was before the batch."""
        # its rows refer only to runs and benchmarks it has just made: checking each of
        # 480,000 references again was a fifth of a large import's inserts
        self._db.execute("PRAGMA foreign_keys = OFF")
        try:
            with self._write():
                self._batch = True
                yield
        finally:
            self._batch = False
            self._db.execute("PRAGMA foreign_keys = ON")

    def close(self) -> None:
        """Close the connection."""
        self._db.close()

    def __enter__(self) -> "HistoryDB":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- writing ----------------------------------------------------------------------------
    def digests(self) -> set[str]:
        """The content digests of every results file added."""
        return {row[0] for row in self._query("SELECT digest FROM runs")}

    def add(self, observations: Sequence[Observation], *, commit: Commit, machine: str,
            measured_at: str, source: str, digest: str, environment: dict[str, Any],
            env: str | None = None) -> AddedRun:
        """Add one results file's observations as one run, in one transaction. `env` names
        its environment (default: from the fingerprint); series never pool two."""
        from benchkit.system.history_schema import env_of_fingerprint
        env = env_of_fingerprint(environment) if env is None else env
        plain, rows = observation_rows(observations)
        with self._write(), self._guard("add to"):
            if self._db.execute("SELECT 1 FROM runs WHERE digest = ?", (digest,)).fetchone():
                return AddedRun(source, None, 0)
            self._db.execute(
                "INSERT INTO commits (sha, date, ord, message) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (sha) DO UPDATE SET date = CASE WHEN excluded.date != '' "
                "THEN excluded.date ELSE date END, ord = coalesce(excluded.ord, ord), "
                "message = CASE WHEN excluded.message != '' THEN excluded.message "
                "ELSE message END",
                (commit.sha, utc_date(commit.date), commit.order, commit.message))
            run = self._db.execute(
                "INSERT INTO runs (sha, machine, measured_at, source, digest, environment, env) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (commit.sha, machine, measured_at, source, digest,
                 json.dumps(environment, sort_keys=True, default=str), env)).lastrowid
            ids = self._benchmark_ids({row[0] for held in (plain, rows) for row in held})
            for insert, held in ((INSERT_PLAIN, plain), (INSERT_OBSERVATION, rows)):
                self._db.executemany(insert, [(run, ids[row[0]], *row[1:]) for row in held])
            self._db.execute("DELETE FROM failed_revisions WHERE sha = ? AND machine = ?",
                             (commit.sha, machine))
            self._changed()
        return AddedRun(source, run, len(plain) + len(rows))

    def _benchmark_ids(self, names: set[tuple[str, str]]) -> dict[tuple[str, str], int]:
        """The id of each (benchmark, metric), added where new. Called inside a write; the
        cache is dropped when a write rolls back (its new ids went with it)."""
        missing = names - self._ids.keys()
        if missing:
            self._db.executemany("INSERT OR IGNORE INTO benchmarks (name, metric) VALUES (?, ?)",
                                 sorted(missing))
            self._ids.update(((name, metric), id_) for id_, name, metric in self._db.execute(
                "SELECT id, name, metric FROM benchmarks"))
        return self._ids

    def record_failure(self, commit: Commit, machine: str, failed_at: str,
                       message: str) -> None:
        """Remember that a revision could not be measured (a later success replaces it)."""
        with self._write(), self._guard("add to"):
            self._db.execute(
                "INSERT OR IGNORE INTO commits (sha, date, ord, message) VALUES (?, ?, ?, ?)",
                (commit.sha, utc_date(commit.date), commit.order, commit.message))
            self._db.execute("INSERT OR REPLACE INTO failed_revisions VALUES (?, ?, ?, ?)",
                             (commit.sha, machine, failed_at, message))
            self._changed()

    def _changed(self) -> None:
        self._db.execute("UPDATE meta SET value = value + 1 WHERE key = 'changes'")

    def keep_confirmations(self, steps: Sequence[Step]) -> None:
        """Store what `--confirm` said of each step that has a verdict (the last word
        stands): later listings and the report show it (`confirmations`)."""
        with self._write(), self._guard("write to"):
            self._db.executemany("INSERT OR REPLACE INTO confirmations VALUES (?,?,?,?,?,?,?)",
                                 [(*step_key(s), s.confirmation) for s in steps
                                  if s.confirmation])

    def confirmations(self) -> dict[tuple, str]:
        """The verdicts kept, by `step_key` (rows not all text, written elsewhere: skipped)."""
        return {tuple(row[:6]): row[6] for row in self._query(
            "SELECT benchmark, metric, machine, environment, previous, sha, verdict "
            "FROM confirmations") if all(isinstance(v, str) for v in row)}

    # -- derived results --------------------------------------------------------------------
    def cached(self, key: str) -> bytes | None:
        """What `keep(key, ...)` stored, inflated, if nothing was written since (else None).
        The bytes come from a file: the caller checks them."""
        rows = self._query("SELECT c.value FROM cache c JOIN meta m ON m.key = 'changes' "
                           "AND m.value = c.changes WHERE c.key = ?", (key,))
        if not rows or not isinstance(rows[0][0], bytes):
            return None
        inflater = zlib.decompressobj()
        try:
            raw = inflater.decompress(rows[0][0], EVIDENCE_LIMIT)
        except zlib.error:
            return None
        return None if inflater.unconsumed_tail else raw

    def keep(self, key: str, value: bytes) -> None:
        """Store a derived result for the database as it is now. Best effort: a database
        that cannot be written (a read-only directory) keeps nothing."""
        with contextlib.suppress(HistoryError):
            with self._write(), self._guard("write to"):
                self._db.execute(
                    "INSERT OR REPLACE INTO cache (key, changes, value) SELECT ?, value, ? "
                    "FROM meta WHERE key = 'changes'", (key, zlib.compress(value, 6)))

    # -- reading ----------------------------------------------------------------------------
    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        with self._guard("read"):
            return self._db.execute(sql, params).fetchall()

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> Iterator[tuple]:
        """The rows of `sql` one at a time: millions of observations are not held twice
        (every row fetched, then the series' own)."""
        with self._guard("read"):
            yield from self._db.execute(sql, params)

    def has_commit(self, sha: str, machine: str, *, metric: str | None = None
                   ) -> bool:
        """Whether values (of `metric`, if given) exist for this commit and machine."""
        query = ("SELECT 1 FROM runs r JOIN observations o ON o.run = r.id JOIN benchmarks b "
                 "ON b.id = o.bench WHERE r.sha = ? AND r.machine = ? AND o.status = 'ok'")
        params: list[Any] = [sha, machine]
        if metric is not None:
            query += " AND b.metric = ?"
            params.append(str(metric))
        return bool(self._query(query + " LIMIT 1", params))

    def failures(self) -> list[tuple[str, str, str, str]]:
        """(sha, machine, when, message) of each revision that could not be measured."""
        return self._query("SELECT sha, machine, failed_at, message FROM failed_revisions "
                           "ORDER BY failed_at")

    def commit(self, sha: str) -> Commit | None:
        """The commit as recorded, or None."""
        rows = self._query("SELECT sha, date, ord, message FROM commits WHERE sha = ?", (sha,))
        return Commit(*rows[0]) if rows else None

    def commits_matching(self, prefix: str) -> list[str]:
        """Full ids of the recorded commits that start with `prefix`."""
        return [r[0] for r in self._query(
            "SELECT sha FROM commits WHERE substr(sha, 1, ?) = ?", (len(prefix), prefix))]

    def series(self, *, benchmark: str | None = None, metric: str | None = None,
               machine: str | None = None, environment: str | None = None) -> list[Series]:
        """Every series (filtered): one per benchmark, metric, machine and environment (named
        with its kind of hardware where a machine's runs differ in it), its points in commit
        order, with the commits where it failed. No evidence: `evidence()` reads it."""
        # each table read once and joined here: 480,000 observations of one import are
        # small rows of ids, not the names and commit records repeated on every row
        known = {sha: Commit(sha, date, order, message) for sha, date, order, message
                 in self._query("SELECT sha, date, ord, message FROM commits")}
        # a run whose commit is missing (a received file made without foreign keys) is skipped
        runs = {id_: (known[sha], host, label, measured_at)
                for id_, sha, host, env, label, measured_at in self._runs(machine)
                if sha in known and environment in (None, env, label)}
        pairs = [(c, str(v)) for c, v in (("name", benchmark), ("metric", metric)) if v is not None]
        names = {id_: (name, kind) for id_, name, kind in self._query(
            "SELECT id, name, metric FROM benchmarks" + (" WHERE " + " AND ".join(
                f"{c} = ?" for c, _ in pairs) if pairs else ""), [v for _, v in pairs])}
        only = f" AND bench = {next(iter(names))}" if len(names) == 1 else ""
        # rows one at a time: 4,000,000 values fetched whole peaked at 1.5 GiB, so at 0.7
        with paused_gc():
            return series_from_observations(
                *(self._rows(query + only) for query in _SERIES_QUERIES), runs, names)

    def _runs(self, machine: str | None) -> list[tuple[int, str, str, str, str, str]]:
        """(id, commit, machine, environment, its series' name for it, measured at) of each
        run (of `machine`; labelled_runs: one series per kind of hardware)."""
        return labelled_runs(self._query(
            "SELECT id, sha, machine, env, measured_at, "
            f"{hardware_sql('environment')} FROM runs"
            + (" WHERE machine = ?" if machine is not None else ""),
            () if machine is None else (machine,)))

    def evidence(self, series: Series, point: Point) -> list[Any]:
        """The Measurements (or CallgrindStats) observed at one point, checked against the
        results schema as they are read ([] where the source kept none)."""
        from benchkit.system.results_files import stored_item
        labels = self._labels_of(series.machine)
        rows = [row[1:] for row in self._query(
            "SELECT r.id, o.format, o.evidence FROM observations o JOIN runs r ON o.run = r.id "
            "JOIN benchmarks b ON b.id = o.bench WHERE b.name = ? AND b.metric = ? AND "
            "r.machine = ? AND r.sha = ? AND o.evidence IS NOT NULL AND o.status = 'ok' "
            "ORDER BY r.id", (series.benchmark, str(series.metric), series.machine,
                              point.commit.sha)) if labels.get(row[0]) == series.environment]
        key, out = metric_named(series.metric).evidence or "measurements", []
        for version, blob in rows:
            try:
                results = stored_item(version, blob, key, EVIDENCE_LIMIT)
            except ValueError as error:
                raise HistoryError(f"{self.path}: a stored item of {series.benchmark!r} at "
                                   f"{point.commit.sha[:12]} is damaged ({error})") from None
            out += results.measurements + results.callgrind
        return out

    def _labels_of(self, machine: str) -> dict[int, str]:
        """Each run of `machine` and the environment its series names, read again only
        after a write (evidence() asks for them point after point)."""
        state = (machine, self._query("SELECT value FROM meta WHERE key = 'changes'"))
        if self._labels[0] != state:
            self._labels = (state, {run[0]: run[4] for run in self._runs(machine)})
        return self._labels[1]

    def summaries(self) -> list[Summary]:
        """Per benchmark and metric: machines, commits and observations held."""
        return summaries(self.series())

    def rows(self) -> Iterable[dict[str, Any]]:
        """Every observation as a flat record (what `history export` writes), with the
        environment its series is named by (`series_environment`: with the kind of CPU)."""
        names = ("benchmark", "metric", "machine", "environment", "commit", "commit_date",
                 "message", "measured_at", "value", "low", "high", "units", "unit",
                 "status", "source", "series_environment")
        labels = {run[0]: run[4] for run in self._runs(None)}
        for row in self._rows(
                "SELECT b.name, b.metric, r.machine, r.env, c.sha, c.date, c.message, "
                "r.measured_at, o.value, o.low, o.high, o.units, o.unit, o.status, r.source, "
                "r.id FROM observations o JOIN benchmarks b ON b.id = o.bench JOIN runs r "
                "ON o.run = r.id JOIN commits c ON c.sha = r.sha "
                "ORDER BY b.name, b.metric, r.machine, r.env, c.date, c.ord, r.measured_at"):
            yield dict(zip(names, (*row[:-1], labels.get(row[-1], row[3]))))


def evidence_reader(db: HistoryDB, series: Series) -> Callable[[Point], list[Any]]:
    """`evidence(point)` of one series, as the step finders take it."""
    return lambda point: db.evidence(series, point)
