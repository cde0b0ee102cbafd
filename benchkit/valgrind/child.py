"""Entry point of the process that runs under valgrind: `python child.py job.json`.

Imports only the standard library and benchkit.timing.snippet (no numpy, no torch unless a
snippet uses it), so start-up under valgrind stays cheap. Instrumentation is off until just
before each measured loop; collection is toggled by the loop's own clock calls, so exactly
the `number` iterations are counted, and the warm-up runs the very same code object.
"""
import sys

sys.path.pop(0)  # this file's directory must not shadow anything

import ctypes  # noqa: E402
import importlib  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import pickle  # noqa: E402
import traceback  # noqa: E402


def _fail(kind, message, **extra):
    with open("error.json", "w", encoding="utf-8") as f:
        json.dump({"kind": kind, "message": message, **extra}, f)
    sys.exit(3)


def _load_globals(task):
    values = {}
    for name, spec in task["globals"].items():
        try:
            if spec["how"] == "module":
                values[name] = importlib.import_module(spec["module"])
            elif spec["how"] == "jit":
                import torch
                values[name] = torch.jit.load(spec["file"])
            else:
                with open(spec["file"], "rb") as f:
                    values[name] = pickle.load(f)
        except Exception as error:  # report which global could not be rebuilt
            _fail("global", f"{type(error).__name__}: {error}", name=name,
                  traceback=traceback.format_exc())
    return values


def main(job_path):
    with open(job_path, encoding="utf-8") as f:
        job = json.load(f)
    # Only the caller's path entries this child needs and lacks (usually none): allocations
    # before the measured loop shift object addresses, which CPython's type-attribute cache
    # hashes, so a caller-dependent path would make counts caller-dependent.
    sys.path.extend(job["extra_sys_path"])
    lib = ctypes.CDLL(job["library"])
    lib.bk_toggle_collect.restype = ctypes.c_double
    lib.bk_dump_stats_at.argtypes = [ctypes.c_char_p]
    toggle = lib.bk_toggle_collect

    from benchkit.errors import SnippetError
    from benchkit.timing.snippet import CompiledLoop, referenced_names, check_syntax
    from benchkit.timing.threads import torch_threads

    def noop_clock():
        return 0.0

    for task in job["tasks"]:
        values = _load_globals(task)
        snippets = {"stmt": task["stmt"], "setup": task["setup"]}
        for name in ("stmt", "setup"):
            if task.get(f"{name}_pickle"):
                with open(task[f"{name}_pickle"], "rb") as f:
                    snippets[name] = pickle.load(f)
        names = set()
        for name, src in snippets.items():
            if isinstance(src, str):
                names |= referenced_names(check_syntax(name, src))
        if "torch" in names and "torch" not in values:
            import torch
            values["torch"] = torch
        number = task["number"]
        loops = [("stmt", CompiledLoop(snippets["stmt"], snippets["setup"], noop_clock, values))]
        if task["baseline"]:
            loops.append(("baseline", CompiledLoop("pass", "pass", noop_clock, dict(values))))
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
            _fail("snippet", str(error).splitlines()[0], task=task["id"], snippet=error.snippet,
                  traceback="".join(traceback.format_exception(error.error)))


if __name__ == "__main__":
    main(sys.argv[1])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # interpreter teardown under valgrind costs seconds and measures nothing
