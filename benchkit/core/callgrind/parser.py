"""Pure parser of the callgrind.out format (valgrind manual, "Callgrind Format Specification").

One pass gives exclusive and inclusive costs per function for every part (dump) in the file,
with name compression, fl/fi/fe/fn, ob/cob, cfi/cfl/cfn, calls= lines and positions handled.
Attribution follows callgrind_annotate: a function's name is "file:function", where file is the
current fl/fi/fe; the inclusive cost of a function that is called is the sum of the costs of
the calls into it, and of a root function its own cost plus its calls.
"""
from __future__ import annotations

import dataclasses
from typing import Iterable

from benchkit.errors import CallgrindParseError

Costs = tuple[int, ...]


@dataclasses.dataclass(frozen=True)
class Profile:
    """One dump (part) of a callgrind.out file. Keys are 'file:function [object]'."""

    events: tuple[str, ...]
    exclusive: dict[str, Costs]
    inclusive: dict[str, Costs]
    totals: Costs
    trigger: str | None = None     # "desc: Trigger:" of the dump (client request name etc.)
    header: dict[str, str] = dataclasses.field(default_factory=dict)


_POSITION_START = frozenset("0123456789+-*")
_CALL_SPECS = ("calls", "jump", "jcnd")


def _add(table: dict, key, costs: list[int]) -> None:
    current = table.get(key)
    if current is None:
        table[key] = list(costs)
    else:
        for i, c in enumerate(costs):
            current[i] += c


class _Part:
    def __init__(self, header: dict[str, str]):
        self.header = header
        self.events: tuple[str, ...] = ()
        self.exclusive: dict[tuple[str, str], list[int]] = {}
        self.calls_out: dict[tuple[str, str], list[int]] = {}   # caller -> sum of call costs
        self.calls_in: dict[tuple[str, str], list[int]] = {}    # callee -> sum of call costs
        self.objects: dict[tuple[str, str], str] = {}
        self.totals: list[int] | None = None
        self.summary: list[int] | None = None


def _costs(tokens: list[str], start: int, n: int) -> list[int]:
    values = [int(t, 0) if t[:2] == "0x" else int(t) for t in tokens[start:start + n]]
    if len(tokens) > start + n:
        raise ValueError(f"cost line has {len(tokens) - start} costs but {n} events")
    return values + [0] * (n - len(values))


def _finish(part: _Part, source: str, lineno: int) -> Profile:
    if not part.events:
        raise CallgrindParseError(source, lineno, "no 'events:' line before the costs")
    n = len(part.events)
    exclusive: dict[str, Costs] = {}
    inclusive: dict[str, Costs] = {}
    zero = [0] * n
    names = set(part.exclusive) | set(part.calls_in) | set(part.calls_out)
    for key in names:
        obj = part.objects.get(key, "???")
        label = f"{key[0]}:{key[1]} [{obj}]"
        self_cost = part.exclusive.get(key, zero)
        if key in part.exclusive:
            exclusive[label] = tuple(self_cost)
        if key in part.calls_in:
            inclusive[label] = tuple(part.calls_in[key])
        else:
            out = part.calls_out.get(key, zero)
            inclusive[label] = tuple(a + b for a, b in zip(self_cost, out))
    if part.totals is not None:
        totals = tuple(part.totals)
    elif part.summary is not None:
        totals = tuple(part.summary)
    else:
        totals = tuple(sum(c[i] for c in exclusive.values()) for i in range(n))
    trigger = None
    for desc in part.header.get("desc", "").split("\n"):
        if desc.startswith("Trigger:"):
            trigger = desc[len("Trigger:"):].strip()
    return Profile(part.events, exclusive, inclusive, totals, trigger,
                   {k: v for k, v in part.header.items()})


