"""The history database's schema, version by version, and the steps that bring an older
database forward. Each step runs inside the opener's write transaction.

- 1: commits, runs, observations (time and instructions), failed revisions.
- 2: a series is one machine *and one environment*: `runs.env` (the environment's short
  name); observations of any metric (`mem`, `peakmem`, `track` from asv), with a `unit`,
  and failed or skipped benchmarks kept as observations without a value (`status`);
  evidence may be absent (asv keeps none); commit dates stored in UTC so that they sort as
  text (version 1 kept git's offsets: `10:00+05:00` sorted after `06:00+00:00`).
- 3: benchmark names are kept once (`benchmarks`: id, name, metric) and observations refer to
  them by id: a 5,000-file asv import wrote 480,000 copies of each name and indexed them as
  text (inserts 3x slower, the file 2.4x larger).
- 4: a commit's place on the first-parent line is counted from the root as 1 everywhere
  (`git rev-list --count`, as `history add` and `history run` count); asv imports counted
  from 0, so a commit added by one and its neighbour imported by the other could tie.
  Commits that only imports wrote move up by one.
- 5: what `history regressions --confirm` said of each step it re-measured
  (`confirmations`), kept so that later listings and the report show it.
"""
from __future__ import annotations

import json
import sqlite3
import zlib
from typing import Callable, Sequence

from benchkit.core.history.series import Observation, Status, utc_date
from benchkit.core.records import schema
from benchkit.core.records.environment import environment_key

VERSION = 5

_SCHEMA_1 = """
CREATE TABLE commits (
    sha TEXT PRIMARY KEY,
    date TEXT NOT NULL,            -- ISO 8601 commit date, '' when unknown
    ord INTEGER,                   -- position on the first-parent line, NULL unknown
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

_OBSERVATIONS_2 = """
CREATE TABLE observations_2 (
    run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    benchmark TEXT NOT NULL,
    metric TEXT NOT NULL,          -- time, instructions, mem, peakmem, track
    value REAL,                    -- NULL when the benchmark failed or was skipped
    low REAL,
    high REAL,
    units INTEGER NOT NULL,
    relative REAL,
    unit TEXT NOT NULL DEFAULT '', -- '' for the metric's own unit
    status TEXT NOT NULL DEFAULT 'ok' CHECK (status IN ('ok', 'failed', 'skipped')),
    format INTEGER NOT NULL,
    evidence BLOB                  -- NULL when the source keeps none (asv)
);
INSERT INTO observations_2 (run, benchmark, metric, value, low, high, units, relative, unit,
                            status, format, evidence)
    SELECT run, benchmark, metric, value, low, high, units, relative, '', 'ok', format, evidence
    FROM observations;
DROP TABLE observations;
ALTER TABLE observations_2 RENAME TO observations;
CREATE INDEX observations_series ON observations (benchmark, metric, run);
ALTER TABLE runs ADD COLUMN env TEXT NOT NULL DEFAULT '';
"""


def _statements(script: str) -> Callable[[sqlite3.Connection], None]:
    def run(db: sqlite3.Connection) -> None:
        for statement in script.split(";"):
            if statement.strip():
                db.execute(statement)
    return run


def _to_2(db: sqlite3.Connection) -> None:
    _statements(_OBSERVATIONS_2)(db)
    for sha, date in db.execute("SELECT sha, date FROM commits").fetchall():
        db.execute("UPDATE commits SET date = ? WHERE sha = ?", (utc_date(date), sha))
    for run, environment in db.execute("SELECT id, environment FROM runs").fetchall():
        try:
            env = json.loads(environment)
        except ValueError:
            env = {}
        key = env_of_fingerprint(env if isinstance(env, dict) else {})
        db.execute("UPDATE runs SET env = ? WHERE id = ?", (key, run))


def env_of_fingerprint(env: dict) -> str:
    """The environment name stored with a run: asv's env_name for imported runs, else the
    fingerprint's environment_key."""
    if env.get("source") == "asv" and isinstance(env.get("env_name"), str):
        return env["env_name"]
    return environment_key(env)


