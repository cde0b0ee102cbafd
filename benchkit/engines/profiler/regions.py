"""Labelled regions for any Python code (NumPy, pure Python), recorded into the same trace.

    with benchkit.region("MASK INDICES"):
        idx = np.argwhere(mask > threshold)

    @benchkit.region("preprocess")
    def preprocess(batch): ...

Inside a torch.profiler session the region is a `record_function` span (category
user_annotation), so it nests with the torch ops in the exported trace. Without torch it is
recorded by benchkit's own RegionRecorder, which exports the same chrome-trace format.
"""
from __future__ import annotations

import functools
import os
import sys
import threading
import time
from typing import Any, Callable

_recorders: list["RegionRecorder"] = []


class RegionRecorder:
    """Collects region spans while active (`with RegionRecorder() as rec:`)."""

    def __init__(self) -> None:
        self.spans: list[tuple[str, int, int, int]] = []   # name, start ns, end ns, thread id

    def __enter__(self) -> "RegionRecorder":
        _recorders.append(self)
        return self

    def __exit__(self, *exc) -> None:
        _recorders.remove(self)

    def chrome_trace(self) -> dict[str, Any]:
        """The recorded regions as a chrome trace."""
        pid = os.getpid()
        events: list[dict[str, Any]] = [
            {"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
             "args": {"name": "benchkit regions"}}]
        for name, start, end, tid in self.spans:
            events.append({"ph": "X", "cat": "benchkit_region", "name": name, "pid": pid,
                           "tid": tid, "ts": start / 1000, "dur": (end - start) / 1000})
        return {"traceEvents": events, "displayTimeUnit": "ms"}


class region:
    """Context manager / decorator that records a named span."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._stack: list[Any] = []

    def __enter__(self):
        torch = sys.modules.get("torch")
        handle = None
        if torch is not None and getattr(torch.autograd.profiler, "_is_profiler_enabled", False):
            handle = torch.profiler.record_function(self.name)
            handle.__enter__()
        self._stack.append((handle, time.perf_counter_ns()))
        return self

    def __exit__(self, *exc):
        handle, start = self._stack.pop()
        end = time.perf_counter_ns()
        if handle is not None:
            handle.__exit__(*exc)
        elif _recorders:
            for recorder in _recorders:
                recorder.spans.append((self.name, start, end, threading.get_ident()))
        return False

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with region(self.name):
                return fn(*args, **kwargs)
        return wrapper
