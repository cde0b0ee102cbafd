"""The two environments of `benchkit ab`: interpreters, environment variables, git revisions.

A side built from a git revision is checked out into a temporary worktree and installed into
its own virtual environment by a command (default: a venv that sees the caller's packages,
plus the checkout installed into it without dependencies). Everything is removed afterwards.
"""
from __future__ import annotations

import contextlib
import os
import shlex
import string
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Iterator

from benchkit.errors import SideError
from benchkit.orchestration.sampling.workers import Interpreter
from benchkit.system import git as gitcmd
from benchkit.system.git import git, toplevel as git_toplevel
from benchkit.system.processes import last_lines, owned_prefix, run_command

DEFAULT_INSTALL = ("{python} -m venv {env} && {python} -c \"import sys; open(sys.argv[1], 'w')"
                   ".write(sys.argv[2])\" {env_pth} {caller_site} && "
                   "{env}/bin/python -m pip install --quiet --no-deps "
                   "--disable-pip-version-check {src}")


INSTALL_FIELDS = ("python", "src", "env", "env_pth", "caller_site")


def check_install(template: str | None) -> str:
    """The --install template (default DEFAULT_INSTALL) once its fields are known: a stray
    brace or an unknown {field} is a SideError before any worktree is made."""
    if template is None:
        return DEFAULT_INSTALL
    try:
        fields = [f for _, f, _, _ in string.Formatter().parse(template) if f is not None]
    except ValueError as error:
        raise SideError(f"--install {template!r}: {error}; double a literal brace ({{{{ or "
                        "}}) or use the fields " + ", ".join(f"{{{f}}}" for f in INSTALL_FIELDS)
                        ) from None
    unknown = [f for f in fields if f not in INSTALL_FIELDS]
    if unknown:
        raise SideError(f"--install {template!r}: unknown field {{{unknown[0]}}}; the fields "
                        "are " + ", ".join(f"{{{f}}}" for f in INSTALL_FIELDS)
                        + " (double a literal brace)")
    return template


def parse_env(pairs: list[str] | None, option: str) -> tuple[tuple[str, str], ...]:
    """NAME=VALUE pairs of --base-env/--new-env."""
    out = []
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key or not key.replace("_", "a").isalnum():
            raise SideError(f"{option} {pair!r}: expected NAME=VALUE")
        out.append((key, value))
    return tuple(out)


def _check_python(python: str, option: str) -> str:
    resolved = shutil.which(python) if os.sep not in python else python
    if not resolved or not os.path.isfile(resolved) or not os.access(resolved, os.X_OK):
        raise SideError(f"{option} {python!r}: no such executable; pass the path of a Python "
                        "interpreter (e.g. /path/to/venv/bin/python)")
    try:
        out = run_command([resolved, "-c", "import sys; print(sys.version_info[:2] >= (3, 10))"],
                          timeout=60)
    except (OSError, subprocess.SubprocessError) as error:
        raise SideError(f"{option} {python!r} cannot be run: {error}") from None
    if out.returncode != 0 or out.stdout.strip() != "True":
        raise SideError(f"{option} {python!r} is not a Python >= 3.10 interpreter "
                        f"({(out.stderr or out.stdout).strip()[-300:]})")
    return resolved


def _caller_site() -> str:
    """A .pth line that adds this interpreter's packages after the side's own."""
    dirs = dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
    return "import site; " + "; ".join(f"site.addsitedir({d!r})" for d in dirs)



