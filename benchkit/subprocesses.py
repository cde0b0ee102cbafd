"""Child processes that never outlive benchkit: parent-death signal, process-group kill."""
from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import shutil
import signal
import subprocess

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """preexec_fn: the kernel sends SIGKILL to the child when its parent dies (Linux).

    A no-op where prctl is unavailable; the parent's own cleanup still kills the group.
    """
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def kill_group(process: subprocess.Popen) -> None:
    """SIGKILL the child's whole process group (it was started in a new session) and reap it."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    process.wait()


@functools.lru_cache(maxsize=None)
def _aslr_prefix() -> tuple[str, ...]:
    """`setarch <arch> -R` when it works here (turns ASLR off for the child), else ()."""
    setarch = shutil.which("setarch")
    if setarch is None:
        return ()
    cmd = [setarch, os.uname().machine, "-R"]
    try:
        ok = subprocess.run(cmd + ["true"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        ok = False
    return tuple(cmd) if ok else ()


def aslr_prefix() -> list[str]:
    """Command prefix that starts a program with ASLR off (empty where that is impossible)."""
    return list(_aslr_prefix())
