"""Move torch.utils.benchmark history over: convert its Measurements and CallgrindStats.

Unpickling torch's objects needs torch importable (the pickles name torch's classes) and runs
the pickle, so it happens only on explicit request: `benchkit.from_torch(obj)` for objects
already loaded, `load_torch_pickle(path)` / `benchkit import-torch` for files.
"""
from __future__ import annotations

import dataclasses
import pickle
from pathlib import Path
from typing import Any, Iterable

from benchkit.core.measure.measurement import Measurement
from benchkit.core.measure.task import TASKSPEC_FIELDS, TaskSpec
from benchkit.errors import TorchConversionError
from benchkit.system.reading import read_bounded

_TORCH = "torch.utils.benchmark"


def _is_torch(obj: Any, name: str) -> bool:
    cls = type(obj)
    return cls.__name__ == name and cls.__module__.startswith(_TORCH)


def _task_spec(spec: Any) -> TaskSpec:
    return TaskSpec(**{f: getattr(spec, f) for f in TASKSPEC_FIELDS if hasattr(spec, f)})


def _counts(counts: Any):
    from benchkit.core.callgrind.counts import FunctionCount, FunctionCounts
    return FunctionCounts(tuple(FunctionCount(int(c), str(fn)) for c, fn in counts),
                          bool(counts.inclusive))


def _convert(obj: Any) -> Any:
    if isinstance(obj, Measurement) or type(obj).__name__ == "CallgrindStats" and \
            type(obj).__module__.startswith("benchkit"):
        return obj
    if _is_torch(obj, "Measurement"):
        metadata = dict(obj.metadata or {})
        metadata.setdefault("converted_from", _TORCH)
        return Measurement(int(obj.number_per_run), [float(t) for t in obj.raw_times],
                           _task_spec(obj.task_spec), metadata)
    if _is_torch(obj, "CallgrindStats"):
        from benchkit.core.callgrind.callgrind_stats import CallgrindStats
        return CallgrindStats(
            task_spec=_task_spec(obj.task_spec), number_per_run=int(obj.number_per_run),
            built_with_debug_symbols=bool(obj.built_with_debug_symbols),
            baseline_inclusive_stats=_counts(obj.baseline_inclusive_stats),
            baseline_exclusive_stats=_counts(obj.baseline_exclusive_stats),
            stmt_inclusive_stats=_counts(obj.stmt_inclusive_stats),
            stmt_exclusive_stats=_counts(obj.stmt_exclusive_stats),
            stmt_callgrind_out=None, metadata={"converted_from": _TORCH})
    raise TorchConversionError(
        f"cannot convert {type(obj).__module__}.{type(obj).__qualname__}: from_torch takes "
        "torch.utils.benchmark Measurements and CallgrindStats (or lists of them)")


def from_torch(obj_or_list: Any) -> Any:
    """benchkit objects from torch.utils.benchmark ones: a Measurement or CallgrindStats
    for one, a list for a list (or tuple, or dict values). benchkit objects pass through."""
    if isinstance(obj_or_list, dict):
        return [_convert(v) for v in obj_or_list.values()]
    if isinstance(obj_or_list, (list, tuple)):
        return [_convert(v) for v in obj_or_list]
    return _convert(obj_or_list)


def _flatten(obj: Any) -> Iterable[Any]:
    if isinstance(obj, dict):
        obj = list(obj.values())
    if isinstance(obj, (list, tuple)):
        for item in obj:
            yield from _flatten(item)
    else:
        yield obj


def load_torch_pickle(path: str | Path) -> list[Any]:
    """Unpickle a file of torch.utils.benchmark results (this runs the pickle: only for files
    you trust) and convert everything in it."""
    path = Path(path)
    data = read_bounded(path, lambda problem: TorchConversionError(f"{path}: {problem}"))
    try:
        obj = pickle.loads(data)
    except ModuleNotFoundError as error:
        raise TorchConversionError(
            f"{path}: this pickle refers to module {error.name!r}, which is not importable "
            "here; torch.utils.benchmark pickles need torch installed to be read. Convert it "
            "once where torch is installed (benchkit import-torch) and keep the benchkit "
            "results file, which loads anywhere.") from None
    except Exception as error:
        raise TorchConversionError(f"{path}: not a readable pickle ({type(error).__name__}: "
                                   f"{error})") from None
    items = [_convert(item) for item in _flatten(obj)]
    if not items:
        raise TorchConversionError(f"{path}: holds no Measurements or CallgrindStats")
    return [dataclasses.replace(i, metadata={**(i.metadata or {}), "source": str(path)})
            if isinstance(i, Measurement) else i for i in items]
