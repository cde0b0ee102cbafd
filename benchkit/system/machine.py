"""The environment fingerprint stored with every results file, read off this machine:
versions, CPU, git state, thread settings, the site-packages listing (core.environment
interprets fingerprints)."""
from __future__ import annotations

import datetime
import hashlib
import importlib.metadata
import os
import platform
import re
import site
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from benchkit.core.environment import parse_cpu_model


def _version(package: str) -> str | None:
    # Read the installed version without importing the package (torch takes seconds).
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            model = parse_cpu_model(f.read())
    except OSError:
        model = None
    return model or platform.processor() or platform.machine()


def git(repo: str | os.PathLike, *args: str, timeout: float = 300
        ) -> subprocess.CompletedProcess:
    """`git -C repo ARGS...`, output captured as text. A git that cannot be started is a
    failed command (exit 127), not an exception."""
    try:
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                              timeout=timeout)
    except (OSError, subprocess.SubprocessError) as error:
        return subprocess.CompletedProcess(["git", *args], 127, "", str(error))


def _git(cwd: str, *args: str) -> str | None:
    out = git(cwd, *args, timeout=5)
    return out.stdout.strip() if out.returncode == 0 else None


def git_toplevel(path: str | os.PathLike) -> Path | None:
    """The top of the git checkout holding `path`, or None outside one."""
    top = _git(str(path), "rev-parse", "--show-toplevel")
    return Path(top) if top else None


def git_state(cwd: str | None = None) -> dict[str, Any] | None:
    """Commit and dirtiness of the git checkout at `cwd`, or None outside one."""
    cwd = cwd or os.getcwd()
    commit = _git(cwd, "rev-parse", "HEAD")
    if commit is None:
        return None
    status = _git(cwd, "status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": bool(status)}


# benchkit's own install hooks in site-packages (an editable install's finder and .pth):
# the collector leaves them out of its interpreter's view, so they are not part of it.
OWN_INSTALL_HOOKS = re.compile(r"__editable__\.benchkit-.*\.pth|__editable___benchkit_.*\.py"
                               r"|benchkit\.egg-link|benchkit\.pth")


def site_packages() -> list[str]:
    """The names in this interpreter's site-packages, less benchkit's own install hooks: the
    listing Python's import system keeps on the heap, which moves instruction counts a
    little (README: Counts wherever benchkit is installed)."""
    names: list[str] = []
    for directory in site.getsitepackages():
        try:
            names += sorted(name for name in os.listdir(directory)
                            if not OWN_INSTALL_HOOKS.fullmatch(name))
        except OSError:
            continue
    return names


def site_packages_digest() -> str:
    """A short digest of site_packages(), recorded with instruction counts."""
    return hashlib.sha256("\0".join(site_packages()).encode()).hexdigest()[:12]


def thread_settings() -> dict[str, Any]:
    """Thread-count environment variables and torch's thread settings."""
    settings: dict[str, Any] = {
        name: os.environ[name] for name in
        ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS") if name in os.environ}
    torch = sys.modules.get("torch")
    if torch is not None:
        settings["torch_num_threads"] = torch.get_num_threads()
        settings["torch_num_interop_threads"] = torch.get_num_interop_threads()
    return settings


def collect(cwd: str | None = None) -> dict[str, Any]:
    """Fingerprint of this process's environment."""
    from benchkit import __version__
    return {
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "benchkit": __version__,
        "torch": _version("torch"),
        "numpy": _version("numpy"),
        "cpu_model": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "machine": platform.machine(),
        "os": platform.platform(),
        "hostname": socket.gethostname(),
        "git": git_state(cwd),
        "timestamp": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "threads": thread_settings(),
        "site_packages": site_packages(),
    }
