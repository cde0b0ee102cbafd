"""CallgrindStats <-> JSON-able dicts for results files (pure)."""
from __future__ import annotations

from typing import Any

_COUNTS = ("baseline_inclusive_stats", "baseline_exclusive_stats", "stmt_inclusive_stats",
           "stmt_exclusive_stats")


def callgrind_to_dict(stats: Any) -> dict[str, Any]:
    from benchkit.results.schema import task_spec_to_dict
    out = {"task_spec": task_spec_to_dict(stats.task_spec),
           "number_per_run": stats.number_per_run,
           "built_with_debug_symbols": stats.built_with_debug_symbols,
           "stmt_callgrind_out": stats.stmt_callgrind_out,
           "metadata": stats.metadata}
    for name in _COUNTS:
        out[name] = [[c, fn] for c, fn in getattr(stats, name)]
    return out


def callgrind_from_dict(d: Any, where: str) -> Any:
    from benchkit.results.schema import SchemaError, task_spec_from_dict
    from benchkit.valgrind.callgrind_stats import CallgrindStats
    from benchkit.valgrind.counts import FunctionCount, FunctionCounts
    if not isinstance(d, dict):
        raise SchemaError(f"{where}: expected an object")
    counts = {}
    for name in _COUNTS:
        rows = d.get(name)
        if not isinstance(rows, list) or not all(
                isinstance(r, list) and len(r) == 2 and isinstance(r[0], int)
                and isinstance(r[1], str) for r in rows):
            raise SchemaError(f"{where}.{name}: expected a list of [count, function] pairs")
        counts[name] = FunctionCounts(tuple(FunctionCount(c, fn) for c, fn in rows),
                                      inclusive="inclusive" in name)
    n = d.get("number_per_run")
    if not isinstance(n, int) or n < 1:
        raise SchemaError(f"{where}.number_per_run: expected a positive integer")
    return CallgrindStats(task_spec=task_spec_from_dict(d.get("task_spec"), f"{where}.task_spec"),
                          number_per_run=n,
                          built_with_debug_symbols=bool(d.get("built_with_debug_symbols", True)),
                          stmt_callgrind_out=d.get("stmt_callgrind_out"),
                          metadata=d.get("metadata") or {}, **counts)