def parse(lines: Iterable[str] | str, source: str = "<callgrind.out>") -> list[Profile]:
    """Parse callgrind.out text into one Profile per part.

    Raises CallgrindParseError naming `source` and the line for malformed input.
    """
    if isinstance(lines, str):
        lines = lines.splitlines()
    names: dict[str, dict[str, str]] = {"fl": {}, "fn": {}, "ob": {}}
    kinds = {"fl": "fl", "fi": "fl", "fe": "fl", "cfi": "fl", "cfl": "fl", "jfi": "fl",
             "fn": "fn", "cfn": "fn", "jfn": "fn", "ob": "ob", "cob": "ob"}

    def resolve(spec: str, value: str) -> str:
        table = names[kinds[spec]]
        if value[:1] == "(":
            close = value.find(")")
            if close < 0:
                raise ValueError(f"unclosed name id in {spec}={value}")
            ident, rest = value[1:close], value[close + 1:].strip()
            if rest:
                table[ident] = rest
                return rest
            if ident not in table:
                raise ValueError(f"{spec}=({ident}) refers to a name id never defined")
            return table[ident]
        return value

    parts: list[Profile] = []
    part: _Part | None = None
    header: dict[str, str] = {}
    in_body = False
    ob = cur_file = fn = "???"
    cfile: str | None = None
    cob: str | None = None
    callee: tuple[str, str] | None = None
    pending_call = False
    key = (cur_file, fn)
    lineno = 0
    n_events = 1
    n_pos = 1
    exclusive = calls_in = calls_out = None
    try:
        for lineno, line in enumerate(lines, 1):
            if not line or line[0] == "#":
                if line.startswith("# callgrind format") and in_body and part is not None:
                    parts.append(_finish(part, source, lineno))
                    part, in_body, header = None, False, {}
                continue
            first = line[0]
            if first in _POSITION_START or line[:2] == "0x":
                if part is None or not part.events:
                    raise ValueError("cost line before 'events:'")
                in_body = True
                tokens = line.split()
                if n_events == 1 and len(tokens) <= n_pos + 1:
                    value = tokens[n_pos] if len(tokens) > n_pos else "0"
                    costs = [int(value, 0) if value[:2] == "0x" else int(value)]
                else:
                    costs = _costs(tokens, n_pos, n_events)
                if pending_call:
                    _add(calls_out, key, costs)
                    _add(calls_in, callee, costs)
                    pending_call = False
                else:
                    current = exclusive.get(key)
                    if current is None:
                        exclusive[key] = costs
                        part.objects.setdefault(key, ob)
                    elif n_events == 1:
                        current[0] += costs[0]
                    else:
                        for i, c in enumerate(costs):
                            current[i] += c
                continue
            eq = line.find("=")
            colon = line.find(":")
            spec = line[:eq] if eq > 0 and (colon < 0 or eq < colon) else None
            if spec in kinds or spec in _CALL_SPECS:
                value = line[eq + 1:]
                if part is None:
                    raise ValueError(f"'{spec}=' before the header ('events:')")
                in_body = True
                if spec == "fn":
                    fn = resolve(spec, value)
                    key = (cur_file, fn)
                elif spec == "fl":
                    cur_file = resolve(spec, value)
                    key = (cur_file, fn)
                elif spec in ("fi", "fe"):
                    cur_file = resolve(spec, value)
                    key = (cur_file, fn)
                elif spec == "ob":
                    ob = resolve(spec, value)
                elif spec == "cob":
                    cob = resolve(spec, value)
                elif spec in ("cfi", "cfl"):
                    cfile = resolve(spec, value)
                elif spec == "cfn":
                    callee = (cfile if cfile is not None else cur_file, resolve(spec, value))
                    part.objects.setdefault(callee, cob if cob is not None else ob)
                    cfile = cob = None
                elif spec == "calls":
                    if callee is None:
                        raise ValueError("calls= without a preceding cfn=")
                    int(value.split()[0])
                    pending_call = True
                elif spec in ("jfi", "jfn"):
                    resolve(spec, value)
                continue
            if colon > 0:
                name, value = line[:colon].strip(), line[colon + 1:].strip()
                if name in ("totals", "summary"):
                    if part is None or not part.events:
                        raise ValueError(f"'{name}:' before 'events:'")
                    values = _costs(value.split(), 0, n_events)
                    if name == "totals":
                        part.totals = values
                    else:
                        part.summary = values
                    continue
                if in_body and name in ("version", "creator", "pid", "cmd", "part"):
                    # A new part starts (combined dumps): close the previous one.
                    parts.append(_finish(part, source, lineno))
                    part, in_body, header = None, False, {}
                    ob = cur_file = fn = "???"
                    key = (cur_file, fn)
                if name == "desc" and "desc" in header:
                    header["desc"] += "\n" + value
                else:
                    header[name] = value
                if part is None:
                    part = _Part(header)
                if name == "events":
                    part.events = tuple(value.split())
                    if not part.events:
                        raise ValueError("'events:' names no event")
                    n_events = len(part.events)
                    exclusive, calls_in, calls_out = part.exclusive, part.calls_in, part.calls_out
                elif name == "positions":
                    n_pos = len(value.split()) or 1
                continue
            raise ValueError(f"unrecognised line {line[:60]!r}")
    except (ValueError, IndexError, KeyError, TypeError) as error:
        raise CallgrindParseError(source, lineno, str(error)) from None
    if part is not None:
        if pending_call:
            raise CallgrindParseError(source, lineno, "file ends after calls= without its cost")
        if part.events or in_body:
            parts.append(_finish(part, source, lineno))
    if not parts:
        raise CallgrindParseError(source, lineno, "no profile data (not a callgrind.out file?)")
    return parts