_OBSERVATIONS_3 = """
CREATE TABLE benchmarks (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    metric TEXT NOT NULL,          -- time, instructions, mem, peakmem, track
    UNIQUE (name, metric)
);
INSERT INTO benchmarks (name, metric)
    SELECT DISTINCT benchmark, metric FROM observations ORDER BY benchmark, metric;
CREATE TABLE observations_3 (
    run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    bench INTEGER NOT NULL REFERENCES benchmarks(id),
    value REAL,                    -- NULL when the benchmark failed or was skipped
    low REAL,
    high REAL,
    units INTEGER NOT NULL,
    relative REAL,
    unit TEXT NOT NULL DEFAULT '', -- '' for the metric's own unit
    status TEXT NOT NULL DEFAULT 'ok' CHECK (status IN ('ok', 'failed', 'skipped')),
    format INTEGER NOT NULL,
    evidence BLOB                  -- NULL when the source keeps none (asv)
);
INSERT INTO observations_3 (run, bench, value, low, high, units, relative, unit, status,
                            format, evidence)
    SELECT o.run, b.id, o.value, o.low, o.high, o.units, o.relative, o.unit, o.status,
           o.format, o.evidence
    FROM observations o JOIN benchmarks b ON b.name = o.benchmark AND b.metric = o.metric
    ORDER BY o.rowid;
DROP TABLE observations;
ALTER TABLE observations_3 RENAME TO observations;
CREATE INDEX observations_series ON observations (bench, run);
CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value INTEGER NOT NULL
);
INSERT INTO meta VALUES ('changes', 0);  -- every write adds one: what a cached result was of
CREATE TABLE cache (
    key TEXT PRIMARY KEY,          -- what was computed, with its options and code version
    changes INTEGER NOT NULL,      -- meta.changes when it was computed
    value BLOB NOT NULL            -- zlib-compressed JSON, checked when read (never trusted)
);
"""

_PLACES_FROM_1 = """
UPDATE commits SET ord = ord + 1 WHERE ord IS NOT NULL
    AND sha IN (SELECT sha FROM runs WHERE source LIKE 'asv:%')
    AND sha NOT IN (SELECT sha FROM runs WHERE source NOT LIKE 'asv:%');
UPDATE meta SET value = value + 1 WHERE key = 'changes'
"""

_CONFIRMATIONS_5 = """
CREATE TABLE confirmations (
    benchmark TEXT NOT NULL,
    metric TEXT NOT NULL,
    machine TEXT NOT NULL,
    environment TEXT NOT NULL,
    previous TEXT NOT NULL,        -- the step's commits: the one before it and its own
    sha TEXT NOT NULL,
    verdict TEXT NOT NULL,         -- confirmed / rejected / inconclusive / not re-measurable
    PRIMARY KEY (benchmark, metric, machine, environment, previous, sha)
)
"""

# version -> what brings a database of version - 1 to it
MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {1: _statements(_SCHEMA_1),
                                                               2: _to_2,
                                                               3: _statements(_OBSERVATIONS_3),
                                                               4: _statements(_PLACES_FROM_1),
                                                               5: _statements(_CONFIRMATIONS_5)}
# what the current version's queries need
EXPECTED_COLUMNS = {
    "commits": {"sha", "date", "ord", "message"},
    "runs": {"id", "sha", "machine", "measured_at", "source", "digest", "environment", "env"},
    "benchmarks": {"id", "name", "metric"},
    "meta": {"key", "value"},
    "cache": {"key", "changes", "value"},
    "observations": {"run", "bench", "value", "low", "high", "units", "relative", "unit",
                     "status", "format", "evidence"},
    "failed_revisions": {"sha", "machine", "failed_at", "message"},
    "confirmations": {"benchmark", "metric", "machine", "environment", "previous", "sha",
                      "verdict"},
}


INSERT_OBSERVATION = (
    "INSERT INTO observations (run, bench, value, low, high, units, relative, unit, status, "
    "format, evidence) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
# the columns after `units` at their defaults: an asv import's rows bind 6 values, not 11
# (a quarter of its inserts' time)
INSERT_PLAIN = ("INSERT INTO observations (run, bench, value, low, high, units, format) "
                f"VALUES (?, ?, ?, ?, ?, ?, {int(schema.FORMAT_VERSION)})")


def observation_rows(observations: Sequence[Observation]) -> tuple[list[tuple], list[tuple]]:
    """The rows of INSERT_PLAIN and of INSERT_OBSERVATION that hold `observations`, less the
    run's id, and with (benchmark, metric) where the benchmark's id goes."""
    plain, rows = [], []
    for o in observations:
        key = (o.benchmark, str(o.metric))
        if o.evidence is None and o.relative is None and not o.unit and o.status is Status.OK:
            plain.append((key, o.value, o.low, o.high, o.units))
            continue
        blob = None if o.evidence is None else zlib.compress(
            json.dumps(o.evidence, allow_nan=False).encode(), 6)
        rows.append((key, o.value, o.low, o.high, o.units, o.relative, o.unit,
                     o.status.value, schema.FORMAT_VERSION, blob))
    return plain, rows
