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
import sys
from pathlib import Path
from typing import Any

from benchkit.core.records.environment import parse_cpu_model
from benchkit.system import git


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


def git_toplevel(path: str | os.PathLike) -> Path | None:
    """The top of the git checkout holding `path`, or None outside one."""
    return git.toplevel(path)


def git_state(cwd: str | None = None) -> dict[str, Any] | None:
    """Commit and dirtiness of the git checkout at `cwd`, or None outside one."""
    return git.head_state(cwd or os.getcwd())


# benchkit's own install hooks in site-packages (an editable install's finder and .pth):
# the collector leaves them out of its interpreter's view, so they are not part of it.
OWN_INSTALL_HOOKS = re.compile(r"__editable__\.benchkit[-_].*\.pth|__editable___benchkit_.*\.py"
                               r"|benchkit(_perf|-perf)?\.egg-link|benchkit\.pth")


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
