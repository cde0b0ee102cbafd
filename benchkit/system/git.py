"""Every git command benchkit runs. Revisions come from users, results files, asv files and
history databases, so none of them may reach git where it could be read as an option: names
are checked here, resolved with `rev-parse --verify --end-of-options`, and every later call
passes full commit ids after `--end-of-options`."""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from benchkit.errors import RevisionError
from benchkit.system.processes import run_command

# A commit id read from data (a results file, an asv file, a database): hex only.
COMMIT_ID = re.compile(r"[0-9a-fA-F]{4,64}")


def git(repo: str | os.PathLike, *args: str, timeout: float = 300
        ) -> subprocess.CompletedProcess:
    """`git -C repo ARGS...`, output captured as text. A git that cannot be started is a
    failed command (exit 127), not an exception. Callers put revisions after
    `--end-of-options` (or pass ids that `resolve` returned)."""
    try:
        return run_command(["git", "-C", str(repo), *args], timeout=timeout)
    except (OSError, subprocess.SubprocessError) as error:
        return subprocess.CompletedProcess(["git", *args], 127, "", str(error))


def _output(cwd: str | os.PathLike, *args: str) -> str | None:
    out = git(cwd, *args, timeout=5)
    return out.stdout.strip() if out.returncode == 0 else None


def toplevel(path: str | os.PathLike) -> Path | None:
    """The top of the git checkout holding `path`, or None outside one."""
    top = _output(path, "rev-parse", "--show-toplevel")
    return Path(top) if top else None


def history_source(path: str | os.PathLike) -> Path | None:
    """Where commit history can be read at `path`: the top of its checkout, or a bare
    repository itself (a CI mirror, a `git clone --bare`); None where there is neither."""
    top = toplevel(path)
    if top is not None:
        return top
    if _output(path, "rev-parse", "--is-bare-repository") == "true":
        found = _output(path, "rev-parse", "--absolute-git-dir")
        return Path(found) if found else None
    return None


def head_state(cwd: str | os.PathLike) -> dict | None:
    """Commit and dirtiness of the checkout at `cwd`, or None outside one."""
    commit = _output(cwd, "rev-parse", "--verify", "--quiet", "HEAD")
    if commit is None:
        return None
    status = _output(cwd, "status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": bool(status)}


def checked_name(rev: object, option: str) -> str:
    """`rev` when it can name a revision at all: a non-empty string without whitespace or
    control characters, not a lone `*`, not starting with `-` (git would read an option).
    Otherwise a RevisionError naming `option`."""
    text = rev if isinstance(rev, str) else ""
    if (not text or text == "*" or text.startswith("-") or any(c.isspace() for c in text)
            or not text.isprintable()):
        raise RevisionError(f"{option}: {rev!r} is not a revision; pass a branch, tag or "
                            "commit id")
    return text


def commit_id(value: object, where: str) -> str:
    """A commit id read from data (`where` names the file and field): 4 to 64 hex digits,
    lower-cased, or a RevisionError."""
    if not isinstance(value, str) or not COMMIT_ID.fullmatch(value):
        raise RevisionError(f"{where}: {value!r} is not a commit id (4-64 hex digits); "
                            "the file is damaged or was not written by a measuring tool")
    return value.lower()


def resolve(repo: str | os.PathLike, rev: str, option: str) -> str | None:
    """The full id of the commit `rev` names in `repo`, or None when it names none. `rev`
    is checked first (checked_name) and handed to git only after `--end-of-options`."""
    name = checked_name(rev, option)
    return _output(repo, "rev-parse", "--verify", "--quiet", "--end-of-options",
                   f"{name}^{{commit}}")


def shallow(repo: str | os.PathLike) -> bool:
    """Whether `repo` is a shallow clone (CI checks out one commit by default): its history
    stops short of the root, so a count of ancestors is not a commit's place."""
    return _output(repo, "rev-parse", "--is-shallow-repository") == "true"


def describe(repo: str | os.PathLike, sha: str) -> tuple[str, str, int | None] | None:
    """(commit date as git prints it, subject, position on the first-parent line of `sha`
    counted from the root: None in a shallow clone) of a resolved commit id, or None."""
    shown = git(repo, "show", "-s", "--format=%cI%n%s", "--end-of-options", sha)
    if shown.returncode != 0:
        return None
    date, subject = (shown.stdout.split("\n", 1) + [""])[:2]
    count = git(repo, "rev-list", "--count", "--first-parent", "--end-of-options", sha)
    order = int(count.stdout) if count.returncode == 0 and count.stdout.strip().isdigit() \
        and not shallow(repo) else None
    return date.strip(), subject.strip(), order


def rev_list(repo: str | os.PathLike, *ranges: str) -> subprocess.CompletedProcess:
    """`git rev-list --reverse --first-parent` over resolved ranges (`SHA..SHA`, `^SHA`,
    `SHA`), oldest first."""
    return git(repo, "rev-list", "--reverse", "--first-parent", "--end-of-options", *ranges)
