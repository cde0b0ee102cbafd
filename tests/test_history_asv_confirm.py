"""An asv project's history end to end: real `asv run` records a project whose package sits
beside its benchmarks/ (asv.conf.json at the top, as most projects keep it), `history
import-asv` brings the results in, `regressions` finds the slowdown, and `--confirm`
re-measures it with `ab` on the same asv suite, unchanged: the names of asv's results and of
benchkit's run of the suite are one, and each side measures its own revision."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FAST_INSTALL
from test_cli import cli

pytestmark = pytest.mark.slow

ASV = shutil.which("asv", path=str(Path(sys.executable).parent))
pytest.importorskip("asv_runner", reason="running asv suites needs asv_runner ([asv] extra)")

# A single asv --quick call a commit: long enough (about 10 ms before the step) that a loaded
# machine's jitter stays far below the 20x step (at 1 ms, a CI run with other jobs on both
# cores once read a commit before the step as slow as the step and named the step there),
# and six commits on each side of it.
COMMITS, SLOWER_AT, FACTOR = 12, 6, 20
NAME = "benchmarks.Work.time_work[n=500000]"
SUITE = '''from slowpkg import work


class Work:
    params = [500000]
    param_names = ["n"]

    def time_work(self, n):
        work(n)
'''
CONF = {"version": 1, "project": "slowpkg", "repo": ".", "branches": ["master"],
        "benchmark_dir": "benchmarks", "results_dir": ".asv/results", "html_dir": ".asv/html",
        "environment_type": "virtualenv"}


def _run(command, cwd, env):
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.mark.skipif(ASV is None, reason="asv is not installed (the [test] extra has it)")
def test_an_asv_projects_slowdown_is_imported_found_and_confirmed(tmp_path):
    repo = tmp_path / "repo"
    (repo / "slowpkg").mkdir(parents=True)
    (repo / "benchmarks").mkdir()
    (repo / "benchmarks" / "__init__.py").write_text("")
    (repo / "benchmarks" / "benchmarks.py").write_text(SUITE)
    (repo / "asv.conf.json").write_text(json.dumps(CONF))
    (repo / ".gitignore").write_text(".asv/\n")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    _run(["git", "init", "-q", "-b", "master"], repo, env)
    for n in range(COMMITS):
        factor = FACTOR if n >= SLOWER_AT else 1
        (repo / "slowpkg" / "__init__.py").write_text(
            f"def work(n):\n    return sum(range(n * {factor}))\n")
        (repo / "notes.txt").write_text(f"commit {n}\n")    # the others change nothing
        _run(["git", "add", "-A"], repo, env)
        _run(["git", "commit", "-qm", f"commit {n}"], repo, env)
    shas = _run(["git", "rev-list", "--reverse", "HEAD"], repo, env).split()
    # asv's runs, each in an existing environment that imports the checkout (asv installs
    # nothing there), one commit checked out at a time
    python = tmp_path / "asv-env" / "bin" / "python"
    _run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "asv-env")], repo, env)
    site = next((tmp_path / "asv-env" / "lib").glob("python*/site-packages"))
    caller_site = next(p for p in sys.path if p.endswith("site-packages"))
    (site / "caller.pth").write_text(f"{repo}\n{caller_site}\n")
    _run([ASV, "machine", "--yes", "--machine", "box"], repo, env)
    for sha in shas:
        _run(["git", "checkout", "-q", sha], repo, env)
        _run([ASV, "run", "--quick", "-E", f"existing:{python}", "--set-commit-hash", sha,
              "--machine", "box"], repo, env)
    _run(["git", "checkout", "-q", "master"], repo, env)

    db = tmp_path / "h.db"
    cli("history", "import-asv", repo / ".asv" / "results", "--repo", repo, "--db", db,
        cwd=repo, check_code=0)
    found = json.loads(cli("history", "regressions", "--json", "--db", db, cwd=repo,
                           check_code=0).stdout)
    (step,) = [s for s in found if s.get("kind") != "environment"]
    assert (step["benchmark"], step["commit"]) == (NAME, shas[SLOWER_AT]), step
    out = cli("history", "regressions", "--confirm", "benchmarks", "--install", FAST_INSTALL,
              "--rounds", "3", "--db", db, cwd=repo, check_code=0).stdout
    (said,) = [line.strip() for line in out.splitlines() if line.startswith("    confirmed")
               or line.startswith("    rejected") or line.startswith("    inconclusive")
               or line.startswith("    not re-measurable")]
    assert said.startswith("confirmed: ab says slower"), out
