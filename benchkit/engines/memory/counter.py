"""The counting allocator (counter.c): built once per machine with the system C compiler,
preloaded into memory worker processes, and read there through ctypes.

Why a counting allocator and not tracemalloc, DHAT or memray: tracemalloc sees only Python's
allocator (not NumPy's or torch's native buffers through malloc, nor operator new) and keeps
live blocks, not the count of allocations made and freed; valgrind's DHAT sees only the
native heap (pymalloc's small objects come from its arenas) and runs the snippet 30-100x
slower; memray records every event to a file to be aggregated afterwards. Interposing
both allocators in the worker counts every allocation once, exactly, at the cost of a
lookup per call (benchmarks/perf_memory.py measures the overheads side by side).
"""
from __future__ import annotations

import ctypes
import os
import sysconfig
from pathlib import Path

from benchkit.core.measure.memory import BlockCounts, Source
from benchkit.errors import DependencyMissingError, MemoryCountError
from benchkit.engines.native import build_cached

SOURCE = Path(__file__).with_name("counter.c")
PRELOAD = "LD_PRELOAD"


def build_library() -> Path:
    """counter.c compiled into a shared library, once per (source, Python, platform)."""
    include = sysconfig.get_paths()["include"]
    if not (Path(include) / "Python.h").is_file():
        raise DependencyMissingError(
            f"collect_memory compiles a small allocator shim against Python's headers, which "
            f"are not in {include}; install them (Debian/Ubuntu: apt-get install python3-dev)")
    return build_cached("benchkit_memory", [SOURCE], include, include.encode(),
                        "collect_memory's allocator shim", DependencyMissingError)


def worker_environment() -> dict[str, str]:
    """Environment of a memory worker: the counter preloaded."""
    return {PRELOAD: str(build_library())}


class _Source(ctypes.Structure):
    _fields_ = [("allocations", ctypes.c_uint64), ("frees", ctypes.c_uint64),
                ("bytes", ctypes.c_uint64), ("freed_bytes", ctypes.c_uint64)]


class _Counts(ctypes.Structure):
    _fields_ = [("source", _Source * 2), ("live", ctypes.c_int64), ("peak", ctypes.c_int64),
                ("untracked_frees", ctypes.c_uint64), ("table_full", ctypes.c_uint64)]


_ORDER = (Source.NATIVE, Source.PYTHON)     # counter.c's source indices


class Counter:
    """The preloaded counter of this process (a memory worker)."""

    def __init__(self) -> None:
        process = ctypes.CDLL(None)
        if not hasattr(process, "bk_loaded"):
            raise MemoryCountError(
                "the memory counter is not loaded in this process; memory is counted in "
                "worker processes started by Timer.collect_memory")
        self._lib = process
        # Read into one structure made here, so that reading allocates nothing before the
        # counts are copied (the peak would include it).
        self._raw = _Counts()
        self._into = ctypes.byref(self._raw)
        self._reset, self._read = process.bk_reset, process.bk_read
        self._lib.bk_install_python_hooks()
        # Processes the snippets start are not counted (nor slowed).
        os.environ.pop(PRELOAD, None)

    def reset(self) -> None:
        """Zero the counts; counting starts."""
        self._reset()

    def read(self) -> BlockCounts:
        """The counts since the last reset."""
        self._read(self._into)
        raw = self._raw
        if raw.table_full:
            raise MemoryCountError(
                f"the memory counter's table of live blocks filled up ({raw.table_full} "
                "blocks not tracked); this process holds too many live allocations to count")

        def per(field: str) -> dict[Source, int]:
            return {source: getattr(raw.source[i], field) for i, source in enumerate(_ORDER)}
        return BlockCounts(per("allocations"), per("frees"), per("bytes"), per("freed_bytes"),
                           raw.peak, raw.untracked_frees)
