"""A wall-time worker process: `python worker.py`, driven over a pipe by `sampling.workers`.

One JSON request per line on stdin, one JSON reply per line on the protocol fd (the original
stdout; the snippets' own prints go to stderr). Requests:
  {"cmd": "suite", "paths": [...], "keyword": str|null, "num_threads": int|null}
  {"cmd": "tasks", "job": "job.json"}               Timers shipped by `benchkit.engines.transfer`
  {"cmd": "environment"}                             -> {"environment": fingerprint}
  {"cmd": "block_size", "name": N, "min_run_time": S}
  {"cmd": "measure", "name": N, "number": K, "min_time": S, "chunk_time": S, "warmup": bool}
      -> {"chunks": [{"probe": seconds, "times": [block seconds, ...]}, ...]}
  {"cmd": "memory", "name": N, "number": K, "warmup": W, "sites": bool}   (memory workers)
      -> {"long": counts, "short": counts, "empty": counts, "sites": [site, ...]}
         (core.memory.BlockCounts, AllocationSite)
  {"cmd": "quit"}
Replies: {"ok": true, ...} or {"ok": false, "kind": ..., "error": ..., "traceback": ...}.
"""
import sys

if __name__ == "__main__":
    sys.path.pop(0)  # this file's directory must not shadow anything

import json  # noqa: E402
import os  # noqa: E402
import threading  # noqa: E402
import traceback  # noqa: E402


class Worker:
    """The worker's loops by benchmark name, and the requests it answers."""

    def __init__(self):
        self.loops = {}        # name -> (loop with time_block, num_threads)
        self.numbers = {}      # name -> runs per block the benchmark fixes (asv's number)
        self.counter = None    # the memory counter, in a worker started to count memory
        self.threads_at_start = set(threading.enumerate())

    def suite(self, paths, keyword=None, num_threads=None):
        """Load suite files: their benchmarks (matching `keyword`), loops built."""
        from benchkit.core.records.keywords import keyword_filter
        from benchkit.engines.loops import loop_for
        from benchkit.engines.wall.clock import default_timer
        from benchkit.orchestration.suite import discover
        failures = []
        matches = keyword_filter(keyword)
        selected = [b for b in discover(paths, lambda f, e: failures.append(f))
                    if matches(b.selector())]
        out = []
        for b in selected:
            task = b.task if num_threads is None else b.task.with_threads(num_threads)
            self.loops[b.name] = (loop_for(task, default_timer), task.spec.num_threads)
            if b.number:
                self.numbers[b.name] = b.number
            out.append({"name": b.name, "task_spec": task.spec.to_dict(), "file": b.file,
                        "gates": [str(g) for g in b.gates], "params": b.params,
                        "number": b.number, "timeout": b.timeout})
        return {"benchmarks": out,
                # with nothing selected, a package that failed to import may hold it
                "failed": [f.to_dict() for f in failures if matches(f.benchmark) or not out]}

    def tasks(self, job):
        """Load tasks shipped in a job file, named by position."""
        from pathlib import Path
        from benchkit.engines.loops import loop_for
        from benchkit.engines.transfer import read_task
        from benchkit.engines.wall.clock import default_timer
        with open(job, encoding="utf-8") as f:
            spec = json.load(f)
        sys.path.extend(spec.get("extra_sys_path", []))
        names = []
        for fields in spec["tasks"]:
            task = read_task(fields, Path(job).parent)
            self.loops[str(fields["id"])] = (loop_for(task, default_timer),
                                             task.spec.num_threads)
            names.append(str(fields["id"]))
        return {"benchmarks": [{"name": n} for n in names]}

    def environment(self):
        """This worker's environment fingerprint."""
        from benchkit.system.machine import collect
        return {"environment": collect()}

    def block_size(self, name, min_run_time):
        """Runs per block, chosen like blocked_autorange's (or the benchmark's own)."""
        from benchkit.engines.wall.autorange import estimate_block_size
        from benchkit.engines.wall.threads import torch_threads
        loop, threads = self.loops[name]
        if name in self.numbers:
            return {"number": self.numbers[name]}
        with torch_threads(threads):
            return {"number": estimate_block_size(loop.time_block, min_run_time)}

    def measure(self, name, number, min_time, chunk_time, warmup=False):
        """Chunks of blocks for at least `min_time` seconds of blocks, each chunk lasting
        about `chunk_time` and preceded by the speed probe."""
        from benchkit.engines.wall.chunks import measure_chunks
        from benchkit.engines.wall.threads import torch_threads
        loop, threads = self.loops[name]
        with torch_threads(threads):
            chunks = measure_chunks(loop.time_block, number, min_time, chunk_time, warmup)
        return {"chunks": [{"probe": c.probe, "times": list(c.times)} for c in chunks]}


    def memory(self, name, number, warmup, sites=False):
        """Counted blocks of 2 x `number` and `number` runs (the counting allocator
        preloaded), and with `sites` the top allocation sites of the same blocks."""
        from benchkit.engines.memory.blocks import count_blocks
        from benchkit.engines.memory.counter import Counter
        from benchkit.engines.wall.threads import torch_threads
        if self.counter is None:
            self.counter = Counter()
        loop, threads = self.loops[name]
        with torch_threads(threads):
            blocks = count_blocks(loop.time_block, number, warmup, self.counter)
            found = ()
            if sites:
                from benchkit.engines.memory.sites import trace_sites
                describe = getattr(loop, "describe", lambda filename, line: None)
                found = trace_sites(loop.time_block, number, describe)
        reply = dict(zip(("long", "short", "empty"), (b.to_dict() for b in blocks)))
        return {**reply, "sites": [s.to_dict() for s in found],
                "left_running": left_running(self.threads_at_start)}


