"""Wall-time workers, parent side: what a worker does (the Worker protocol), where it runs
(an Interpreter), and the real one, a child process spoken to in JSON lines (WorkerProcess).
The schedulers take a `start` function, so they are tested with fake workers and no processes.
"""
from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Protocol

import benchkit
from benchkit.core.metrics.gates import Gate
from benchkit.core.measure.measurement import Chunk
from benchkit.core.records.records import Benchmark, Failure
from benchkit.core.measure.task import TaskSpec
from benchkit.errors import (BenchmarkFailed, BenchmarkSkipped, ChannelError, SuiteError,
                             WorkerError)
from benchkit.system.processes import (JsonLines, aslr_prefix, kill_group, last_lines,
                                       owned_prefix, start)

WORKER = Path(__file__).with_name("worker.py")
PACKAGE_DIR = Path(benchkit.__file__).resolve().parent


@dataclasses.dataclass(frozen=True)
class SuiteLoad:
    """Load suite files in the worker (the benchmarks matching `keyword`, at `num_threads`
    when given)."""

    paths: tuple[str, ...]
    keyword: str | None = None
    num_threads: int | None = None

    def request(self) -> dict[str, Any]:
        """The worker's request."""
        return {"cmd": "suite", "paths": [str(Path(p).resolve()) for p in self.paths],
                "keyword": self.keyword, "num_threads": self.num_threads}

    def describe(self) -> str:
        """What was loaded, for messages."""
        return " ".join(map(str, self.paths)) + (
            f" match -k {self.keyword!r}" if self.keyword else "")


@dataclasses.dataclass(frozen=True)
class TasksLoad:
    """Load tasks shipped in a job file (benchkit.engines.transfer), named by position."""

    job: str

    def request(self) -> dict[str, Any]:
        """The worker's request."""
        return {"cmd": "tasks", "job": self.job}

    def describe(self) -> str:
        """What was loaded, for messages."""
        return "the tasks"


Load = SuiteLoad | TasksLoad


@dataclasses.dataclass(frozen=True)
class Listing:
    """What a worker found in a Load: the benchmarks, with their TaskSpecs, and the ones that
    failed to load."""

    benchmarks: tuple[tuple[Benchmark, TaskSpec | None], ...]
    failures: tuple[Failure, ...] = ()

    def names(self) -> list[str]:
        """The benchmark names, in order."""
        return [b.name for b, _ in self.benchmarks]


class Worker(Protocol):
    """What the schedulers need of a worker: list what a Load holds, say where it runs, size
    blocks, and time chunks."""

    label: str

    def load(self, load: Load) -> Listing:
        """The benchmarks `load` holds, with their TaskSpecs (and those failing to load)."""

    def environment(self) -> dict[str, Any]:
        """The worker's environment fingerprint."""

    def block_size(self, name: str, min_run_time: float) -> int:
        """Runs per block for benchmark `name`."""

    def measure(self, name: str, number: int, min_time: float, chunk_time: float,
                warmup: bool) -> list[Chunk]:
        """Chunks of blocks of `name`, each after a speed probe."""

    def close(self) -> None:
        """Stop the worker."""


@dataclasses.dataclass(frozen=True)
class Interpreter:
    """Where workers run: a Python interpreter, extra environment variables, a working
    directory; `name` labels its workers ('run', or an A/B side's 'base'/'new')."""

    name: str = "run"
    python: str = sys.executable
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None


# start(interpreter, label, cpu, layout, timeout) -> a Worker
StartWorker = Callable[[Interpreter, str, "int | None", "int | None", float], Worker]


def start_process(where: Interpreter, label: str, cpu: int | None = None,
                  layout: int | None = None, timeout: float = 600.0) -> "WorkerProcess":
    """The real worker: a child process of `where` (on `cpu`, with `layout`), whose every
    answer must come within `timeout` seconds."""
    return WorkerProcess(where.python, dict(where.env), where.cwd, label=label, cpu=cpu,
                         layout=layout, timeout=timeout)


# Stack positions cycle: one environment string may not exceed 128 KiB (MAX_ARG_STRLEN),
# which layout 32 and beyond would (round 33 of an A/B could not start its workers).
STACK_POSITIONS = 16


def layout_environment(layout: int) -> dict[str, str]:
    """Reproducible process layout number `layout`: its string-hash seed and its stack
    position (environment padding). With ASLR off, process `layout` of one run and of the
    next start alike, so their times can be compared pair by pair."""
    return {"PYTHONHASHSEED": str(layout + 1),
            "BENCHKIT_LAYOUT_PAD": "." * (layout % STACK_POSITIONS * 4144)}


