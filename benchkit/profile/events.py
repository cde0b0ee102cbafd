"""Pure chrome-trace model: slices with integer-nanosecond times, nesting and self time."""
from __future__ import annotations

import dataclasses
import re
from decimal import Decimal, InvalidOperation
from typing import Any

from benchkit.errors import TraceError


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def op_name(name: Any) -> str:
    """Event name without memory addresses, so the same op matches across traces."""
    return _ADDRESS.sub("", str(name))


def to_ns(value: Any) -> int:
    """Microseconds (JSON number, Decimal or str) -> integer nanoseconds, without float
    rounding (so short ops never come out negative)."""
    if isinstance(value, bool) or value is None:
        raise TraceError(f"timestamp {value!r} is not a number")
    try:
        d = value if isinstance(value, Decimal) else Decimal(repr(value) if isinstance(
            value, float) else str(value))
        return int((d * 1000).to_integral_value())
    except (InvalidOperation, ValueError):
        raise TraceError(f"timestamp {value!r} is not a number") from None


@dataclasses.dataclass
class Slice:
    index: int                 # position in traceEvents
    name: str
    cat: str
    pid: Any
    tid: Any
    ts: int                    # ns
    dur: int                   # ns
    args: dict
    self_ns: int = 0
    depth: int = 0
    region: str | None = None  # innermost enclosing user annotation (not ProfilerStep#)
    step: str | None = None    # enclosing ProfilerStep#N
    parent: "Slice | None" = dataclasses.field(default=None, repr=False)

    @property
    def end(self) -> int:
        return self.ts + self.dur


def trace_events(trace: Any) -> list[dict]:
    if isinstance(trace, list):
        return trace
    if isinstance(trace, dict) and isinstance(trace.get("traceEvents"), list):
        return trace["traceEvents"]
    raise TraceError("not a chrome trace: expected an object with a 'traceEvents' list")


def slices(trace: Any) -> list[Slice]:
    """Complete (X) and begin/end (B/E) events as Slices with self time, depth and region."""
    out: list[Slice] = []
    open_b: dict[tuple, list[tuple[int, dict]]] = {}
    for i, e in enumerate(trace_events(trace)):
        if not isinstance(e, dict):
            continue
        ph = e.get("ph")
        if ph == "X":
            out.append(Slice(i, op_name(e.get("name", "")), str(e.get("cat", "")), e.get("pid"),
                             e.get("tid"), to_ns(e.get("ts")), to_ns(e.get("dur", 0)),
                             e.get("args") or {}))
        elif ph == "B":
            open_b.setdefault((e.get("pid"), e.get("tid")), []).append((i, e))
        elif ph == "E":
            stack = open_b.get((e.get("pid"), e.get("tid")))
            if stack:
                j, b = stack.pop()
                start = to_ns(b.get("ts"))
                out.append(Slice(j, op_name(b.get("name", "")), str(b.get("cat", "")), b.get("pid"),
                                 b.get("tid"), start, to_ns(e.get("ts")) - start,
                                 b.get("args") or {}))
    _nest(out)
    return out


def _nest(items: list[Slice]) -> None:
    by_thread: dict[tuple, list[Slice]] = {}
    for s in items:
        by_thread.setdefault((repr(s.pid), repr(s.tid)), []).append(s)
    for thread in by_thread.values():
        thread.sort(key=lambda s: (s.ts, -s.dur, s.index))
        stack: list[Slice] = []
        for s in thread:
            while stack and s.ts >= stack[-1].end:
                stack.pop()
            s.self_ns = s.dur
            if stack:
                parent = stack[-1]
                parent.self_ns -= min(s.dur, parent.end - s.ts)
                s.depth = len(stack)
                s.parent = parent
                s.region, s.step = parent.region, parent.step
            if s.cat == "user_annotation" or s.cat == "benchkit_region":
                if s.name.startswith("ProfilerStep#"):
                    s.step = s.name
                else:
                    s.region = s.name
            stack.append(s)
