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
import dataclasses
import shutil
import threading
from pathlib import Path
from typing import Callable, Iterable, Sequence

from benchkit.core.callgrind import parser
from benchkit.core.callgrind.requests import (STMT, CallgrindOptions, CollectorControls,
                                              CountRequest, DumpName)
from benchkit.core.records.records import FailureKind
from benchkit.engines import transfer
from benchkit.engines.callgrind import toolchain, workdir
from benchkit.engines.callgrind.command import child_failure
from benchkit.engines.callgrind.servers import SERVER, Server
from benchkit.errors import BenchkitError, CallgrindError
from benchkit.system.processes import kill_group

# What one collected task yields, per layout: its dumps by (kind, repeat), each a parsed
# profile and the callgrind.out file it came from.
Dumps = dict  # dict[tuple[str, int], tuple[parser.Profile, Path]]


@dataclasses.dataclass(frozen=True)
class JobFailure:
    """Why one request's collection failed: the error collect_callgrind raises for it, and
    how it failed."""

    error: BenchkitError
    kind: FailureKind


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
    # Suite modules are loaded by the child from the job (engines.transfer), not imported.
    return tuple(sorted(m for m in needed if m not in ("benchkit", "builtins", "__main__")
                        and not m.startswith(transfer.SUITE_MODULE_PREFIX)))


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

    def collect(self, requests: Sequence[CountRequest], options: CallgrindOptions,
                on_request: Callable[[int, list], None] | None = None
                ) -> list[list[Dumps | JobFailure]]:
        """Per request, per layout: its dumps by (kind, repeat), or the JobFailure that
        stopped it (a request's failure is its own: the others are collected).
        `options.jobs` forks run at once; `options.progress` is stepped once per request and
        layout; on_request(i, layouts) is called as each request completes."""
        layouts, jobs = options.layouts, options.jobs
        with self._lock:
            first = self._count
            self._count += len(requests)
        tags = [f"{first + i:06d}" for i in range(len(requests))]
        results: list[list[Dumps | JobFailure | None]] = [[None] * layouts for _ in requests]

        def finish(i: int, k: int, outcome: Dumps | JobFailure) -> None:
            results[i][k] = outcome
            if options.progress is not None:
                options.progress.update(1)
            if on_request is not None and all(r is not None for r in results[i]):
                on_request(i, results[i])
        groups = self._groups(requests, tags, finish, layouts)
        plan = [(modules, k, members) for modules, members in groups.items()
                for k in range(layouts)]
        width = max(1, min(jobs, len(plan)))
        parallel = max(1, jobs // width)

        def run(item):
            modules, k, members = item
            server = self._server(modules, k)

            def done(reply):
                i = tags.index(reply["job"].removeprefix("job-").removesuffix(".json"))
                finish(i, k, self._outcome(reply, requests[i], tags[i], server,
                                           options.timeout))
            server.run([f"job-{tags[i]}.json" for i in members], parallel, options.timeout,
                       done)

        if width == 1:
            for item in plan:
                run(item)
        else:
            # Servers start here, in the caller's thread: each dies with the thread that
            # started it (PR_SET_PDEATHSIG is per thread), and the pool's threads end with
            # this call while the session keeps its servers for the next one.
            for modules, k, _ in plan:
                self._server(modules, k)
            pool = concurrent.futures.ThreadPoolExecutor(width)
            try:
                list(pool.map(run, plan))
            except BaseException:
                self.kill()
                raise
            finally:
                pool.shutdown(wait=True, cancel_futures=True)
        return results

    def _groups(self, requests: Sequence[CountRequest], tags: list[str], finish,
                layouts: int) -> dict[tuple, list[int]]:
        """Job files written and prewarmed, by module group; a request that cannot be
        written or prewarmed is finished as a failure at once."""
        groups: dict[tuple, list[int]] = {}
        for i, (request, tag) in enumerate(zip(requests, tags)):
            try:
                files = workdir.write_task_job(self.workdir, tag, request)
            except BenchkitError as error:
                for k in range(layouts):
                    finish(i, k, JobFailure(error, FailureKind.RAISED))
                continue
            groups.setdefault(_module_group(request, files), []).append(i)
        for modules, members in list(groups.items()):
            # A warm collector prewarms what it has not prewarmed yet: the same setup in
            # the same module group imports nothing new (the statement is not part of the
            # key, so an edited snippet re-collects in about a second).
            keys = {i: _prewarm_key(modules, requests[i]) for i in members}
            fresh = [i for i in members if keys[i] not in self._prewarmed]
            while fresh:
                failed = workdir.prewarm(self.workdir, self._server_setup(modules),
                                         [tags[i] for i in fresh], [requests[i] for i in fresh],
                                         self.controls)
                if failed is None:
                    self._prewarmed.update(keys[i] for i in fresh)
                    break
                index, error = failed
                i = fresh.pop(index)
                members.remove(i)
                for k in range(layouts):
                    finish(i, k, JobFailure(error, FailureKind.RAISED))
            if not members:
                del groups[modules]
        return groups

    def _server_setup(self, modules: tuple[str, ...]) -> str:
        """The setup file of a module group (written once per working directory)."""
        name = "setup-" + ("-".join(modules) or "plain") + ".json"
        if not (self.workdir / name).exists():
            workdir.write_setup(self.workdir, name, self.library, modules, self.controls)
        return name

    def _outcome(self, reply: dict, request: CountRequest, tag: str, server: Server,
                 timeout: float | None) -> Dumps | JobFailure:
        """A finished job's dumps, or how it failed."""
        title = request.task.spec.title
        if reply["timed_out"]:
            return JobFailure(CallgrindError(
                f"{title!r} did not finish within timeout={timeout:g} s; raise the timeout or "
                "lower `number`"), FailureKind.TIMED_OUT)
        if reply["status"] != 0:
            error = child_failure(self.workdir, tag, title, reply["status"],
                                  server.stderr_tail())
            kind = (FailureKind.RAISED if (self.workdir / f"error-{tag}.json").is_file()
                    else FailureKind.CRASHED)
            return JobFailure(error, kind)
        try:
            return self._dumps(reply, request, tag, server)
        except CallgrindError as error:
            return JobFailure(error, FailureKind.CRASHED)

    def _dumps(self, reply: dict, request: CountRequest, tag: str, server: Server) -> Dumps:
        title = request.task.spec.title
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