class WorkerProcess:
    """One worker: `python worker.py` in a given interpreter and environment.

    The worker imports this very benchkit (a private directory holding only a `benchkit`
    link goes first on its path), whatever the interpreter has installed, so both ends speak
    the same protocol and nothing else of the caller's path leaks into the other environment.
    """

    def __init__(self, python: str = sys.executable, env: dict[str, str] | None = None,
                 cwd: str | os.PathLike | None = None, label: str = "worker",
                 cpu: int | None = None, layout: int | None = None, timeout: float = 600.0):
        self.label = label
        self.timeout = timeout
        self._busy = False          # a request was sent and its answer has not come
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
        try:
            self._process = start(command, stdin=subprocess.PIPE, stderr=self._stderr,
                                  env=full_env, cwd=cwd, cpu=cpu)
        except OSError as error:
            self._cleanup()
            raise WorkerError(f"{label}: cannot start {python!r}: {error.strerror}; pass an "
                              "existing Python interpreter") from None
        self._channel = JsonLines(self._process, label, self.stderr_tail)

    @property
    def pid(self) -> int:
        """The worker's process id."""
        return self._process.pid

    def stderr_tail(self, lines: int = 25) -> str:
        """The last lines the worker (and the snippets) wrote to stderr."""
        try:
            return last_lines(self._stderr_path.read_text(encoding="utf-8", errors="replace"),
                              lines)
        except OSError:
            return ""

    def request(self, cmd: str, **args: Any) -> dict[str, Any]:
        """Send one request and wait (up to `timeout`) for its reply; a failed reply raises."""
        try:
            self._busy = True
            self._channel.send({"cmd": cmd, **args})
            reply = self._channel.receive(self.timeout)
            self._busy = False
        except ChannelError as error:
            hint = ("; a snippet may hang (raise --timeout or fix the snippet)"
                    if error.timed_out else "")
            raise WorkerError(f"{error}{hint}", timed_out=error.timed_out) from None
        if not reply.pop("ok"):
            message = f"{self.label}: {reply['error']}"
            if reply["kind"] == "suite":
                raise SuiteError(message)
            if reply["kind"] == "skipped":
                raise BenchmarkSkipped(reply["error"])
            raise BenchmarkFailed(f"{message}\nTraceback in the worker process:\n"
                                  f"{reply['traceback'].rstrip()}")
        return reply

    # -- the Worker protocol ------------------------------------------------------------------
    def load(self, load: Load) -> Listing:
        """The benchmarks `load` holds, as the worker found them."""
        reply = self.request(**load.request())
        return Listing(
            tuple((Benchmark(b["name"], tuple(Gate.parse(g) for g in b.get("gates", [])),
                             file=b.get("file"), params=b.get("params"),
                             number=b.get("number"), timeout=b.get("timeout")),
                   TaskSpec.from_dict(b["task_spec"]) if b.get("task_spec") else None)
                  for b in reply["benchmarks"]),
            tuple(Failure.from_dict(f) for f in reply.get("failed", [])))

    def environment(self) -> dict[str, Any]:
        """The worker's environment fingerprint."""
        return self.request("environment")["environment"]

    def block_size(self, name: str, min_run_time: float) -> int:
        """Runs per block for `name`, chosen like blocked_autorange's."""
        return self.request("block_size", name=name, min_run_time=min_run_time)["number"]

    def measure(self, name: str, number: int, min_time: float, chunk_time: float,
                warmup: bool) -> list[Chunk]:
        """Chunks of blocks of `name` behind the speed probe."""
        reply = self.request("measure", name=name, number=number, min_time=min_time,
                             chunk_time=chunk_time, warmup=warmup)
        return [Chunk(c["probe"], tuple(c["times"])) for c in reply["chunks"]]

    def close(self) -> None:
        """Ask the worker to quit; kill it if it does not within a few seconds, and at once
        while an interrupt (Ctrl-C) unwinds (the worker, in a session of its own, did not
        get the SIGINT and would finish its block first) or while it still owes an answer
        (it timed out, or is hung: it would not read the request to quit)."""
        interrupted = isinstance(sys.exc_info()[1], KeyboardInterrupt)
        if self._process.poll() is None and not interrupted and not self._busy:
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


