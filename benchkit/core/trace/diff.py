"""Pure per-op diff of two traces: self time and calls, in integer nanoseconds."""
from __future__ import annotations

import dataclasses
from typing import Sequence

from tabulate import tabulate

from benchkit.core.text import one_line
from benchkit.core.trace.analysis import SKIP_CATEGORIES, _time
from benchkit.core.trace.events import Slice


@dataclasses.dataclass(frozen=True)
class OpDelta:
    """One op's self time and calls in BASE and NEW."""

    name: str
    base_calls: int
    new_calls: int
    base_self_ns: int
    new_self_ns: int

    @property
    def delta_ns(self) -> int:
        """NEW minus BASE self time, ns."""
        return self.new_self_ns - self.base_self_ns

    @property
    def status(self) -> str:
        """added, removed, slower, faster or same."""
        if self.base_calls == 0:
            return "added"
        if self.new_calls == 0:
            return "removed"
        if self.delta_ns > 0:
            return "slower"
        if self.delta_ns < 0:
            return "faster"
        return "same"


def _totals(items: Sequence[Slice], by_region: bool):
    out: dict[str, list[int]] = {}
    for s in items:
        if s.cat in SKIP_CATEGORIES or s.name.startswith("ProfilerStep#"):
            continue
        key = f"{s.region or '(no region)'} / {s.name}" if by_region else s.name
        calls_self = out.setdefault(key, [0, 0])
        calls_self[0] += 1
        calls_self[1] += s.self_ns
    return out


def diff_traces(base: Sequence[Slice], new: Sequence[Slice],
                by_region: bool = False) -> list[OpDelta]:
    """Per-op deltas over all events (all active steps), largest |delta| first."""
    a, b = _totals(base, by_region), _totals(new, by_region)
    rows = []
    for name in dict.fromkeys([*a, *b]):
        (base_calls, base_self), (new_calls, new_self) = a.get(name, (0, 0)), b.get(name, (0, 0))
        rows.append(OpDelta(name, base_calls, new_calls, base_self, new_self))
    return sorted(rows, key=lambda r: (-abs(r.delta_ns), r.name))


def format_trace_diff(rows: Sequence[OpDelta], top: int = 0, markdown: bool = False) -> str:
    """The largest per-op changes as a table."""
    shown = rows[:top] if top else rows
    body = [[r.status, one_line(r.name), f"{r.base_calls} -> {r.new_calls}",
             f"{r.base_self_ns:,} ns", f"{r.new_self_ns:,} ns", f"{r.delta_ns:+,} ns",
             f"{r.delta_ns / r.base_self_ns:+.1%}" if r.base_self_ns else "-"] for r in shown]
    table = tabulate(body, headers=["status", "op", "calls", "base self", "new self", "delta",
                                    "change"],
                     tablefmt="github" if markdown else "simple", disable_numparse=True)
    counts = {s: sum(1 for r in rows if r.status == s)
              for s in ("added", "removed", "slower", "faster", "same")}
    total = sum(r.delta_ns for r in rows)
    return (f"{table}\n\n" + ", ".join(f"{n} {s}" for s, n in counts.items()) +
            f"; total self-time delta {total:+,} ns ({_time(abs(total))})")
