"""Pure merge of externally recorded events into a trace (seed 004).

E.g. device-kernel timings recorded by an extension backend: they go on their own track
(a process of their own), each bound to the host op that launched it by a flow arrow
(`s` inside the host slice, `f` with "bp": "e" at the kernel's start).
"""
from __future__ import annotations

import copy
from decimal import Decimal
from typing import Any, Sequence

from benchkit.errors import TraceError
from benchkit.core.trace.events import slices, to_ns, trace_events


def _us(ns: int) -> Decimal:
    return Decimal(ns) / 1000


def _find_host(host_slices, spec: Any, where: str):
    if not isinstance(spec, dict):
        raise TraceError(f"{where}: 'host' must be an object ({{'external_id': N}} or "
                         f"{{'name': ..., 'index': N}}), got {type(spec).__name__}")
    if "external_id" in spec:
        for s in host_slices:
            if s.args.get("External id") == spec["external_id"]:
                return s
        raise TraceError(f"{where}: no host op with External id {spec['external_id']}")
    if "name" in spec:
        matches = [s for s in host_slices if s.name == spec["name"]]
        index = spec.get("index", 0)
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            raise TraceError(f"{where}: host 'index' must be a whole number >= 0, got "
                             f"{index!r}")
        if index < len(matches):
            return matches[index]
        raise TraceError(f"{where}: host op {spec['name']!r} occurs {len(matches)} times, "
                         f"no index {index}")
    raise TraceError(f"{where}: 'host' needs 'external_id' or 'name' (+ optional 'index')")


def add_device_events(trace: dict, events: Sequence[dict], track: str = "device",
                      category: str = "kernel") -> dict:
    """A new trace with `events` ({name, ts, dur [us], host: {...}, args?}) on a `track`
    process, and a flow from each launching host op to its event."""
    out = copy.deepcopy(trace)
    evs = trace_events(out)
    host_slices = [s for s in slices(trace, keep_args=None) if s.cat not in ("Trace",)]
    pid = f"{track} (benchkit merge)"
    tid = f"{track} stream"
    evs += [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": track}},
            {"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0,
             "args": {"sort_index": 1_000_000}},
            {"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": tid}}]
    used_ids = {e.get("id") for e in evs if isinstance(e, dict) and e.get("ph") in "stf"}
    next_id = 1
    for n, item in enumerate(events):
        if not isinstance(item, dict):
            raise TraceError(f"device event #{n} is {type(item).__name__} {item!r:.40}; each "
                             "must be an object {name, ts, dur, host}")
        where = f"device event #{n} ({item.get('name')!r})"
        if "ts" not in item or "dur" not in item or "name" not in item:
            raise TraceError(f"{where}: needs 'name', 'ts' and 'dur' (microseconds)")
        try:
            ts = to_ns(item["ts"])
            dur = to_ns(item["dur"])
        except TraceError as error:
            raise TraceError(f"{where}: {error}") from None
        if dur < 0:
            raise TraceError(f"{where}: negative duration")
        evs.append({"ph": "X", "cat": category, "name": item["name"], "pid": pid, "tid": tid,
                    "ts": _us(ts), "dur": _us(dur), "args": dict(item.get("args") or {})})
        if item.get("host") is not None:
            host = _find_host(host_slices, item["host"], where)
            if ts < host.ts:
                raise TraceError(f"{where}: starts before its host op {host.name!r} "
                                 "(clocks not aligned?)")
            while next_id in used_ids:
                next_id += 1
            flow = {"cat": "benchkit_launch", "name": "launch", "id": next_id}
            used_ids.add(next_id)
            evs.append({**flow, "ph": "s", "pid": host.pid, "tid": host.tid,
                        "ts": _us(host.ts)})
            evs.append({**flow, "ph": "f", "bp": "e", "pid": pid, "tid": tid, "ts": _us(ts)})
    return out
