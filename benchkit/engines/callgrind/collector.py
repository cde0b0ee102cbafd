"""The forking collector, parent side: servers under valgrind, jobs, sessions (an edge).

A server is one valgrind process that starts the interpreter and imports what a group of
snippets needs, once; each snippet (a job) then runs in a fork of it, up to `jobs` at a time.
Snippets are grouped by the modules they need, and a group's server imports exactly those,
so a snippet starts from the same state in a batch, alone, in parallel, or in a warm session:
its counts are the same in all of them, by construction.
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import contextvars
import ctypes
import os
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from benchkit.errors import CallgrindError
from benchkit.system.processes import ChannelError, JsonLines, die_with_parent, kill_group, last_lines
from benchkit.engines.callgrind.command import child_failure, valgrind_command
from benchkit.engines.callgrind import toolchain as helper
from benchkit.engines.callgrind import workdir as _job
from benchkit.core.callgrind import parser
from benchkit.engines.callgrind.workdir import CallgrindTask, make_workdir

SERVER = Path(__file__).with_name("server.py")
_active_session: contextvars.ContextVar["Session | None"] = contextvars.ContextVar(
    "benchkit_callgrind_session", default=None)


class Server:
    """One forking collector under valgrind, for one module group and memory layout."""

    def __init__(self, valgrind: str, workdir: Path, setup_name: str, layout: int,
                 cache_sim: bool, label: str, record: int):
        self.label, self.workdir, self.record = label, workdir, record
        self._stderr_path = workdir / f"server-{label}.stderr"
        self._stderr = open(self._stderr_path, "wb")
        command = valgrind_command(valgrind, "callgrind.%p.out", cache_sim) + [
            _job.interpreter(workdir), str(workdir / SERVER.name), setup_name]
        env = _job.child_environment(layout)
        env["BENCHKIT_LAYOUT"] = str(layout)
        self.process = subprocess.Popen(
            command, cwd=workdir, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self._stderr, start_new_session=True, preexec_fn=die_with_parent)
        self.channel = JsonLines(self.process, label, self.stderr_tail)

    def stderr_tail(self) -> str:
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


def _module_group(task: CallgrindTask, files: Sequence[Path]) -> tuple[str, ...]:
    """The modules a task's snippets and globals need: its server imports them first."""
    from benchkit.engines import transfer
    from benchkit.engines.wall.loop import check_syntax, referenced_names
    needed: set[str] = set()
    for name, snippet in (("stmt", task.stmt), ("setup", task.setup)):
        if isinstance(snippet, str) and "torch" in referenced_names(check_syntax(name, snippet)):
            needed.add("torch")
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
    """Owns a working directory and the servers in it; `collect` runs tasks through them.
    One-off collections use a fresh Collector; a Session keeps one alive."""

    def __init__(self, cache_sim: bool = False):
        self.valgrind = helper.find_valgrind()
        self.library = helper.build_client_library()
        # the request record size the server's fork loop reads (defined there, in C)
        self.record = ctypes.CDLL(str(self.library)).bk_record_size()
        self.cache_sim = cache_sim
        self.workdir = make_workdir()
        shutil.copyfile(SERVER, self.workdir / SERVER.name)
        self._servers: dict[tuple, Server] = {}
        self._count = 0
        self._prewarmed: set[tuple] = set()
        self._lock = threading.Lock()

    def _server(self, modules: tuple[str, ...], layout: int) -> Server:
        key = (modules, layout)
        with self._lock:
            if key not in self._servers:
                self._servers[key] = Server(self.valgrind, self.workdir,
                                            self._server_setup(modules), layout,
                                            self.cache_sim, f"server-{len(self._servers):03d}",
                                            self.record)
            return self._servers[key]

    def collect(self, tasks: Sequence[CallgrindTask], *, layouts: int = 1, jobs: int = 1,
                timeout: float | None = None, progress: Any = None,
                executor: Any = None) -> list[list[dict]]:
        """Per task, per layout: {profile name: (Profile, out file)}."""
        with self._lock:
            first = self._count
            self._count += len(tasks)
        tags = [f"{first + i:06d}" for i in range(len(tasks))]
        groups: dict[tuple, list[int]] = {}
        for i, (task, tag) in enumerate(zip(tasks, tags)):
            files = _job.write_task_job(self.workdir, tag, task)
            groups.setdefault(_module_group(task, files), []).append(i)
        for modules, members in groups.items():
            # A warm collector prewarms what it has not prewarmed yet: the same setup in
            # the same module group imports nothing new (the statement is not part of the
            # key, so an edited snippet re-collects in about a second).
            keys = {i: _prewarm_key(modules, tasks[i]) for i in members}
            fresh = [i for i in members if keys[i] not in self._prewarmed]
            if fresh:
                _job.prewarm(self.workdir, self._server_setup(modules),
                             [tags[i] for i in fresh], [tasks[i] for i in fresh])
                self._prewarmed.update(keys[i] for i in fresh)
        results: list[list[dict | None]] = [[None] * layouts for _ in tasks]
        plan = [(modules, k, members) for modules, members in groups.items()
                for k in range(layouts)]
        width = max(1, min(jobs, len(plan)))
        parallel = max(1, jobs // width)

        def run(item):
            modules, k, members = item
            server = self._server(modules, k)

            def done(reply):
                i = tags.index(reply["job"].removeprefix("job-").removesuffix(".json"))
                results[i][k] = self._profiles(reply, tasks[i], tags[i], server)
                if progress is not None:
                    progress.update(1)
            server.run([f"job-{tags[i]}.json" for i in members], parallel, timeout, done)

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
            _job.write_setup(self.workdir, name, self.library, modules)
        return name

    def _profiles(self, reply: dict, task: CallgrindTask, tag: str, server: Server) -> dict:
        if reply["status"] != 0:
            raise child_failure(self.workdir, tag, task.task_spec.title, reply["status"],
                                server.stderr_tail())
        profiles: dict[str, tuple] = {}
        for out_file in sorted(self.workdir.glob(f"callgrind.{reply['pid']}.out*")):
            for profile in parser.parse(out_file.read_text(encoding="utf-8", errors="replace"),
                                        source=str(out_file)):
                if profile.trigger and "benchkit:" in profile.trigger:
                    name = profile.trigger[profile.trigger.index("benchkit:"):]
                    profiles[name.replace(f"benchkit:{tag}:", "benchkit:", 1)] = (
                        profile, out_file)
        for r in range(task.repeats):
            if f"benchkit:0:stmt:{r}" not in profiles:
                raise CallgrindError(f"valgrind wrote no profile for {task.task_spec.title!r} "
                                     f"repeat {r}; the collector's stderr:\n"
                                     f"{server.stderr_tail()}")
        return profiles

    def forget(self, profiles: dict) -> None:
        """Delete the callgrind.out files behind `profiles` (after they are read)."""
        for _, path in profiles.values():
            Path(path).unlink(missing_ok=True)

    def kill(self) -> None:
        for server in list(self._servers.values()):
            kill_group(server.process)

    def close(self) -> None:
        for server in self._servers.values():
            server.close()
        self._servers.clear()
        shutil.rmtree(self.workdir, ignore_errors=True)


def _prewarm_key(modules: tuple[str, ...], task: CallgrindTask) -> tuple:
    def name(code) -> str:
        return code if isinstance(code, str) else (
            f"{getattr(code, '__module__', '')}.{getattr(code, '__qualname__', repr(code))}")
    return (modules, name(task.setup), task.task_spec.global_setup,
            tuple(sorted((k, type(v).__module__) for k, v in task.globals.items())))


class Session:
    """A warm collector: servers stay alive between collections, so later collections of
    snippets needing the same modules pay no interpreter start-up and no imports."""

    def __init__(self, cache_sim: bool = False, jobs: int = 1):
        self._collector = Collector(cache_sim)
        self.jobs = jobs

    def collect(self, timer, number: int = 100, *, repeats: int | None = None,
                collect_baseline: bool = True, layouts: int = 1,
                timeout: float | None = None):
        """Timer.collect_callgrind through this session."""
        return timer.collect_callgrind(number, repeats=repeats,
                                       collect_baseline=collect_baseline, layouts=layouts,
                                       timeout=timeout, cache_sim=self._collector.cache_sim)

    def close(self) -> None:
        self._collector.close()


@contextlib.contextmanager
def callgrind_session(cache_sim: bool = False, jobs: int | None = None) -> Iterator[Session]:
    """`with benchkit.callgrind_session() as s:` — collect_callgrind (and s.collect) in the
    block reuse warm collectors. Shut down on exit, on Ctrl-C, and when this process dies."""
    session = Session(cache_sim, jobs or os.cpu_count() or 1)
    token = _active_session.set(session)
    try:
        yield session
    finally:
        _active_session.reset(token)
        session.close()


def active_collector(cache_sim: bool) -> Collector | None:
    session = _active_session.get()
    if session is not None and session._collector.cache_sim == cache_sim:
        return session._collector
    return None