def left_running(threads_at_start) -> str:
    """What a benchmark left running in this process: Python threads started since the
    worker began, and child processes (Linux). They would allocate into the counts of the
    benchmarks measured after it here, so the parent replaces this worker ('' : none)."""
    import glob
    threads = [t for t in threading.enumerate() if t not in threads_at_start and t.is_alive()]
    children = []
    for listing in glob.glob(f"/proc/{os.getpid()}/task/*/children"):
        try:
            with open(listing, encoding="ascii") as f:
                children += f.read().split()
        except OSError:
            continue
    parts = [f"{len(threads)} thread(s)" if threads else "",
             f"{len(children)} child process(es)" if children else ""]
    return " and ".join(p for p in parts if p)


def _error_reply(error):
    from benchkit.errors import AsvSkipped, SnippetError, SuiteError
    kind = ("skipped" if isinstance(getattr(error, "error", None), AsvSkipped)
            else "snippet" if isinstance(error, SnippetError)
            else "suite" if isinstance(error, SuiteError) else "error")
    if kind == "skipped":
        return {"ok": False, "kind": kind, "error": str(error.error), "traceback": ""}
    shown = error.error if isinstance(error, SnippetError) else error
    return {"ok": False, "kind": kind, "error": f"{type(error).__name__}: {error}",
            "traceback": "".join(traceback.format_exception(shown))}


def serve(requests, reply):
    """Answer requests until `quit` (or the end of input)."""
    worker = Worker()
    for line in requests:
        request = json.loads(line)
        cmd = request.pop("cmd")
        if cmd == "quit":
            return
        try:
            result = getattr(worker, cmd)(**request)
            reply({"ok": True, **result})
        except BaseException as error:  # report everything; the parent decides
            reply(_error_reply(error))
            if isinstance(error, (KeyboardInterrupt, SystemExit)):
                return


def main():
    # The protocol owns the real stdout; anything the suite prints goes to stderr.
    """The protocol on the real stdout; the suites' own output to stderr."""
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    def reply(obj):
        protocol.write(json.dumps(obj) + "\n")
        protocol.flush()
    serve(sys.stdin, reply)


if __name__ == "__main__":
    main()
