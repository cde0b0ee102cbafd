"""Pure trace analysis (a profile_analyze for chrome traces): filter, aggregate, order.

Percentages are relative to the unfiltered total self time. FLOPs and bytes belong to the op
that does the work: an op with a costed op beneath it (aten::linear over aten::addmm) has
none of its own, so a column sums without double counting; its `incl.` figures hold the work
beneath it. Each rate divides by the matching time: FLOP/s = own FLOPs / self time,
incl. FLOP/s = inclusive FLOPs / total time (after aggregation).
"""
from __future__ import annotations

import dataclasses
import math
import re
from typing import Sequence

from tabulate import tabulate

from benchkit.core.text import one_line
from benchkit.errors import BenchkitError
from benchkit.core.trace.events import Slice
from benchkit.core.trace.flops import op_cost

AGGREGATE_BY = ("name", "name+shapes", "region")
AGGREGATES = ("sum", "mean", "min", "max", "count")
ORDER_KEYS = ("self", "total", "calls", "flops", "incl_flops", "bytes", "flop/s", "gb/s",
              "name")
SKIP_CATEGORIES = {"Trace"}   # the whole-trace span


@dataclasses.dataclass
class Row:
    """One aggregated row of a trace analysis."""

    key: str
    shapes: str
    calls: int
    self_ns: float
    total_ns: float
    flops: int | None              # the group's own work (leaf ops)
    bytes: int | None
    incl_flops: int | None = None  # own work plus the work of the ops beneath
    incl_bytes: int | None = None
    self_pct: float = 0.0
    cum_pct: float = 0.0

    @property
    def flop_per_s(self) -> float | None:
        """FLOP per second of self time."""
        return self.flops / (self.self_ns * 1e-9) if self.flops and self.self_ns > 0 else None

    @property
    def gb_per_s(self) -> float | None:
        """Bytes moved per second of self time, in GB/s."""
        return self.bytes / self.self_ns if self.bytes and self.self_ns > 0 else None

    @property
    def incl_flop_per_s(self) -> float | None:
        """FLOP per second of total (inclusive) time."""
        return (self.incl_flops / (self.total_ns * 1e-9)
                if self.incl_flops and self.total_ns > 0 else None)

    def sort_value(self, key: str):
        """The value --order-by sorts this row by."""
        return {"self": self.self_ns, "total": self.total_ns, "calls": self.calls,
                "flops": self.flops or 0, "bytes": self.bytes or 0,
                "incl_flops": self.incl_flops or 0, "flop/s": self.flop_per_s or 0,
                "gb/s": self.gb_per_s or 0, "name": self.key}[key]


@dataclasses.dataclass
class Analysis:
    """The rows of an analysis and the totals they are shares of."""

    rows: list[Row]
    total_ns: int             # unfiltered total self time
    shown_events: int
    aggregate_by: str
    aggregate: str


def _shapes(s: Slice) -> str:
    dims = s.args.get("Input Dims")
    return str(dims) if dims else ""


def _reduce(values: list[int], how: str) -> float:
    if how in ("sum", "count"):
        return float(sum(values))
    if how == "mean":
        return sum(values) / len(values)
    return float(min(values) if how == "min" else max(values))


def analyze(items: Sequence[Slice], *, name: str | None = None,
            types: Sequence[str] | None = None, min_time_ns: int | None = None,
            max_time_ns: int | None = None, aggregate_by: str = "name",
            aggregate: str = "sum", order_by: str = "self", top: int = 0) -> Analysis:
    """Filter, aggregate and order a trace's slices (MegEngine's profile_analyze options)."""
    if aggregate_by not in AGGREGATE_BY:
        raise BenchkitError(f"--aggregate-by {aggregate_by!r}: choose one of {AGGREGATE_BY}")
    if aggregate not in AGGREGATES:
        raise BenchkitError(f"--aggregate {aggregate!r}: choose one of {AGGREGATES}")
    ascending = order_by.startswith("+")
    order_key = order_by.lstrip("+-")
    if order_key not in ORDER_KEYS:
        raise BenchkitError(f"--order-by {order_by!r}: choose one of {ORDER_KEYS} "
                            "(prefix + for ascending)")
    try:
        pattern = re.compile(name) if name else None
    except re.error as error:
        raise BenchkitError(f"--name {name!r} is not a regular expression: {error}") from None
    counted = [s for s in items if s.cat not in SKIP_CATEGORIES]
    total = sum(s.self_ns for s in counted)
    chosen = [s for s in counted
              if (pattern is None or pattern.search(s.name))
              and (not types or s.cat in types)
              and (min_time_ns is None or s.dur >= min_time_ns)
              and (max_time_ns is None or s.dur <= max_time_ns)]
    attribute_costs(counted)
    groups: dict[tuple, list[Slice]] = {}
    for s in chosen:
        if aggregate_by == "name":
            key = (s.name, "")
        elif aggregate_by == "name+shapes":
            key = (s.name, _shapes(s))
        else:
            key = (s.region or "(no region)", "")
        groups.setdefault(key, []).append(s)
    rows = []
    for (key, shapes), group in groups.items():
        flops = [s.flops for s in group if s.flops is not None]
        moved = [s.bytes for s in group if s.bytes is not None]
        # A region row holds everything inside it: own work and inclusive work coincide.
        incl = flops if aggregate_by == "region" else [
            s.incl_flops for s in group if s.incl_flops is not None]
        incl_moved = moved if aggregate_by == "region" else [
            s.incl_bytes for s in group if s.incl_bytes is not None]
        # region rows count self time of everything inside, total = the same (no double count)
        rows.append(Row(key, shapes, len(group), _reduce([s.self_ns for s in group], aggregate),
                        _reduce([s.dur for s in group], aggregate) if aggregate_by != "region"
                        else _reduce([s.self_ns for s in group], aggregate),
                        sum(flops) if flops else None, sum(moved) if moved else None,
                        sum(incl) if incl else None, sum(incl_moved) if incl_moved else None))
    rows.sort(key=lambda r: r.key)   # ties read alphabetically (sorts below are stable)
    rows.sort(key=lambda r: r.sort_value(order_key), reverse=not ascending)
    running = 0.0
    for r in rows:
        r.self_pct = 100.0 * r.self_ns / total if total else 0.0
        running += r.self_pct
        r.cum_pct = running
    if top:
        rows = rows[:top]
    return Analysis(rows, total, len(chosen), aggregate_by, aggregate)


