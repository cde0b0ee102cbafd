"""The forking collector: the process that runs under valgrind.

    python server.py SETUP.json                 serve: prepare once, then fork a child per job
    python server.py SETUP.json --prewarm JOB   natively, up to the measured loops (see below)

Serving: fixed-size request records on stdin, JSON reply lines on the protocol fd (the
protocol is in fork_loop.c, which serves it). The server imports what the snippets need
(torch, the modules the globals come from) once, with instrumentation off, then enters the C
fork loop for good: every job runs in a fork taken inside that one call, from the very same
memory, so a snippet's counts do not depend on which other jobs ran before it, on how many
run at once, or on whether the server is fresh. Collection is toggled by the loop's own
clock calls, so exactly the `number` iterations are counted; the warm-up runs the very same
code object. Callgrind writes each child's dumps to files named by the child's pid.

`--prewarm` runs a job natively up to the measured loops (imports, snippets compiled, setup
run once), so bytecode caches are written before any counted run: a first collection after a
fresh install then counts the same as every later one. benchkit's own modules are found and
compiled here without reading its bytecode caches or listing its folders (_CompiledFromSource):
what those hold differs between installs.

Imports only the standard library and a few benchkit modules (no numpy, no torch unless a
snippet uses it), so start-up under valgrind stays cheap.
"""
import sys

if __name__ == "__main__":
    sys.path.pop(0)  # this file's directory must not shadow anything

import ctypes  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import random  # noqa: E402  (imported before any fork: seeding then allocates nothing)
import threading  # noqa: E402
import traceback  # noqa: E402
from importlib.machinery import SourceFileLoader  # noqa: E402
from importlib.util import spec_from_file_location  # noqa: E402

LAYOUT = int(os.environ.get("BENCHKIT_LAYOUT", "0"))


def _fail(kind, message, **extra):
    from benchkit.errors import CollectorJobFailed
    raise CollectorJobFailed({"kind": kind, "message": message, **extra})


