"""Every child process benchkit starts (`start`, `run_command`: its own process group,
killed whole on a timeout or interrupt; the long-lived ones also die with benchkit), the
JSON-lines channel to them, ASLR off, and temp dirs of dead processes swept."""
from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import json
import os
import re
import select
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

from benchkit.errors import BenchmarkTimedOut, ChannelError, Terminated

_PR_SET_PDEATHSIG = 1


def last_lines(text: str, lines: int = 40) -> str:
    """The last `lines` lines of a child's output, for error messages."""
    return "\n".join(text.strip().splitlines()[-lines:])


def die_with_parent() -> None:
    """preexec_fn: the kernel sends SIGKILL to the child when its parent dies (Linux).

    A no-op where prctl is unavailable; the parent's own cleanup still kills the group.
    """
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def kill_group(process: subprocess.Popen, settle: float = 5.0) -> None:
    """SIGKILL the child's whole process group (it was started in a new session), reap it,
    and wait (up to `settle` seconds) until no process of the group is left, forks included."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    process.wait()
    deadline = time.monotonic() + settle
    while time.monotonic() < deadline:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            return
        time.sleep(0.02)


def start(command: Sequence[str] | str, *, cwd: str | os.PathLike | None = None,
          env: Mapping[str, str] | None = None, stdin: Any = subprocess.DEVNULL,
          stdout: Any = subprocess.PIPE, stderr: Any = subprocess.PIPE, text: bool = False,
          shell: bool = False, cpu: int | None = None,
          parent_death: bool = True) -> subprocess.Popen:
    """Start a child process the way benchkit starts every child: in a session (process
    group) of its own, so `kill_group` stops it and all it started; stdin closed unless
    given; pinned to one `cpu` when given; with `parent_death`, killed by the kernel if
    benchkit dies (Linux). OSError when it cannot be started."""
    def prepare() -> None:
        if parent_death:
            die_with_parent()
        if cpu is not None:
            os.sched_setaffinity(0, {cpu})
    # A preexec_fn makes Python run its at-fork handlers in this process, and a Ctrl-C that
    # lands in one of them is lost ("Exception ignored"): only children that outlive the
    # call (workers, collectors) pay for it; run_command's are waited for and killed.
    needs_prepare = parent_death or cpu is not None
    return subprocess.Popen(command if shell else list(command), cwd=cwd,
                            env=None if env is None else dict(env), stdin=stdin,
                            stdout=stdout, stderr=stderr, text=text, shell=shell,
                            start_new_session=True,
                            preexec_fn=prepare if needs_prepare else None)


def run_command(command: Sequence[str] | str, *, timeout: float | None,
                cwd: str | os.PathLike | None = None, env: Mapping[str, str] | None = None,
                shell: bool = False, text: bool = True) -> subprocess.CompletedProcess:
    """Run a child (in a process group of its own, as `start` does) to its end and capture
    its output. On a timeout, Ctrl-C or SIGTERM its whole process group is killed and
    reaped first; then, as `subprocess.run` does, subprocess.TimeoutExpired (or the
    interrupt) is raised. OSError when it cannot be started."""
    process = start(command, cwd=cwd, env=env, text=text, shell=shell, parent_death=False)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except BaseException:
        kill_group(process)
        raise
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


@functools.lru_cache(maxsize=None)
def _aslr_prefix() -> tuple[str, ...]:
    """`setarch <arch> -R` when it works here (turns ASLR off for the child), else ()."""
    setarch = shutil.which("setarch")
    if setarch is None:
        return ()
    cmd = [setarch, os.uname().machine, "-R"]
    try:
        ok = run_command(cmd + ["true"], timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        ok = False
    return tuple(cmd) if ok else ()


def aslr_prefix() -> list[str]:
    """Command prefix that starts a program with ASLR off (empty where that is impossible)."""
    return list(_aslr_prefix())


class JsonLines:
    """JSON requests to a child's stdin, JSON replies from its stdout, one per line, with a
    deadline on every reply."""

    def __init__(self, process: subprocess.Popen, label: str,
                 stderr_tail: Callable[[], str] = lambda: ""):
        self.process, self.label, self._stderr_tail = process, label, stderr_tail
        self._buffer = b""

    def send(self, obj: Any) -> None:
        """Send one JSON message; ChannelError if the child is gone."""
        try:
            self.process.stdin.write((json.dumps(obj) + "\n").encode())
            self.process.stdin.flush()
        except (BrokenPipeError, ValueError):
            self.process.wait()
            raise ChannelError(f"{self.label} exited (status {self.process.returncode}). "
                               f"Last lines of its stderr:\n{self._stderr_tail()}") from None

    def receive(self, timeout: float | None, what: str = "answer") -> Any:
        """The next JSON message, within `timeout` seconds; ChannelError otherwise."""
        deadline = None if timeout is None else time.monotonic() + timeout
        out = self.process.stdout
        while b"\n" not in self._buffer:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise ChannelError(f"{self.label}: no {what} within {timeout:g} s",
                                   timed_out=True)
            ready, _, _ = select.select([out], [], [], left)
            if not ready:
                continue
            chunk = os.read(out.fileno(), 1 << 20)
            if not chunk:
                self.process.wait()
                raise ChannelError(f"{self.label} exited (status {self.process.returncode}) "
                                   f"before its {what}. Last lines of its stderr:\n"
                                   f"{self._stderr_tail()}")
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return json.loads(line)


def owned_prefix(kind: str) -> str:
    """The temp-dir name prefix `benchkit-<kind>-<pid>-` of this process's temp dirs, after
    removing those whose process is gone: a process killed outright (SIGKILL, OOM, its
    parent's death) cannot clean up after itself, so the next benchkit process does."""
    base = f"benchkit-{kind}-"
    for path in Path(tempfile.gettempdir()).glob(base + "*"):
        match = re.match(re.escape(base) + r"(\d+)-", path.name)
        if not match:
            continue
        try:
            os.kill(int(match.group(1)), 0)
        except ProcessLookupError:
            shutil.rmtree(path, ignore_errors=True)
        except (PermissionError, OverflowError):
            pass
    return f"{base}{os.getpid():010d}-"


@contextlib.contextmanager
def sigterm_as_interrupt(on_signal: Callable[[], None] | None = None) -> Iterator[None]:
    """Within the block, SIGTERM raises Terminated (a KeyboardInterrupt) in the main thread,
    so the cleanup and partial saves that Ctrl-C gets run for it too (on_signal() first,
    when given). A no-op outside the main thread."""
    def raise_terminated(signum, frame):
        if on_signal is not None:
            on_signal()
        raise Terminated()
    try:
        previous = signal.signal(signal.SIGTERM, raise_terminated)
    except ValueError:      # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Raise BenchmarkTimedOut in the main thread once `seconds` have passed in the block
    (Python code is interrupted between bytecodes; None: no limit, and a no-op outside the
    main thread)."""
    if seconds is None:
        yield
        return

    def expire(signum, frame):
        raise BenchmarkTimedOut(f"did not finish within --timeout {seconds:g} s")
    try:
        previous = signal.signal(signal.SIGALRM, expire)
    except ValueError:
        yield
        return
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