@contextlib.contextmanager
def revision_side(name: str, repo: Path, rev: str, install: str | None, workdir: Path,
                  env: tuple[tuple[str, str], ...], log=None) -> Iterator[Interpreter]:
    """Check out `rev` of `repo` into a worktree, run the install command, yield the
    Interpreter of the virtual environment it made."""
    commit = gitcmd.resolve(repo, rev, f"--{name}-rev")
    if not commit:
        raise SideError(f"--{name}-rev: {rev!r} is not a revision of the git repository at "
                        f"{repo}; pass a branch, tag or commit that `git rev-parse` knows")
    template = check_install(install)
    src = workdir / f"{name}-src"
    envdir = workdir / f"{name}-env"
    try:
        # inside the try: an interrupt while git adds the worktree must remove it too
        added = git(repo, "worktree", "add", "--detach", "--end-of-options", str(src), commit)
        if added.returncode != 0:
            raise SideError(f"--{name}-rev {rev}: `git worktree add` failed:\n"
                            f"{last_lines(added.stderr, 30)}")
        fields = {"python": shlex.quote(sys.executable), "src": shlex.quote(str(src)),
                  "env": shlex.quote(str(envdir)),
                  "env_pth": shlex.quote(str(envdir / "lib" / f"python{sys.version_info.major}"
                                             f".{sys.version_info.minor}" / "site-packages" /
                                             "benchkit-caller.pth")),
                  "caller_site": shlex.quote(_caller_site())}
        command = template.format(**fields)
        if log:
            log(f"{name}: installing {rev} ({commit[:12]}) ...")
        done = run_command(command, shell=True, cwd=src, timeout=3600,
                           env={**os.environ, "BENCHKIT_SRC": str(src),
                                "BENCHKIT_ENV": str(envdir)})
        if done.returncode != 0:
            raise SideError(f"--{name}-rev {rev}: the install command failed (exit "
                            f"{done.returncode}): {command}\n"
                            f"{last_lines(done.stdout + done.stderr, 30)}")
        python = envdir / "bin" / "python"
        if not python.is_file():
            raise SideError(f"--{name}-rev {rev}: the install command left no {python}; it "
                            "must create a virtual environment at {env}")
        yield Interpreter(name, str(python), env, None)
    finally:
        git(repo, "worktree", "remove", "--force", "--end-of-options", str(src))
        # a worktree that git had not finished adding is not removable: its directory goes
        # first, then prune drops what git registered of it
        shutil.rmtree(src, ignore_errors=True)
        git(repo, "worktree", "prune")


@contextlib.contextmanager
def sides(*, base_python: str | None = None, new_python: str | None = None,
          base_env: list[str] | None = None, new_env: list[str] | None = None,
          base_rev: str | None = None, new_rev: str | None = None, repo: str | None = None,
          install: str | None = None, log=None) -> Iterator[tuple[Interpreter, Interpreter]]:
    """Validate the options of both sides and set them up (revisions installed)."""
    envs = {"base": parse_env(base_env, "--base-env"), "new": parse_env(new_env, "--new-env")}
    pythons = {"base": base_python, "new": new_python}
    revs = {"base": base_rev, "new": new_rev}
    for name in ("base", "new"):
        if revs[name] and pythons[name]:
            raise SideError(f"--{name}-rev and --{name}-python both given; a revision is "
                            "installed into its own environment, so pass one of them")
    if install and not any(revs.values()):
        raise SideError("--install is for --base-rev/--new-rev; pass a revision")
    check_install(install)
    if (log and not any(revs.values()) and pythons["base"] == pythons["new"]
            and envs["base"] == envs["new"]):
        log("BASE and NEW are the same environment: an A/A check of the machine's noise "
            "(pass --base-python/--new-python, --base-env/--new-env or --base-rev/--new-rev "
            "to compare two)")
    checked = {name: _check_python(p, f"--{name}-python") for name, p in pythons.items() if p}
    root = None
    if any(revs.values()):
        root = git_toplevel(Path(repo or ".").resolve())
        if root is None:
            raise SideError(f"--repo {Path(repo or '.').resolve()}: not inside a git "
                            "repository")
    with contextlib.ExitStack() as stack:
        workdir = Path(stack.enter_context(
            tempfile.TemporaryDirectory(prefix=owned_prefix("ab"))))
        made = {}
        for name in ("base", "new"):
            if revs[name]:
                made[name] = stack.enter_context(
                    revision_side(name, root, revs[name], install, workdir, envs[name], log))
            else:
                made[name] = Interpreter(name, checked.get(name, sys.executable), envs[name],
                                         None)
        yield made["base"], made["new"]
