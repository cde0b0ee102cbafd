"""import-asv side by side with asv's own reader, on real results of two public projects
(tests/fixtures/asv-real/README.md): every value asv's publish reads from a file is the value
benchkit files under the same machine, environment, commit and (benchmark, parameters) name,
every value asv reads as missing is a failure in benchkit's series, never a number, and
results of an older benchmark version are left out by both. The old-format
astropy files are first updated by asv's own `Results.update`, as `asv update` would."""
from __future__ import annotations

import itertools
import json
import math
import shutil
from pathlib import Path

import pytest

from benchkit.orchestration.asv_import import import_asv
from benchkit.system.history_db import HistoryDB

asv_results = pytest.importorskip("asv.results", reason="asv is in the [test] extra")

REAL = Path(__file__).parent / "fixtures" / "asv-real"


def _asv_reading(root: Path) -> tuple[dict, set]:
    """(machine, env, commit, name) -> value, and the same keys asv reads as no value."""
    names = json.loads((root / "benchmarks.json").read_text())
    values, missing = {}, set()
    for path in sorted(root.glob("*/*.json")):
        if path.name == "machine.json":
            continue
        try:
            asv_results.Results.update(str(path))
            run = asv_results.Results.load(str(path))
        except Exception:  # noqa: BLE001 - the files asv itself refuses are not compared
            continue
        machine = run.params["machine"]
        # as `asv publish`: results of an older benchmark version are not shown (asv also
        # drops benchmarks missing from benchmarks.json; benchkit keeps those)
        shown = run.get_result_keys(names)
        for key in run.get_all_result_keys():
            if key in names and key not in shown:
                continue
            params = run.get_result_params(key)
            param_names = names.get(key, {}).get("param_names") or [
                f"param{i + 1}" for i in range(len(params))]
            points = [f"{key}[{','.join(f'{n}={v}' for n, v in zip(param_names, combo))}]"
                      for combo in itertools.product(*params)] if params else [key]
            for name, value in zip(points, run.get_result_value(key, params)):
                where = (machine, run.env_name, run.commit_hash, name)
                if value is None or (isinstance(value, float) and math.isnan(value)):
                    missing.add(where)
                else:
                    values[where] = value
    return values, missing


def _benchkit_reading(root: Path, db: Path) -> tuple[dict, set]:
    with HistoryDB(db) as history:
        import_asv(history, root)
        series = history.series()
    values = {(s.machine, s.environment, p.commit.sha, s.benchmark): p.value
              for s in series for p in s.points}
    failed = {(s.machine, s.environment, c.sha, s.benchmark) for s in series for c, _ in s.failed}
    return values, failed


@pytest.mark.parametrize("project", ["asv-samples", "astropy-cheetah"])
def test_every_value_asv_reads_is_the_value_benchkit_files(project, tmp_path):
    root = tmp_path / project
    shutil.copytree(REAL / project, root)
    ours, our_failures = _benchkit_reading(REAL / project, tmp_path / "h.db")
    theirs, their_missing = _asv_reading(root)
    assert theirs and ours == theirs
    assert our_failures == their_missing
    if project == "asv-samples":
        # four environments ran the same commit on one machine: four series, never one
        envs = {env for (_, env, sha, name) in ours if name.endswith("time_add_arr")}
        assert envs == {"conda-py3.11", "conda-py3.11-numpy", "virtualenv-py3.12",
                        "virtualenv-py3.12-numpy"}


def test_without_benchmarks_json_the_names_are_asvs_defaults_and_it_says_so(tmp_path):
    from test_cli import cli
    root = tmp_path / "results"
    shutil.copytree(REAL / "asv-samples", root)
    (root / "benchmarks.json").unlink()
    out = cli("history", "import-asv", root, "--db", tmp_path / "h.db", cwd=tmp_path,
              check_code=0)
    assert "benchmarks.json is missing: parameters are named as asv names them" in out.stderr
    with HistoryDB(tmp_path / "h.db") as history:
        names = {s.benchmark for s in history.series()}
    assert "benchmarks.time_sort[param1=10]" in names
    (root / "benchmarks.json").write_text("[1, 2")
    out = cli("history", "import-asv", root, "--db", tmp_path / "h2.db", cwd=tmp_path,
              check_code=0)
    assert "benchmarks.json could not be read (not JSON" in out.stderr
    shutil.copy(REAL / "asv-samples" / "benchmarks.json", root / "benchmarks.json")
    out = cli("history", "import-asv", root, "--db", tmp_path / "h3.db", cwd=tmp_path,
              check_code=0)
    assert "benchmarks.json" not in out.stderr


def test_environments_measured_side_by_side_are_not_an_environment_change(tmp_path):
    """asv_samples ran four environments at commits of the same date: no environment
    moved to another, whatever the order of the commit ids."""
    from test_cli import cli
    db = tmp_path / "h.db"
    cli("history", "import-asv", REAL / "asv-samples", "--db", db, cwd=tmp_path, check_code=0)
    out = cli("history", "regressions", "--db", db, cwd=tmp_path, check_code=0)
    assert out.stdout.splitlines() == ["no steps found"]