def run_job(job, setup, lib, prewarm=False):
    """Run one job's tasks: loops built, warmed up, then measured with dumps named by
    DumpName (benchkit:<tag>:<task>:<kind>:<repeat>)."""
    from benchkit.core.callgrind.requests import BASELINE, STMT, DumpName
    from benchkit.core.measure.snippets import needs_torch
    from benchkit.engines.transfer import read_task
    from benchkit.engines.wall.loop import CompiledLoop
    from benchkit.engines.wall.threads import torch_threads
    from benchkit.errors import RebuildError, SnippetError

    sys.path.extend(p for p in job.get("extra_sys_path", []) if p not in sys.path)
    # Layout k > 0: k deliberate heap offsets before anything of the snippets is allocated.
    padding = [bytearray(LAYOUT * setup["heap_step"]),
               ["x" * (8 * (i % 64) + LAYOUT) for i in range(LAYOUT * 97)]]
    toggle = lib.bk_toggle_collect if lib is not None else None

    def noop_clock():
        return 0.0

    release, outcome = threading.Event(), []
    done_r, done_w = os.pipe()

    def measure(task, loops, go=None):
        if go is not None:
            go.acquire()    # start only once the main thread is about to block for good
        number = task["number"]
        _seed_generators()
        try:
            with torch_threads(task["spec"]["num_threads"]):
                for _, loop in loops:
                    for _ in range(2):  # warm-up: same code object as the measured loop
                        loop.time_block(number)
                lib.bk_start_instrumentation()
                for kind, loop in loops:
                    for r in range(task["repeats"] if kind == STMT else 1):
                        loop.time_block(number, timer=toggle)
                        lib.bk_dump_stats_at(
                            str(DumpName(job["tag"], str(task["id"]), kind, r)).encode())
                lib.bk_stop_instrumentation()
        except BaseException as error:   # whatever the snippet does, the main thread hears
            outcome.append(error)
        if go is not None:
            os.write(done_w, b"x")
            release.wait()

    for task in job["tasks"]:
        try:
            rebuilt = read_task(task)
        except RebuildError as error:
            _fail("global", str(error), name=error.name, task=task["id"],
                  traceback=traceback.format_exc())
        values = dict(rebuilt.globals)
        if needs_torch(rebuilt.stmt, rebuilt.setup, values):
            import torch
            values["torch"] = torch
        loops = [(STMT, CompiledLoop(rebuilt.stmt, rebuilt.setup, noop_clock, values))]
        if task["baseline"]:
            loops.append((BASELINE, CompiledLoop("pass", "pass", noop_clock, dict(values))))
        if prewarm:
            try:
                for _, loop in loops:
                    loop.time_block(0)   # setup runs: its imports write their bytecode caches
            except SnippetError as error:
                _fail("snippet", str(error).splitlines()[0], task=task["id"],
                      snippet=error.snippet,
                      traceback="".join(traceback.format_exception(error.error)))
            _seed_generators()   # numpy.random and what it imports load lazily, on first use
            continue
        if setup["own_thread"]:
            # A fresh thread gets a fresh glibc malloc arena (mmap'd, 64 MiB aligned), so the
            # snippet's allocations do not depend on the heap history before it: imports,
            # earlier tasks, where benchkit and the caller live. The thread is kept until the
            # end so no later task inherits its arena. The main thread waits in a read()
            # without the GIL, so no GIL hand-over can fall inside the measured loop.
            go = threading.Lock()
            go.acquire()
            threading.Thread(target=measure, args=(task, loops, go), daemon=True).start()
            go.release()
            os.read(done_r, 1)
        else:
            measure(task, loops)
        if outcome:
            error = outcome.pop()
            if not isinstance(error, SnippetError):
                _fail("crash", f"the measured loop raised {type(error).__name__}: {error}",
                      task=task["id"], traceback="".join(traceback.format_exception(error)))
            _fail("snippet", str(error).splitlines()[0], task=task["id"], snippet=error.snippet,
                  traceback="".join(traceback.format_exception(error.error)))
    release.set()
    del padding


def _seed_generators():
    """Random inputs drawn in setup (torch.randn, np.random.rand, random.random) are the
    same in every collection, so data-dependent paths count the same."""
    random.seed(0)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(0)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.manual_seed(0)


def _load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _library(setup):
    lib = ctypes.CDLL(setup["library"])
    lib.bk_toggle_collect.restype = ctypes.c_double
    lib.bk_dump_stats_at.argtypes = [ctypes.c_char_p]
    lib.bk_fork_loop.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
    return lib


def _child(setup, lib, job_path):
    """In a forked child: run the job, report a failure in error-<tag>.json, exit."""
    from benchkit.errors import CollectorJobFailed
    job = _load(job_path)
    code = 0
    try:
        run_job(job, setup, lib)
    except CollectorJobFailed as failure:
        with open(f"error-{job['tag']}.json", "w", encoding="utf-8") as f:
            json.dump(failure.info, f)
        code = 3
    except BaseException:  # anything else: the parent shows the traceback
        with open(f"error-{job['tag']}.json", "w", encoding="utf-8") as f:
            json.dump({"kind": "crash", "message": "the collector child crashed",
                       "traceback": traceback.format_exc()}, f)
        code = 4
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # no interpreter teardown under valgrind: it costs seconds


# What run_job imports (a test checks).
CHILD_MODULES = ("benchkit.core.callgrind.requests", "benchkit.core.measure.snippets",
                 "benchkit.engines.transfer", "benchkit.engines.wall.loop",
                 "benchkit.engines.wall.threads", "benchkit.errors")


