"""Entry point of the process that runs under valgrind: `python child.py job.json [LAYOUT]`.

`--prewarm` instead runs natively up to the measured loops (imports, snippets compiled, setup
run once), so bytecode caches are written before any counted run: a first collection after a
fresh install then counts the same as every later one.

Imports only the standard library and benchkit.timing.snippet (no numpy, no torch unless a
snippet uses it), so start-up under valgrind stays cheap. Instrumentation is off until just
before each measured loop; collection is toggled by the loop's own clock calls, so exactly
the `number` iterations are counted, and the warm-up runs the very same code object.
"""
import sys

sys.path.pop(0)  # this file's directory must not shadow anything

import ctypes  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import threading  # noqa: E402
import traceback  # noqa: E402


LAYOUT = 0


def _fail(kind, message, **extra):
    with open(f"error-{LAYOUT}.json", "w", encoding="utf-8") as f:
        json.dump({"kind": kind, "message": message, **extra}, f)
    sys.exit(3)


def main(job_path, prewarm=False):
    with open(job_path, encoding="utf-8") as f:
        job = json.load(f)
    # Only the path entries this child needs (usually none but the `benchkit` link):
    # allocations before the measured loop shift object addresses, which CPython's
    # type-attribute cache hashes, so a caller-dependent path would make counts
    # caller-dependent.
    sys.path[0:0] = job["path_first"]
    sys.path.extend(job["extra_sys_path"])
    # Layout k > 0: k deliberate heap offsets before anything of the snippets is allocated.
    padding = [bytearray(LAYOUT * job["heap_step"]),
               ["x" * (8 * (i % 64) + LAYOUT) for i in range(LAYOUT * 97)]]
    lib = ctypes.CDLL(job["library"])
    lib.bk_toggle_collect.restype = ctypes.c_double
    lib.bk_dump_stats_at.argtypes = [ctypes.c_char_p]
    toggle = lib.bk_toggle_collect

    from benchkit.errors import SnippetError
    from benchkit.transfer import RebuildError, read_task
    from benchkit.timing.snippet import CompiledLoop, referenced_names, check_syntax
    from benchkit.timing.threads import torch_threads

    def noop_clock():
        return 0.0

    release, outcome = threading.Event(), []
    done_r, done_w = os.pipe()

    def measure(task, loops, go=None):
        if go is not None:
            go.acquire()    # start only once the main thread is about to block for good
        number = task["number"]
        try:
            with torch_threads(task["num_threads"]):
                for _, loop in loops:
                    for _ in range(2):  # warm-up: same code object as the measured loop
                        loop.time_block(number)
                lib.bk_start_instrumentation()
                for kind, loop in loops:
                    for r in range(task["repeats"] if kind == "stmt" else 1):
                        loop.time_block(number, timer=toggle)
                        lib.bk_dump_stats_at(f"benchkit:{task['id']}:{kind}:{r}".encode())
                lib.bk_stop_instrumentation()
        except SnippetError as error:
            outcome.append(error)
        if go is not None:
            os.write(done_w, b"x")
            release.wait()

    for task in job["tasks"]:
        try:
            stmt, setup, values = read_task(task)
        except RebuildError as error:
            _fail("global", str(error), name=error.name, traceback=traceback.format_exc())
        snippets = {"stmt": stmt, "setup": setup}
        names = set()
        for name, src in snippets.items():
            if isinstance(src, str):
                names |= referenced_names(check_syntax(name, src))
        if "torch" in names and "torch" not in values:
            import torch
            values["torch"] = torch
        loops = [("stmt", CompiledLoop(snippets["stmt"], snippets["setup"], noop_clock, values))]
        if task["baseline"]:
            loops.append(("baseline", CompiledLoop("pass", "pass", noop_clock, dict(values))))
        if prewarm:
            for _, loop in loops:
                loop.time_block(0)   # setup runs: its imports write their bytecode caches
            continue
        if job["own_thread"]:
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
            _fail("snippet", str(error).splitlines()[0], task=task["id"], snippet=error.snippet,
                  traceback="".join(traceback.format_exception(error.error)))
    release.set()
    del padding


if __name__ == "__main__":
    args = sys.argv[1:]
    prewarm = "--prewarm" in args
    args = [a for a in args if a != "--prewarm"]
    LAYOUT = int(args[1]) if len(args) > 1 else 0
    main(args[0], prewarm)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # interpreter teardown under valgrind costs seconds and measures nothing
