"""Nothing from a file, a database or a command line reaches git as an option (issue 38, 1):
every CLI path that names a revision, against a real git repository, with a hostile
`--output=PATH` that would make git write a file of the sender's choosing."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from benchkit.errors import RevisionError
from benchkit.system import git
from test_cli import cli

FIXTURES = Path(__file__).parent / "fixtures"


def _repo(path: Path) -> Path:
    path.mkdir()
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(path), "PATH": "/usr/bin:/bin"}
    subprocess.run(["git", "-C", str(path), "init", "-q"], check=True, env=env)
    for n in range(3):
        (path / "f.txt").write_text(str(n))
        subprocess.run(["git", "-C", str(path), "add", "-A"], check=True, env=env)
        subprocess.run(["git", "-C", str(path), "commit", "-qm", f"c{n}"], check=True, env=env)
    return path


@pytest.fixture
def repo(tmp_path):
    return _repo(tmp_path / "repo")


def _one_line_error(out, *words):
    assert out.returncode == 2, out.stdout + out.stderr
    assert "Traceback" not in out.stderr
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, out.stderr
    for word in words:
        assert word in lines[0], lines[0]


@pytest.mark.parametrize("rev", ["--output=PWN", "", " ", "*", "a b", "-x", "HEAD\n"])
def test_checked_name_refuses_what_git_could_read_as_an_option(rev):
    with pytest.raises(RevisionError, match="--good: .* is not a revision"):
        git.checked_name(rev, "--good")


@pytest.mark.parametrize("value", ["--output=x", "abc", "zzzz", "", None, 12345, "a" * 65])
def test_commit_ids_from_data_are_hex(value):
    with pytest.raises(RevisionError, match="not a commit id"):
        git.commit_id(value, "file.json: git.commit")
    assert git.commit_id("ABCD1234", "x") == "abcd1234"


def test_resolve_never_passes_a_name_as_an_option(repo, tmp_path):
    head = git.resolve(repo, "HEAD", "--revs")
    assert head and git.COMMIT_ID.fullmatch(head)
    assert git.resolve(repo, "no-such-branch", "--revs") is None
    with pytest.raises(RevisionError):
        git.resolve(repo, f"--output={tmp_path / 'pwn'}", "--revs")
    assert not (tmp_path / "pwn").exists()


@pytest.mark.parametrize("revs", ["--output={pwn}", "--output={pwn}..HEAD", "HEAD..--output={pwn}",
                                  "^--output={pwn}"])
@pytest.mark.slow
def test_history_run_revs(repo, tmp_path, revs):
    pwn = tmp_path / "pwn"
    (tmp_path / "bench_x.py").write_text("from benchkit import Timer\nb = Timer('pass')\n")
    out = cli("history", "run", tmp_path / "bench_x.py", "--repo", repo,
              "--revs=" + revs.format(pwn=pwn), "--db", tmp_path / "h.db", cwd=tmp_path)
    _one_line_error(out, "--revs", "is not a revision")
    assert not pwn.exists()


@pytest.mark.parametrize("option", ["--good", "--bad"])
def test_bisect_revisions(repo, tmp_path, option):
    pwn = tmp_path / "pwn"
    other = "--bad" if option == "--good" else "--good"
    out = cli("bisect", tmp_path, "--repo", repo, f"{option}=--output={pwn}", other, "HEAD",
              "--benchmark", "b", "--db", tmp_path / "h.db", cwd=tmp_path)
    _one_line_error(out, f"{option}: '--output=", "is not a revision")
    assert not pwn.exists()


@pytest.mark.parametrize("template", ["{nope}", "echo {", "echo }", "{python.x}", "{0}"])
@pytest.mark.slow
def test_install_templates_are_checked_before_any_worktree(repo, tmp_path, template):
    out = cli("bisect", tmp_path, "--repo", repo, "--good", "HEAD~2", "--bad", "HEAD",
              "--benchmark", "b", "--install", template, "--db", tmp_path / "h.db",
              cwd=tmp_path)
    _one_line_error(out, "--install")
    worktrees = subprocess.run(["git", "-C", str(repo), "worktree", "list"], text=True,
                               capture_output=True).stdout.splitlines()
    assert len(worktrees) == 1
    out = cli("ab", tmp_path, "--repo", repo, "--base-rev", "HEAD~1", "--new-rev", "HEAD",
              "--install", template, cwd=tmp_path)
    _one_line_error(out, "--install")


def test_ab_revisions(repo, tmp_path):
    pwn = tmp_path / "pwn"
    (tmp_path / "bench_x.py").write_text("from benchkit import Timer\nb = Timer('pass')\n")
    out = cli("ab", tmp_path / "bench_x.py", "--repo", repo, f"--base-rev=--output={pwn}",
              "--new-rev", "HEAD", cwd=tmp_path)
    _one_line_error(out, "--base-rev", "is not a revision")
    assert not pwn.exists()


def test_a_received_results_file_whose_commit_is_an_option(repo, tmp_path):
    pwn = tmp_path / "pwn"
    doc = json.loads((FIXTURES / "results" / "v4_run.json").read_text())
    doc["environment"]["git"]["commit"] = f"--output={pwn}"
    hostile = tmp_path / "hostile.json"
    hostile.write_text(json.dumps(doc))
    out = cli("history", "add", hostile, "--db", tmp_path / "h.db", cwd=repo)
    _one_line_error(out, "git.commit", "not a commit id")
    assert not pwn.exists()
    out = cli("history", "add", hostile, f"--commit=--output={pwn}", "--db",
              tmp_path / "h.db", cwd=repo)
    _one_line_error(out, "--commit", "is not a revision")
    assert not pwn.exists()


def test_an_asv_file_whose_commit_hash_is_an_option(repo, tmp_path):
    pwn = tmp_path / "pwn"
    results = tmp_path / "results"
    shutil.copytree(FIXTURES / "asv" / "results", results)
    run = next(p for p in (results / "fixture-box").glob("*.json") if p.name != "machine.json")
    doc = json.loads(run.read_text())
    doc["commit_hash"] = f"--output={pwn}"
    run.write_text(json.dumps(doc))
    out = cli("history", "import-asv", results, "--repo", repo, "--db", tmp_path / "h.db",
              cwd=tmp_path)
    assert not pwn.exists()
    assert "Traceback" not in out.stderr
    assert "not a commit id" in out.stdout + out.stderr
