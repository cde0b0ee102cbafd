"""Pure checks that a chrome trace opens cleanly in Perfetto; each problem names its event."""
from __future__ import annotations

import dataclasses
from typing import Any

from benchkit.errors import TraceError
from benchkit.core.text import one_line
from benchkit.core.trace.events import to_ns, trace_events


@dataclasses.dataclass(frozen=True)
class Problem:
    """One thing that would keep a trace from opening cleanly in Perfetto."""

    index: int
    name: str
    ph: str
    message: str

    def __str__(self) -> str:
        return one_line(f"event #{self.index} ({self.ph} {self.name!r}): {self.message}")


def validate(trace: Any) -> list[Problem]:
    """Every Problem of a chrome trace (none: it opens cleanly)."""
    events = trace_events(trace)
    problems: list[Problem] = []
    spans: dict[tuple, list[tuple[int, int, int, str]]] = {}   # thread -> (start, end, i, name)
    open_b: dict[tuple, list[tuple[int, int, str]]] = {}
    flows: list[tuple[int, dict, int]] = []

    def report(i, e, message):
        problems.append(Problem(i, str(e.get("name", "")), str(e.get("ph", "?")), message))

    def time_field(i, e, key) -> int | None:
        """The field in ns, or None (reported) when it is not a non-negative number."""
        try:
            value = to_ns(e.get(key))
        except TraceError as error:
            report(i, e, f"{key} {str(error).removeprefix('timestamp ')}")
            return None
        if value < 0:
            report(i, e, f"negative {key}")
            return None
        return value

    for i, e in enumerate(events):
        if not isinstance(e, dict):
            problems.append(Problem(i, "", "?", "is not an object"))
            continue
        ph = e.get("ph")
        if ph is None:
            report(i, e, "has no 'ph'")
            continue
        if ph == "M":
            if e.get("name") in ("process_name", "thread_name") and not isinstance(
                    (e.get("args") or {}).get("name"), str):
                report(i, e, "metadata without args.name")
            continue
        ts = time_field(i, e, "ts")
        if ts is None:
            continue
        thread = (repr(e.get("pid")), repr(e.get("tid")))
        if ph == "X":
            dur = time_field(i, e, "dur")
            if dur is None:
                continue
            spans.setdefault(thread, []).append((ts, ts + dur, i, str(e.get("name", ""))))
        elif ph == "B":
            open_b.setdefault(thread, []).append((ts, i, str(e.get("name", ""))))
        elif ph == "E":
            stack = open_b.get(thread)
            if not stack:
                report(i, e, "E without a matching B on its thread")
                continue
            start, j, name = stack.pop()
            if e.get("name") not in (None, name):
                report(i, e, f"E closes {name!r} (event #{j}) under another name")
            if ts < start:
                report(i, e, f"E before its B (event #{j})")
            spans.setdefault(thread, []).append((start, ts, j, name))
        elif ph in ("s", "t", "f"):
            if "id" not in e and "bind_id" not in e:
                report(i, e, "flow event without an id")
            flows.append((i, e, ts))
    for thread, stack in open_b.items():
        for _, j, name in stack:
            problems.append(Problem(j, name, "B", "B never closed by an E"))
    for thread, items in spans.items():
        items.sort(key=lambda s: (s[0], -(s[1] - s[0]), s[2]))
        stack: list[tuple[int, int, int, str]] = []
        for start, end, i, name in items:
            while stack and start >= stack[-1][1]:
                stack.pop()
            if stack and end > stack[-1][1]:
                parent = stack[-1]
                problems.append(Problem(i, name, "X", f"overlaps {parent[3]!r} (event "
                                        f"#{parent[2]}) without nesting on its thread"))
                continue
            stack.append((start, end, i, name))

    def enclosed(thread, ts) -> bool:
        return any(start <= ts <= end for start, end, _, _ in spans.get(thread, ()))

    starts, finishes = {}, {}
    for i, e, ts in flows:
        thread = (repr(e.get("pid")), repr(e.get("tid")))
        key = (e.get("cat"), e.get("id"))
        if e["ph"] == "s":
            starts[key] = i
            if not enclosed(thread, ts):
                report(i, e, "flow start is not inside an open slice on its thread")
        elif e["ph"] == "f":
            finishes[key] = i
            if e.get("bp") == "e" and not enclosed(thread, ts):
                report(i, e, 'flow end with "bp": "e" has no enclosing slice on its thread')
    for key, i in finishes.items():
        if key not in starts:
            report(i, events[i], f"flow end without a start (id {key[1]!r})")
    for key, i in starts.items():
        if key not in finishes:
            report(i, events[i], f"flow start without an end (id {key[1]!r})")
    return sorted(problems, key=lambda p: p.index)
