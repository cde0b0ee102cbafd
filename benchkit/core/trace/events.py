"""Pure chrome-trace model: slices with integer-nanosecond times, nesting and self time.

Slices keep only what analysis needs (slotted, names and argument records shared), so a
480k-event trace fits in a few times its file size; every event is checked as it is read, and
a problem names the source, the event (index and name) and the field.
"""
from __future__ import annotations

import dataclasses
import math
import re
import sys
from decimal import Decimal, DecimalException
from typing import Any

from benchkit.errors import TraceError

ANALYSIS_ARGS = ("Input Dims", "Input type", "Concrete Inputs")


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def op_name(name: Any) -> str:
    """Event name without memory addresses, so the same op matches across traces."""
    return _ADDRESS.sub("", str(name))


# Timestamps and durations beyond this many microseconds (about 3,000 years) are not times.
MAX_MICROSECONDS = Decimal(10) ** 17


def to_ns(value: Any) -> int:
    """Microseconds (JSON number, Decimal or str) -> integer nanoseconds, without float
    rounding (so short ops never come out negative). Only numbers within +-MAX_MICROSECONDS
    are times; anything else is a TraceError before any arithmetic."""
    if isinstance(value, bool) or value is None or isinstance(value, (list, dict)):
        raise TraceError(f"timestamp {_shown(value)} is not a number")
    if isinstance(value, float) and not math.isfinite(value):
        raise TraceError(f"timestamp {_shown(value)} is not a finite number")
    if isinstance(value, str) and len(value) > 64:
        raise TraceError(f"timestamp {_shown(value)} is not a number")
    try:
        d = value if isinstance(value, Decimal) else Decimal(repr(value) if isinstance(
            value, float) else str(value))
    except (DecimalException, ValueError):
        raise TraceError(f"timestamp {_shown(value)} is not a number") from None
    if not d.is_finite():
        raise TraceError(f"timestamp {_shown(value)} is not a finite number")
    if abs(d) > MAX_MICROSECONDS:
        raise TraceError(f"timestamp {_shown(value)} is out of range (more than "
                         f"{MAX_MICROSECONDS:.0e} microseconds)")
    return int((d * 1000).to_integral_value())


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _field_ns(e: dict, field: str, index: int, source: str, *, required: bool = True,
              default: Any = None) -> int:
    """The event's `field` in ns, or a TraceError naming the source, event and field."""
    if field not in e:
        if not required:
            return default
        raise TraceError(f"{source}: event {index} ({e.get('name', '?')!r}, ph {e.get('ph')!r}) "
                         f"has no '{field}'; every {e.get('ph')} event needs one")
    try:
        return to_ns(e[field])
    except TraceError as error:
        raise TraceError(f"{source}: event {index} ({e.get('name', '?')!r}): '{field}' "
                         f"{str(error).removeprefix('timestamp ')}") from None


@dataclasses.dataclass(slots=True)
class Slice:
    """One complete span of a trace, with only the fields the analysis uses."""

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
    # Work estimates, set by analysis.attribute_costs: own (leaf ops) and inclusive.
    flops: int | None = None
    bytes: int | None = None
    incl_flops: int | None = None
    incl_bytes: int | None = None

    @property
    def end(self) -> int:
        """ts + dur, ns."""
        return self.ts + self.dur


def trace_events(trace: Any) -> list[dict]:
    """The event list of a trace dict (or a bare list)."""
    if isinstance(trace, list):
        return trace
    if isinstance(trace, dict) and isinstance(trace.get("traceEvents"), list):
        return trace["traceEvents"]
    raise TraceError("not a chrome trace: expected an object with a 'traceEvents' list")


def _shallow(value: Any, depth: int) -> bool:
    """Whether lists and dicts in `value` nest at most `depth` deep."""
    if isinstance(value, (list, dict)):
        if depth == 0:
            return False
        items = value.values() if isinstance(value, dict) else value
        return all(_shallow(v, depth - 1) for v in items)
    return True


class _Shared:
    """Interning of names and argument records: a trace repeats the same ops."""

    def __init__(self, keep: tuple[str, ...] | None):
        self._records: dict[str, dict] = {}
        self._keep = keep

    def name(self, value: Any) -> str:
        return sys.intern(op_name(value))

    def args(self, args: Any) -> dict:
        if not isinstance(args, dict):
            return {}
        if self._keep is None:
            return args
        # arguments nested deeper than any real shape list are dropped, not walked
        kept = {k: args[k] for k in self._keep if k in args and _shallow(args[k], 4)}
        if not kept:
            return {}
        key = repr(kept)
        return self._records.setdefault(key, kept)


def slices(trace: Any, source: str = "trace",
           keep_args: tuple[str, ...] | None = ANALYSIS_ARGS) -> list[Slice]:
    """Complete (X) and begin/end (B/E) events as Slices with self time, depth and region.

    `trace` is a trace dict, a list of events, or any iterable of event dicts (streamed). An
    event without a usable ts, an X event without a usable dur, or a negative duration is a
    TraceError naming `source`, the event and the field. Only the `keep_args` arguments are
    kept (None: all)."""
    out: list[Slice] = []
    open_b: dict[tuple, list[tuple[int, dict]]] = {}
    shared = _Shared(keep_args)
    events = trace_events(trace) if isinstance(trace, (dict, list)) else trace
    for i, e in enumerate(events):
        if not isinstance(e, dict):
            continue
        ph = e.get("ph")
        if ph == "X":
            ts = _field_ns(e, "ts", i, source)
            dur = _field_ns(e, "dur", i, source)
            if dur < 0:
                raise TraceError(f"{source}: event {i} ({e.get('name', '?')!r}): 'dur' is "
                                 f"negative ({e['dur']})")
            out.append(Slice(i, shared.name(e.get("name", "")),
                             sys.intern(str(e.get("cat", ""))), e.get("pid"), e.get("tid"), ts,
                             dur, shared.args(e.get("args"))))
        elif ph == "B":
            _field_ns(e, "ts", i, source)
            open_b.setdefault((e.get("pid"), e.get("tid")), []).append(
                (i, {"name": e.get("name", ""), "cat": e.get("cat", ""), "ts": e.get("ts"),
                     "args": shared.args(e.get("args")), "pid": e.get("pid"),
                     "tid": e.get("tid")}))
        elif ph == "E":
            end = _field_ns(e, "ts", i, source)
            stack = open_b.get((e.get("pid"), e.get("tid")))
            if stack:
                j, b = stack.pop()
                start = to_ns(b["ts"])
                if end < start:
                    raise TraceError(f"{source}: event {i} ('E' of {b['name']!r}, begun at "
                                     f"event {j}) ends before it begins")
                out.append(Slice(j, shared.name(b["name"]), sys.intern(str(b["cat"])), b["pid"],
                                 b["tid"], start, end - start, b["args"]))
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
