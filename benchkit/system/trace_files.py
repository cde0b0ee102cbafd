"""Read and write chrome traces (.json / .json.gz), exactly (Decimal) and atomically.

`load_trace` reads a whole trace (for merging and validation); `read_slices` streams the
events of a trace into analysis slices without holding the parsed document, so analysing a
large trace takes memory of the order of the file, not ten times it.
"""
from __future__ import annotations

import gzip
import json
from decimal import Decimal
from pathlib import Path
from typing import Iterator

from benchkit.errors import TraceError
from benchkit.system.files import atomic_write_bytes
from benchkit.system.reading import open_bounded, read_bounded


def _failing(path: Path):
    return lambda problem: TraceError(f"{path}: {problem}")


def load_trace(path: str | Path) -> dict:
    """A whole chrome trace (.json or .json.gz) as a dict; TraceError if it is not one
    (or is not a regular file, or holds more than the read limit)."""
    path = Path(path)
    raw = read_bounded(path, _failing(path))
    try:
        trace = json.loads(raw.decode("utf-8"), parse_float=Decimal,
                           parse_constant=_refuse_constant)
    except (UnicodeDecodeError, ValueError) as error:
        raise TraceError(f"{path}: not a JSON chrome trace ({str(error)[:200]})") from None
    except RecursionError:
        raise TraceError(f"{path}: nested too deeply to be a chrome trace") from None
    except MemoryError:
        raise TraceError(f"{path}: too large to hold in memory ({len(raw):,} bytes); analyze "
                         "it with `benchkit analyze`, which streams it") from None
    if isinstance(trace, list):
        trace = {"traceEvents": trace}
    if not isinstance(trace, dict) or not isinstance(trace.get("traceEvents"), list):
        raise TraceError(f"{path}: not a chrome trace (no 'traceEvents' list)")
    return trace


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not a number a trace can hold")


def iter_events(path: str | Path) -> Iterator[dict]:
    """The trace's events one by one (ts/dur as exact Decimals), streamed from the file."""
    import ijson
    path = Path(path)
    with open_bounded(path, _failing(path)) as f:
        first = f.peek(64).lstrip()
        prefix = "item" if first.startswith(b"[") else "traceEvents.item"
        count = 0
        try:
            for event in ijson.items(f, prefix):
                count += 1
                yield event
        except (ijson.JSONError, EOFError, OSError, UnicodeDecodeError) as error:
            # The parser's message spans lines (it draws an arrow): keep its first line.
            what = (str(error).strip().splitlines() or [type(error).__name__])[0]
            raise TraceError(f"{path}: not a valid JSON chrome trace after {count} events "
                             f"({what}); the file is truncated or corrupt, or holds non-JSON "
                             "values such as Infinity or NaN") from None
        except RecursionError:
            raise TraceError(f"{path}: nested too deeply to be a chrome trace") from None
    if count == 0:
        raise TraceError(f"{path}: no events (a chrome trace holds a 'traceEvents' list)")


def read_slices(path: str | Path):
    """Analysis slices of a trace file, streamed and checked event by event."""
    from benchkit.core.trace.events import slices
    return slices(iter_events(path), source=str(path))


def save_trace(path: str | Path, trace: dict) -> Path:
    """Write a chrome trace atomically (.json.gz compressed)."""
    path = Path(path)
    data = json.dumps(trace, default=_decimal_default).encode("utf-8")
    if path.name.endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    atomic_write_bytes(path, data)
    return path


def _decimal_default(o):
    # Decimals (from exact reading) are written as floats: exact for trace timestamps up to
    # 16 significant digits, which covers kineto's relative microsecond timestamps.
    if isinstance(o, Decimal):
        return int(o) if o == o.to_integral_value() else float(o)
    raise TypeError(f"{type(o).__name__} is not JSON serializable")
