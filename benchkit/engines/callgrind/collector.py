"""The forking collector, parent side: servers under valgrind, and the jobs they fork.

A server is one valgrind process that starts the interpreter and imports what a group of
snippets needs, once; each snippet (a job) then runs in a fork of it, up to `jobs` at a time.
Snippets are grouped by the modules they need, and a group's server imports exactly those,
so a snippet starts from the same state in a batch, alone, in parallel, or in a warm session:
its counts are the same in all of them, by construction.
"""
from __future__ import annotations

import concurrent.futures
import ctypes
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Callable, Iterable, Sequence

from benchkit.core.callgrind import parser
from benchkit.core.callgrind.requests import (STMT, CallgrindOptions, CollectorControls,
                                              CountRequest, DumpName)
from benchkit.engines import transfer
from benchkit.engines.callgrind import toolchain, workdir
from benchkit.engines.callgrind.command import child_failure, valgrind_command
from benchkit.errors import CallgrindError, ChannelError
from benchkit.system.processes import JsonLines, die_with_parent, kill_group, last_lines

SERVER = Path(__file__).with_name("server.py")
# What one collected task yields, per layout: its dumps by (kind, repeat), each a parsed
# profile and the callgrind.out file it came from.
Dumps = dict  # dict[tuple[str, int], tuple[parser.Profile, Path]]


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
        self.process = subprocess.Popen(
            command, cwd=directory, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self._stderr, start_new_session=True, preexec_fn=die_with_parent)
        self.channel = JsonLines(self.process, label, self.stderr_tail)

    def stderr_tail(self) -> str:
        """The last lines the server wrote to stderr."""
        try:
            return last_lines(self._stderr_path.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            return ""

    def run(self, jobs: Sequence[str], parallel: int, timeout: float | None,
            on_done: Callable[[dict], None]) -> None:
        """Run the jobs (job file names), `parallel` at a time; on_done(reply) per job."""
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
        try:
            writer.start()
            while True:
                reply = self.channel.receive(timeout, what="answer")
                if reply.get("finished"):
                    return
                on_done(reply)
        except ChannelError as error:
            kill_group(self.process)
            if error.timed_out:
                raise CallgrindError(f"valgrind did not finish within timeout={timeout} s; "
                                     "lower `number` or raise `timeout`.") from None
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


def read_dumps(files: Iterable[Path], tag: str, repeats: int, what: str,
               context: str) -> Dumps:
    """The dumps named with `tag` in callgrind.out `files`, by (kind, repeat); every repeat
    of the stmt must be there (else a CallgrindError about `what`, with `context`)."""
    dumps: Dumps = {}
    for out_file in sorted(files):
        for profile in parser.parse(out_file.read_text(encoding="utf-8", errors="replace"),
                                    source=str(out_file)):
            name = DumpName.parse(profile.trigger)
            if name is not None and name.tag == tag:
                dumps[name.slot] = (profile, out_file)
    for r in range(repeats):
        if (STMT, r) not in dumps:
            raise CallgrindError(f"valgrind wrote no profile for {what}repeat {r}; {context}")
    return dumps


def _module_group(request: CountRequest, files: Sequence[Path]) -> tuple[str, ...]:
    """The modules a task's snippets and globals need: its server imports them first."""
    task = request.task
    needed: set[str] = {"torch"} if task.needs_torch else set()
    for file in files:
        try:
            needed |= transfer.pickled_modules(file.read_bytes())
        except Exception:  # a torch.jit archive
            needed.add("torch")
    for value in task.globals.values():
        module = getattr(value, "__name__", None) if type(value).__name__ == "module" else None
        if module:
            needed.add(module.split(".")[0])
    return tuple(sorted(m for m in needed if m not in ("benchkit", "builtins", "__main__")))


class Collector:
    """Owns a working directory and the servers in it; `collect` runs requests through them.
    One-off collections use a fresh Collector; a callgrind session keeps one alive."""

    def __init__(self, cache_sim: bool = False,
                 controls: CollectorControls = CollectorControls()):
        self.valgrind = toolchain.find_valgrind()
        self.library = toolchain.build_client_library()
        # the request record size the server's fork loop reads (defined there, in C)
        self.record = ctypes.CDLL(str(self.library)).bk_record_size()
        self.cache_sim = cache_sim
        self.controls = controls
        self.workdir = workdir.make_workdir()
        shutil.copyfile(SERVER, self.workdir / SERVER.name)
        self._servers: dict[tuple, Server] = {}
        self._count = 0
        self._prewarmed: set[tuple] = set()
        self._lock = threading.Lock()

    def serves(self, options: CallgrindOptions) -> bool:
        """Whether this collector's servers can collect with `options`."""
        return options.cache_sim == self.cache_sim and options.controls == self.controls

    def _server(self, modules: tuple[str, ...], layout: int) -> Server:
        key = (modules, layout)
        with self._lock:
            if key not in self._servers:
                self._servers[key] = Server(self.valgrind, self.workdir,
                                            self._server_setup(modules), layout,
                                            self.cache_sim, self.controls,
                                            f"server-{len(self._servers):03d}", self.record)
            return self._servers[key]

    def collect(self, requests: Sequence[CountRequest], options: CallgrindOptions
                ) -> list[list[Dumps]]:
        """Per request, per layout: its dumps by (kind, repeat). `options.jobs` forks run at
        once; `options.progress` is stepped once per request and layout."""
        layouts, jobs = options.layouts, options.jobs
        with self._lock:
            first = self._count
            self._count += len(requests)
        tags = [f"{first + i:06d}" for i in range(len(requests))]
        groups: dict[tuple, list[int]] = {}
        for i, (request, tag) in enumerate(zip(requests, tags)):
            files = workdir.write_task_job(self.workdir, tag, request)
            groups.setdefault(_module_group(request, files), []).append(i)
        for modules, members in groups.items():
            # A warm collector prewarms what it has not prewarmed yet: the same setup in
            # the same module group imports nothing new (the statement is not part of the
            # key, so an edited snippet re-collects in about a second).
            keys = {i: _prewarm_key(modules, requests[i]) for i in members}
            fresh = [i for i in members if keys[i] not in self._prewarmed]
            if fresh:
                workdir.prewarm(self.workdir, self._server_setup(modules),
                                [tags[i] for i in fresh], [requests[i] for i in fresh],
                                self.controls)
                self._prewarmed.update(keys[i] for i in fresh)
        results: list[list[Dumps | None]] = [[None] * layouts for _ in requests]
        plan = [(modules, k, members) for modules, members in groups.items()
                for k in range(layouts)]
        width = max(1, min(jobs, len(plan)))
        parallel = max(1, jobs // width)

        def run(item):
            modules, k, members = item
            server = self._server(modules, k)

            def done(reply):
                i = tags.index(reply["job"].removeprefix("job-").removesuffix(".json"))
                results[i][k] = self._dumps(reply, requests[i], tags[i], server)
                if options.progress is not None:
                    options.progress.update(1)
            server.run([f"job-{tags[i]}.json" for i in members], parallel, options.timeout,
                       done)

        if width == 1:
            for item in plan:
                run(item)
        else:
            pool = concurrent.futures.ThreadPoolExecutor(width)
            try:
                list(pool.map(run, plan))
            except BaseException:
                self.kill()
                raise
            finally:
                pool.shutdown(wait=True, cancel_futures=True)
        return results

    def _server_setup(self, modules: tuple[str, ...]) -> str:
        """The setup file of a module group (written once per working directory)."""
        name = "setup-" + ("-".join(modules) or "plain") + ".json"
        if not (self.workdir / name).exists():
            workdir.write_setup(self.workdir, name, self.library, modules, self.controls)
        return name

    def _dumps(self, reply: dict, request: CountRequest, tag: str, server: Server) -> Dumps:
        title = request.task.spec.title
        if reply["status"] != 0:
            raise child_failure(self.workdir, tag, title, reply["status"], server.stderr_tail())
        return read_dumps(self.workdir.glob(f"callgrind.{reply['pid']}.out*"), tag,
                          request.repeats, f"{title!r} ", f"the collector's stderr:\n"
                                                          f"{server.stderr_tail()}")

    def forget(self, dumps: Dumps) -> None:
        """Delete the callgrind.out files behind `dumps` (after they are read)."""
        for _, path in dumps.values():
            Path(path).unlink(missing_ok=True)

    def kill(self) -> None:
        """Kill every server at once (on an error or Ctrl-C)."""
        for server in list(self._servers.values()):
            kill_group(server.process)

    def close(self) -> None:
        """Shut the servers down and remove the working directory."""
        for server in self._servers.values():
            server.close()
        self._servers.clear()
        shutil.rmtree(self.workdir, ignore_errors=True)


def _prewarm_key(modules: tuple[str, ...], request: CountRequest) -> tuple:
    task = request.task

    def name(code) -> str:
        return code if isinstance(code, str) else (
            f"{getattr(code, '__module__', '')}.{getattr(code, '__qualname__', repr(code))}")
    return (modules, name(task.setup), task.spec.global_setup,
            tuple(sorted((k, type(v).__module__) for k, v in task.globals.items())))
