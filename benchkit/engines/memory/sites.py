"""Allocation sites of a snippet's loop, from memray's stacks, in a memory worker process.

The counts of collect_memory come from benchkit's counter, which keeps totals only; where
they are asked for, the sites come from a second pass of the same two blocks (2N and N
runs) under memray's tracker, which records every allocation with its Python and native
stack. Per run = (long - short) / N for each site, as for the totals."""
from __future__ import annotations

import collections
import os
import tempfile
from pathlib import Path
from typing import Callable

from benchkit.core.measure.memory import AllocationSite, SiteKind
from benchkit.errors import DependencyMissingError

TOP = 10        # sites kept per kind
# Allocator entry points and wrappers: the site is the function that called them.
_ALLOCATOR_FUNCTIONS = frozenset({
    "malloc", "calloc", "realloc", "free", "posix_memalign", "aligned_alloc", "memalign",
    "valloc", "pvalloc", "operator new", "operator new[]", "PyMem_Malloc", "PyMem_Calloc",
    "PyMem_Realloc", "PyMem_RawMalloc", "PyMem_RawCalloc", "PyMem_RawRealloc",
    "PyObject_Malloc", "PyObject_Calloc", "PyObject_Realloc", "_PyObject_Malloc",
    "_PyObject_Calloc", "_PyObject_Realloc", "_PyMem_RawMalloc", "_PyMem_RawCalloc",
    "_PyMem_RawRealloc", "pymalloc_alloc", "pymalloc_realloc", "_PyMem_DebugMalloc",
    "c10::alloc_cpu", "c10::DefaultCPUAllocator::allocate"})
_ALLOCATOR_PREFIXES = ("operator new", "operator delete")
_NOT_ALLOCATIONS = frozenset({"FREE", "MUNMAP", "PYMALLOC_FREE", "MMAP"})

Counts = dict[tuple[SiteKind, str], list[int]]       # site -> [allocations, bytes]


def require_memray():
    """The memray module, or a DependencyMissingError that says what to install."""
    try:
        import memray
    except ImportError:
        raise DependencyMissingError(
            "allocation sites are read from memray's stacks; install it (pip install memray, "
            "or benchkit-perf[memory]) or collect memory without sites") from None
    return memray


def trace_sites(time_block: Callable[..., float], number: int,
                describe: Callable[[str, int], str | None]) -> tuple[AllocationSite, ...]:
    """The top sites per kind, per run: blocks of 2 x `number` and `number` runs traced
    from the loop's start mark to its end mark. `describe(filename, line)` names a line
    of the loop's own code ("stmt:1 ...") or returns None for other files."""
    memray = require_memray()
    with tempfile.TemporaryDirectory(prefix="benchkit-sites-") as scratch:
        # A first, empty block warms what tracing itself creates once.
        blocks = [_trace_block(memray, time_block, runs, Path(scratch) / f"{k}.bin",
                               describe) for k, runs in enumerate((0, 2 * number, number))]
    _, long, short = blocks
    sites = []
    for kind in SiteKind:
        per_site = []
        for key in set(long) | set(short):
            if key[0] is not kind:
                continue
            a = long.get(key, [0, 0])
            b = short.get(key, [0, 0])
            allocations, size = (a[0] - b[0]) / number, (a[1] - b[1]) / number
            if allocations > 0 or size > 0:
                per_site.append(AllocationSite(kind, key[1], allocations, size))
        per_site.sort(key=lambda s: (-s.bytes, -s.allocations, s.location))
        sites += per_site[:TOP]
    return tuple(sites)


def _trace_block(memray, time_block, runs: int, path: Path, describe) -> Counts:
    tracker = memray.Tracker(str(path), native_traces=True, trace_python_allocators=True)
    started: list[bool] = []

    def mark() -> float:
        if started:
            tracker.__exit__(None, None, None)
        else:
            started.append(True)
            tracker.__enter__()
        return 0.0
    time_block(runs, mark)
    if not started:             # a C++ loop keeps its own clock: trace a whole block
        with tracker:
            time_block(runs)
    counts: Counts = collections.defaultdict(lambda: [0, 0])
    reader = memray.FileReader(str(path))
    try:
        for record in reader.get_allocation_records():
            if memray.AllocatorType(record.allocator).name in _NOT_ALLOCATIONS:
                continue
            for key in _sites_of(record, describe):
                counts[key][0] += record.n_allocations
                counts[key][1] += record.size
    finally:
        reader.close()
        os.unlink(path)
    return counts


def _sites_of(record, describe) -> list[tuple[SiteKind, str]]:
    keys = []
    python = record.stack_trace(max_stacks=1)
    if python:
        function, filename, line = python[0]
        keys.append((SiteKind.PYTHON, describe(filename, line)
                     or f"{_short(filename)}:{line} in {function}"))
    for function, filename, line in record.native_stack_trace():
        name = _shortened(_without_parameters(function))
        if name not in _ALLOCATOR_FUNCTIONS and not name.startswith(_ALLOCATOR_PREFIXES):
            keys.append((SiteKind.NATIVE, name))
            break
    return keys


def _without_parameters(function: str) -> str:
    """'c10::alloc_cpu(unsigned long)' -> 'c10::alloc_cpu' (C++ names come demangled)."""
    if not function.endswith(")") or function.startswith("operator()"):
        return function
    depth = 0
    for i in range(len(function) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(function[i], 0)
        if depth == 0:
            return function[:i] or function
    return function


def _shortened(name: str, longest: int = 60) -> str:
    """Long C++ names with their template arguments folded: 'f<…>'."""
    if len(name) <= longest or "<" not in name:
        return name
    out, depth = [], 0
    for char in name:
        if char == "<":
            if depth == 0:
                out.append("<…>")
            depth += 1
        elif char == ">" and depth:
            depth -= 1
        elif depth == 0:
            out.append(char)
    return "".join(out)


def _short(filename: str) -> str:
    parts = Path(filename).parts
    return str(Path(*parts[-2:])) if len(parts) > 2 else filename