def attribute_costs(items: Sequence[Slice]) -> None:
    """Set each slice's own and inclusive (FLOPs, bytes). An op keeps its own estimate only
    when no op beneath it does work (the leaf does it); inclusive sums own work over the op
    and everything beneath it. Unknown costs stay None. Estimates are computed once per
    (name, argument record), which a trace repeats."""
    cache: dict[tuple, tuple] = {}
    for s in items:
        key = (s.name, id(s.args))
        if key not in cache:
            cache[key] = op_cost(s.name, s.args)
        s.flops, s.bytes = cache[key]
        s.incl_flops = s.incl_bytes = None
    for s in items:
        if s.flops:   # a zero-FLOP copy beneath addmm does not take its work
            parent = s.parent
            while parent is not None:
                parent.flops = parent.bytes = None
                parent = parent.parent
    for s in items:
        if s.flops is None:
            continue
        node = s
        while node is not None:
            node.incl_flops = (node.incl_flops or 0) + s.flops
            node.incl_bytes = (node.incl_bytes or 0) + (s.bytes or 0)
            node = node.parent


def _time(ns: float) -> str:
    if ns >= 1e9:
        return f"{ns / 1e9:.3f} s"
    if ns >= 1e6:
        return f"{ns / 1e6:.3f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.3f} us"
    return f"{ns:.0f} ns"


def _si(value: float | None, unit: str) -> str:
    if value is None or not math.isfinite(value):
        return "-"
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            return f"{value / scale:.2f} {prefix}{unit}"
    return f"{value:.0f} {unit}"


def format_analysis(result: Analysis, markdown: bool = False) -> str:
    """An Analysis as a text or markdown table."""
    key_header = {"name": "name", "name+shapes": "name", "region": "region"}[result.aggregate_by]
    headers = [key_header]
    if result.aggregate_by == "name+shapes":
        headers.append("input shapes")
    agg = "" if result.aggregate in ("sum", "count") else f" ({result.aggregate})"
    headers += ["calls", f"self{agg}", f"total{agg}", "self %", "cum %", "FLOPs", "FLOP/s",
                "bytes", "GB/s"]
    inclusive = result.aggregate_by != "region"
    if inclusive:
        headers += ["incl. FLOPs", "incl. FLOP/s"]
    body = []
    for r in result.rows:
        line = [one_line(r.key)] + ([one_line(r.shapes)] if result.aggregate_by == "name+shapes"
                                    else [])
        line += [r.calls, _time(r.self_ns), _time(r.total_ns), f"{r.self_pct:.2f}%",
                 f"{r.cum_pct:.2f}%", _si(r.flops, ""), _si(r.flop_per_s, "FLOP/s"),
                 _si(r.bytes, "B"), f"{r.gb_per_s:.2f}" if r.gb_per_s else "-"]
        if inclusive:
            line += [_si(r.incl_flops, ""), _si(r.incl_flop_per_s, "FLOP/s")]
        body.append(line)
    table = tabulate(body, headers=headers, tablefmt="github" if markdown else "simple",
                     disable_numparse=True)
    note = ("; FLOPs/bytes are the op's own work (FLOP/s over self time), incl. the work "
            "beneath it (over total time)" if inclusive else "")
    return (f"{table}\n\n{result.shown_events} events shown; percentages of the unfiltered "
            f"total self time {_time(result.total_ns)}{note}")