def _rehearse():
    """Run once here, on this thread, the Python code every child runs before its measured
    loop (read a job, parse, compile, loop), so the children inherit valgrind's translations
    of it instead of each making them again. No threads: a thread's malloc arena would be
    handed on to a child's measuring thread, which must get a fresh one."""
    from benchkit.core.measure.snippets import needs_torch
    from benchkit.engines.transfer import read_task
    from benchkit.engines.wall.loop import CompiledLoop
    task = read_task(json.loads(
        '{"globals": {}, "stmt": "x = [i for i in range(3)]", "setup": "pass", '
        '"spec": {"stmt": "x = [i for i in range(3)]", "setup": "pass"}, '
        '"language": "python"}'))
    needs_torch(task.stmt, task.setup, task.globals)
    CompiledLoop(task.stmt, task.setup, lambda: 0.0, dict(task.globals)).time_block(20)


def serve(setup):
    """Import what the snippets need, then hand over to the C fork loop (fork_loop.c) for
    good: requests on stdin, replies on the protocol fd. Only forked children come back."""
    lib = _library(setup)
    for module in setup.get("modules", []):
        try:
            __import__(module)
        except Exception:  # the job reports it, with its own traceback
            pass
    for module in CHILD_MODULES:   # once here, not in every child
        __import__(module)
    _seed_generators()   # its lazy imports (numpy.random), once here and not in every child
    # Switching instrumentation on (or off) makes valgrind discard every translation it holds:
    # after the imports that is hundreds of thousands for torch, about 0.5 s to discard.
    # Done once here, a child's own switch at its measured loop finds little to discard.
    lib.bk_start_instrumentation()
    lib.bk_stop_instrumentation()
    _rehearse()
    protocol = os.dup(1)
    os.dup2(2, 1)
    record = lib.bk_record_size()
    job = ctypes.create_string_buffer(record)
    # os.fork() would run this after the fork; the loop forks in C, so the child calls it.
    after_fork_in_child = ctypes.pythonapi.PyOS_AfterFork_Child
    after_fork_in_child.restype = None
    served = lib.bk_fork_loop(0, protocol, job, record)
    if served == 1:
        after_fork_in_child()
        _child(setup, lib, job.value.decode())
    if served < 0:
        print("benchkit collector: malformed request record", file=sys.stderr)


class _SourceOnlyLoader(SourceFileLoader):
    def get_code(self, fullname):
        filename = self.get_filename(fullname)
        return self.source_to_code(self.get_data(filename), filename)


class _CompiledFromSource:
    """Meta-path finder for benchkit's own modules: found by their file names alone, compiled
    from source. Neither a bytecode cache nor a directory listing is read: both differ
    between installs (a cache written under another path has its file names rewritten on
    load; a `__pycache__` folder or a stray file changes the listing the path finder keeps),
    and their allocations would show in the counts."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name != "benchkit" and not name.startswith("benchkit."):
            return None
        tail = name.rpartition(".")[2]
        for entry in (sys.path if path is None else path):
            base = os.path.join(entry or ".", tail)
            package = os.path.join(base, "__init__.py")
            if os.path.isfile(package):
                return spec_from_file_location(name, package,
                                               loader=_SourceOnlyLoader(name, package),
                                               submodule_search_locations=[base])
            module = base + ".py"
            if os.path.isfile(module):
                return spec_from_file_location(name, module,
                                               loader=_SourceOnlyLoader(name, module))
        return None


def main(argv):
    """Serve (or prewarm) as the command line says; returns the exit status."""
    sys.meta_path.insert(0, _CompiledFromSource)
    setup = _load(argv[0])
    # Only the path entries the collector needs (usually none but the `benchkit` link):
    # allocations before the measured loop shift object addresses, which CPython's
    # type-attribute cache hashes, so a caller-dependent path would make counts
    # caller-dependent.
    sys.path[0:0] = setup["path_first"]
    sys.path.extend(setup["extra_sys_path"])
    if len(argv) > 2 and argv[1] == "--prewarm":
        job = _load(argv[2])
        from benchkit.errors import CollectorJobFailed
        try:
            run_job(job, setup, None, prewarm=True)
        except CollectorJobFailed as failure:
            with open(f"error-{job['tag']}.json", "w", encoding="utf-8") as f:
                json.dump(failure.info, f)
            return 3
        return 0
    serve(setup)
    return 0


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
