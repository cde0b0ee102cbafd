"""Writing a results file into an asv results directory (`benchkit run --format asv`), so an
asv project's site keeps its history while the project moves: MACHINE/machine.json (when
missing), MACHINE/COMMIT-ENV.json, and benchmarks.json (the project's own entries kept).
Every file is written whole or not at all."""
from __future__ import annotations

import datetime
import json
import re
from pathlib import Path

from benchkit.core.history.asv import to_asv
from benchkit.core.records.schema import Results
from benchkit.errors import BenchkitError
from benchkit.system import git
from benchkit.system.files import atomic_write_bytes
from benchkit.system.reading import read_bounded

# asv's machine names become a directory: a name from a host or a user is checked first
MACHINE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def default_results_dir(cwd: Path) -> Path:
    """asv.conf.json's `results_dir` here (asv's default `.asv/results`)."""
    from benchkit.orchestration.asv_config import read_asv_config
    config = read_asv_config(cwd)
    return config.results_dir if config is not None else cwd / ".asv" / "results"


def check_asv_export(cwd: Path, machine: str | None) -> None:
    """Before anything is measured: the run can be written as asv's (a git checkout, a
    machine name that can name a directory)."""
    import socket
    if git.head_state(cwd) is None:
        raise BenchkitError("--format asv: not in a git checkout (asv keeps a file per "
                            "commit); run inside the project's checkout")
    _machine(machine or socket.gethostname())


def _machine(name: str) -> str:
    if not MACHINE_NAME.fullmatch(name):
        raise BenchkitError(f"--format asv: machine name {name!r} cannot name a directory; "
                            "pass --asv-machine NAME (letters, digits, . _ -)")
    return name


def _millis(iso: object) -> int:
    try:
        stamp = datetime.datetime.fromisoformat(str(iso))
    except ValueError:
        return 0
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=datetime.timezone.utc)
    return int(stamp.timestamp() * 1000)


def write_asv_results(results: Results, out_dir: Path, *, cwd: Path,
                      machine: str | None = None) -> Path:
    """Write `results` as one asv run under `out_dir`; the run file's path."""
    env = results.environment
    state = env.get("git") if isinstance(env.get("git"), dict) else None
    if not state or not state.get("commit"):
        raise BenchkitError("--format asv: these results were not measured in a git checkout "
                            "(asv keeps a file per commit); run inside the project's checkout")
    commit = git.commit_id(state["commit"], "environment git.commit")
    machine = _machine(machine or str(env.get("hostname", "")))
    shown = git.git(cwd, "show", "-s", "--format=%cI", "--end-of-options", commit)
    date = shown.stdout.strip() if shown.returncode == 0 else env.get("timestamp")
    python = ".".join(str(env.get("python", "")).split(".")[:2]) or "unknown"
    export = to_asv(results, commit=commit, commit_date_ms=_millis(date),
                    started_ms=_millis(env.get("timestamp")), machine=machine,
                    env_name=f"benchkit-py{python}")
    folder = out_dir / machine
    if not (folder / "machine.json").exists():
        atomic_write_bytes(folder / "machine.json", _json(export.machine_json))
    written = atomic_write_bytes(folder / export.file_name, _json(export.run))
    index = out_dir / "benchmarks.json"
    known = {"version": 2}
    if index.exists():
        try:
            known = json.loads(read_bounded(index, BenchkitError, limit=64 << 20))
        except ValueError as error:
            raise BenchkitError(f"{index}: not JSON ({error}); move it away or fix it, then "
                                "run again (the run file is written)") from None
        if not isinstance(known, dict):
            raise BenchkitError(f"{index}: not asv's benchmarks.json (not an object); move it "
                                "away, then run again (the run file is written)")
    added = {name: entry for name, entry in export.benchmarks.items() if name not in known}
    if added or not index.exists():
        atomic_write_bytes(index, _json({**known, **added}))
    return written


def _json(document: dict) -> bytes:
    # asv writes a skipped benchmark as NaN (not strict JSON; asv and import-asv read it)
    return (json.dumps(document, indent=1) + "\n").encode()
