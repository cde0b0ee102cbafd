"""Read and write chrome traces (.json / .json.gz), exactly (Decimal) and atomically."""
from __future__ import annotations

import gzip
import json
import zlib
from decimal import Decimal
from pathlib import Path

from benchkit.errors import TraceError
from benchkit.results.store import atomic_write_bytes


def load_trace(path: str | Path) -> dict:
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise TraceError(f"{path}: cannot be read ({error.strerror}); check the path") from None
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (EOFError, OSError, zlib.error) as error:
            raise TraceError(f"{path}: truncated or corrupt gzip ({error})") from None
    try:
        trace = json.loads(raw.decode("utf-8"), parse_float=Decimal)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise TraceError(f"{path}: not a JSON chrome trace ({error})") from None
    if isinstance(trace, list):
        trace = {"traceEvents": trace}
    if not isinstance(trace, dict) or not isinstance(trace.get("traceEvents"), list):
        raise TraceError(f"{path}: not a chrome trace (no 'traceEvents' list)")
    return trace


def save_trace(path: str | Path, trace: dict) -> Path:
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
