"""Parent side of the wall-time worker processes (an edge: spawns and talks to them)."""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import benchkit
from benchkit.errors import BenchkitError, SuiteError
from benchkit.system.processes import (ChannelError, JsonLines, aslr_prefix, die_with_parent,
                                   kill_group, last_lines, owned_prefix)

WORKER = Path(__file__).with_name("worker.py")
PACKAGE_DIR = Path(benchkit.__file__).resolve().parent


class WorkerError(BenchkitError, RuntimeError):
    """A worker process failed to start, died, or did not answer in time."""


def layout_environment(layout: int) -> dict[str, str]:
    """Reproducible process layout number `layout`: its string-hash seed and its stack
    position (environment padding). With ASLR off, process `layout` of one run and of the
    next start alike, so their times can be compared pair by pair."""
    return {"PYTHONHASHSEED": str(layout + 1), "BENCHKIT_LAYOUT_PAD": "." * (layout * 4144)}


class WorkerProcess:
    """One worker: `python worker.py` in a given interpreter and environment.

    The worker imports this very benchkit (a private directory holding only a `benchkit`
    link goes first on its path), whatever the interpreter has installed, so both ends speak
    the same protocol and nothing else of the caller's path leaks into the other environment.
    """

    def __init__(self, python: str = sys.executable, env: dict[str, str] | None = None,
                 cwd: str | os.PathLike | None = None, label: str = "worker",
                 cpu: int | None = None, layout: int | None = None):
        self.label = label
        self._tmp = tempfile.TemporaryDirectory(prefix=owned_prefix("worker"))
        shim = Path(self._tmp.name) / "path"
        shim.mkdir()
        (shim / "benchkit").symlink_to(PACKAGE_DIR, target_is_directory=True)
        full_env = dict(os.environ)
        command = [python, str(WORKER)]
        if layout is not None:
            full_env.update(layout_environment(layout))
            command = aslr_prefix() + command
        full_env.update(env or {})
        prior = full_env.get("PYTHONPATH")
        full_env["PYTHONPATH"] = str(shim) + (os.pathsep + prior if prior else "")
        self._stderr_path = Path(self._tmp.name) / "stderr.txt"
        self._stderr = open(self._stderr_path, "wb")
        def prepare() -> None:
            die_with_parent()
            if cpu is not None:
                os.sched_setaffinity(0, {cpu})
        try:
            self._process = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=self._stderr, env=full_env, cwd=cwd, start_new_session=True,
                preexec_fn=prepare)
        except OSError as error:
            self._cleanup()
            raise WorkerError(f"{label}: cannot start {python!r}: {error.strerror}; pass an "
                              "existing Python interpreter") from None
        self._channel = JsonLines(self._process, label, self.stderr_tail)

    @property
    def pid(self) -> int:
        return self._process.pid

    def stderr_tail(self, lines: int = 25) -> str:
        try:
            return last_lines(self._stderr_path.read_text(encoding="utf-8", errors="replace"),
                              lines)
        except OSError:
            return ""

    def request(self, cmd: str, *, timeout: float, **args: Any) -> dict[str, Any]:
        """Send one request and wait for its reply; a failed reply raises."""
        try:
            self._channel.send({"cmd": cmd, **args})
            reply = self._channel.receive(timeout)
        except ChannelError as error:
            hint = ("; a snippet may hang (raise the timeout or fix the snippet)"
                    if error.timed_out else "")
            raise WorkerError(f"{error}{hint}") from None
        if not reply.pop("ok"):
            message = f"{self.label}: {reply['error']}"
            if reply["kind"] == "suite":
                raise SuiteError(message)
            raise WorkerError(f"{message}\nTraceback in the worker process:\n"
                              f"{reply['traceback'].rstrip()}")
        return reply

    def close(self) -> None:
        """Ask the worker to quit; kill it if it does not within a few seconds."""
        if self._process.poll() is None:
            try:
                self._process.stdin.write(b'{"cmd": "quit"}\n')
                self._process.stdin.close()
                self._process.wait(timeout=10)
            except (BrokenPipeError, subprocess.TimeoutExpired, OSError):
                pass
        if self._process.poll() is None:
            kill_group(self._process)
        self._process.stdout.close()
        self._cleanup()

    def _cleanup(self) -> None:
        self._stderr.close()
        self._tmp.cleanup()

    def __enter__(self) -> "WorkerProcess":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
