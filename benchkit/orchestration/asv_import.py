"""`benchkit history import-asv`: an asv results directory into the history database."""
from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

from benchkit.core.history.asv import parse_run
from benchkit.errors import HistoryError
from benchkit.orchestration.history import commit_of
from benchkit.system.history_db import HistoryDB
from benchkit.system.reading import read_bounded

# Files of an asv results directory that hold no run.
NOT_RUNS = {"machine.json", "benchmarks.json"}


@dataclasses.dataclass(frozen=True)
class AsvImport:
    """What one import did."""

    files: int
    added: int            # runs new to the database
    already: int          # runs it held (the same file imported before)
    observations: int
    skipped: tuple[str, ...]


def _read(path: Path) -> bytes:
    return read_bounded(path, lambda problem: HistoryError(f"{path}: {problem}"))


def _json(path: Path, raw: bytes | None = None):
    raw = _read(path) if raw is None else raw
    try:
        return json.loads(raw)       # asv writes Infinity/NaN for open intervals: accepted
    except (ValueError, UnicodeDecodeError) as error:
        raise HistoryError(f"{path}: not JSON ({error}); pass asv's results directory "
                           "(the one holding benchmarks.json)") from None


def import_asv(db: HistoryDB, results_dir: str | Path, *, machine: str | None = None,
               repo: Path | None = None) -> AsvImport:
    """Add every run under `results_dir` (asv's `results/`: a folder per machine, a file per
    commit and environment). Runs already there are skipped; each run is one transaction, so
    an import stopped part-way is finished by running it again. With `repo`, commits get
    their subject and ancestor count from it."""
    root = Path(results_dir)
    if not root.is_dir():
        raise HistoryError(f"{root}: not a directory; pass asv's results directory (the "
                           "`results_dir` of asv.conf.json)")
    index = root / "benchmarks.json"
    benchmarks = _json(index) if index.is_file() else {}
    if not isinstance(benchmarks, dict):
        raise HistoryError(f"{index}: not a JSON object; is this an asv results directory?")
    files = sorted(p for p in root.glob("*/*.json") if p.name not in NOT_RUNS and p.is_file())
    if not files:
        raise HistoryError(f"{root}: no asv results files (MACHINE/COMMIT-ENV.json) here; "
                           "pass asv's results directory")
    added = already = count = 0
    skipped: dict[str, None] = {}        # in first-seen order, once each
    for path in files:
        raw = _read(path)
        run = parse_run(_json(path, raw), benchmarks, str(path))
        commit = run.commit
        if repo is not None:
            known = commit_of(repo, commit.sha)
            if known.date:
                commit = known
        done = db.add(run.observations, commit=commit, machine=machine or run.machine,
                      measured_at=run.measured_at, source=f"asv:{path.relative_to(root)}",
                      digest=f"asv:{hashlib.sha256(raw).hexdigest()}", environment=run.environment)
        if done.run is None:
            already += 1
        else:
            added += 1
            count += done.observations
        skipped.update(dict.fromkeys(run.skipped))
    return AsvImport(len(files), added, already, count, tuple(skipped))
