"""A collector server: one valgrind process that starts the interpreter, imports what a
group of snippets needs, then forks a child per job (fork_loop.c). The parent side here sends
the jobs, times each one from its fork, and kills one that passes its timeout."""
from __future__ import annotations

import math
import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Callable, Sequence

from benchkit.core.callgrind.requests import CollectorControls
from benchkit.engines.callgrind import workdir
from benchkit.engines.callgrind.command import valgrind_command
from benchkit.errors import CallgrindError, ChannelError
from benchkit.system.processes import JsonLines, kill_group, last_lines, start

SERVER = Path(__file__).with_name("server.py")
STARTUP_TIMEOUT = 600.0


class Server:
    """One forking collector under valgrind, for one module group and memory layout."""

    def __init__(self, valgrind: str, directory: Path, setup_name: str, layout: int,
                 cache_sim: bool, controls: CollectorControls, label: str, record: int):
        self.label, self.workdir, self.record = label, directory, record
        self._stderr_path = directory / f"server-{label}.stderr"
        self._stderr = open(self._stderr_path, "wb")
        command = valgrind_command(valgrind, "callgrind.%p.out", cache_sim) + [
            workdir.interpreter(directory, controls), str(directory / SERVER.name), setup_name]
        env = workdir.child_environment(layout, controls)
        env["BENCHKIT_LAYOUT"] = str(layout)
        self.process = start(command, cwd=directory, env=env, stdin=subprocess.PIPE,
                             stderr=self._stderr)
        self.channel = JsonLines(self.process, label, self.stderr_tail)

    def stderr_tail(self) -> str:
        """The last lines the server wrote to stderr."""
        try:
            return last_lines(self._stderr_path.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            return ""

    def run(self, jobs: Sequence[str], parallel: int, timeout: float | None,
            on_done: Callable[[dict], None]) -> None:
        """Run the jobs (job file names), `parallel` at a time; on_done(reply) per job. A
        job still running `timeout` seconds after its fork is killed, and its reply says
        "timed_out"; the others go on."""
        jobs = list(jobs)
        if not jobs:
            return
        records = b"".join(
            f"run {parallel:02d} {int(k == len(jobs) - 1)} {job}".encode().ljust(self.record)
            for k, job in enumerate(jobs))
        if len(records) != len(jobs) * self.record:
            raise CallgrindError(f"a job file name is too long for a {self.record}-byte "
                                 "request record (benchkit names them; please report this)")
        # Written from a thread: a big batch must not block us while the server waits for
        # us to read its replies.
        writer = threading.Thread(target=self._write, args=(records,), daemon=True)
        running: dict[str, tuple[int, float]] = {}      # job -> (pid, deadline)
        killed: set[str] = set()
        try:
            writer.start()
            while True:
                try:
                    reply = self.channel.receive(_wait(running, timeout), what="answer")
                except ChannelError as error:
                    if not (error.timed_out and running):
                        raise
                    _kill_expired(running, killed)
                    continue
                if reply.get("finished"):
                    return
                if reply.get("started"):
                    deadline = time.monotonic() + timeout if timeout else math.inf
                    running[reply["job"]] = (reply["pid"], deadline)
                    continue
                running.pop(reply["job"], None)
                on_done({**reply, "timed_out": reply["job"] in killed})
        except ChannelError as error:
            kill_group(self.process)
            if error.timed_out:
                raise CallgrindError(f"the callgrind collector did not start within "
                                     f"{_startup(timeout):g} s; it may hang importing what "
                                     "the snippets need") from None
            raise CallgrindError(f"the callgrind collector failed: {error}") from None

    def _write(self, data: bytes) -> None:
        try:
            self.process.stdin.write(data)
            self.process.stdin.flush()
        except (BrokenPipeError, ValueError, OSError):
            pass   # the server died: the reply side reports it

    def close(self) -> None:
        """Ask the server to quit; kill it if it does not within 30 s."""
        if self.process.poll() is None:
            try:
                self._write(b"quit".ljust(self.record))
                self.process.stdin.close()
                self.process.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                pass
        if self.process.poll() is None:
            kill_group(self.process)
        self.process.stdout.close()
        self._stderr.close()


def _startup(timeout: float | None) -> float | None:
    """How long a server may take before its first fork (importing torch under valgrind
    takes seconds; the per-job timeout does not apply to it)."""
    return None if timeout is None else max(timeout, STARTUP_TIMEOUT)


def _wait(running: dict[str, tuple[int, float]], timeout: float | None) -> float | None:
    """How long to wait for the next reply: until the first running job's deadline."""
    if not running:
        return _startup(timeout)
    first = min(deadline for _, deadline in running.values())
    return None if first == math.inf else max(0.0, first - time.monotonic())


def _kill_expired(running: dict[str, tuple[int, float]], killed: set[str]) -> None:
    """SIGKILL the jobs past their deadline; their replies then come as usual."""
    now = time.monotonic()
    for job, (pid, deadline) in list(running.items()):
        if deadline <= now:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            killed.add(job)
            running[job] = (pid, math.inf)
