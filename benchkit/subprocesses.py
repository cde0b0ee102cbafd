"""Child processes that never outlive benchkit: parent-death signal, process-group kill."""
from __future__ import annotations

import ctypes
import ctypes.util
import os
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
