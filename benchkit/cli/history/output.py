"""How the history commands say what they found: values in their metric's unit, where a
series lives (machine, environment), warnings, and which --fail-on gates a history can
judge."""
from __future__ import annotations

import sys
from typing import Iterable

from benchkit.core.history.machine.newest_spell import held_by_machine
from benchkit.core.history.machine.slower_share import held_by_share
from benchkit.core.history.machine.slower_stretches import held_by_stretch_spell
from benchkit.core.text import printable
from benchkit.errors import BenchkitError


def format_value(metric, value: float, unit: str = "") -> str:
    """A value of `metric` as people read it (time, bytes, counts, a track's unit)."""
    from benchkit.core.metrics.metric import metric_named
    return metric_named(metric).shown(value, unit)


def place(series_or_step) -> str:
    """'machine, environment' of a series or a step."""
    env = getattr(series_or_step, "environment", "")
    return printable(series_or_step.machine) + (f", {printable(env)}" if env else "")


def warn_by_date(series_list) -> None:
    """One line on stderr when some series are ordered by commit date."""
    if any(s.by_date for s in series_list):
        print("warning: some series are ordered by commit date (UTC), not by the "
              "repository's history; `benchkit history import-asv --repo DIR` or `history "
              "add` inside the checkout records each commit's position (a shallow clone, "
              "as CI makes by default, records none: fetch its whole history)",
              file=sys.stderr)


def warn_shared_places(series_list) -> None:
    """One line on stderr when commits of two lines of history share places in a series."""
    from benchkit.core.history.changes import shared_places
    shared = shared_places(series_list)
    if shared:
        place = min(shared)
        print(f"warning: {len(shared)} place(s) on the first-parent line are held by more than "
              f"one commit (place {place}: {', '.join(sorted(s[:12] for s in shared[place]))}): "
              "results of more than one branch, ordered by date among themselves; keep one "
              "branch's results in a database (--db)", file=sys.stderr)


def warn_host_named(per_machine: Iterable[int], counted: str, remedy: str) -> None:
    """One line on stderr when the machines look like CI runners each named by its host
    (core/history/changes.named_by_host): `per_machine` counts each machine's `counted`
    (runs, commits), `remedy` says how to read them as one machine."""
    from benchkit.core.history.changes import named_by_host
    counts = list(per_machine)
    if named_by_host(counts):
        print(f"warning: {len(counts)} machines, most with one or two {counted}: CI runners "
              f"each named by its host? Their series are a point or two long and show no "
              f"step; {remedy} to read them as one machine (runs on different CPUs still make "
              "series of their own)", file=sys.stderr)


def check_gates(gates, series_list) -> None:
    """Every --fail-on gate must be judged on something the history holds; a gate that
    cannot be is an error, never a silent pass."""
    held = {str(s.metric) for s in series_list}
    for gate in gates:
        wanted = gate.series
        if wanted is None:
            raise BenchkitError(f"--fail-on {str(gate)!r}: the history keeps no "
                                f"{gate.name} figures (memory counts stay in results "
                                "files: gate them with `benchkit compare`); use slower>N%, "
                                "instructions>N%, peak>N% or track>N%")
        if not gate.relative:
            raise BenchkitError(f"--fail-on {str(gate)!r}: history steps are relative; "
                                f"write it as {gate.name}>N%")
        if wanted not in held:
            raise BenchkitError(f"--fail-on {str(gate)!r}: no {wanted} series "
                                f"{'match the filters' if held else 'in the history'}, so "
                                "the gate cannot be judged; drop it or add such results")


def breaks_a_gate(step, gates) -> bool:
    """Whether a step goes beyond a --fail-on gate on its metric."""
    return any(g.series == str(step.metric) and step.change > g.limit for g in gates)


def shared_json(group) -> dict | None:
    """A step's `shared` in `regressions --json`: the shared step it is part of, or None."""
    return None if group is None else {"series": group.count, "of": group.series,
                                       "after": group.after.sha, "through": group.through.sha}


def shared_line(group) -> str:
    """One line for a step many series of a machine share (steps.SharedStep)."""
    low, high = group.extremes
    return (f"shared step [{group.metric}, {printable(group.machine)}]: {group.count} of "
            f"{group.series} series {'up' if group.up else 'down'} ({low:+.1%} .. "
            f"{high:+.1%}) in {group.after.sha[:12]}..{group.through.sha[:12]}: one "
            "change they have in common? (code they share, a dependency, or the machine)")


def summary_line(shown, hidden: int, series: int, changes: int, broken: int,
                 shared: int = 0) -> str:
    """The last line of `history regressions`: what it found, in how many series."""
    placed = sum(1 for s in shown if s.placed)
    slower = sum(1 for s in shown if s.change > 0)
    where = len({(s.benchmark, str(s.metric), s.machine, s.environment) for s in shown})
    parts = [f"{len(shown)} step(s) in {where} of {series} series ({slower} up, "
             f"{len(shown) - slower} down; {len(shown) - placed} not placed)"]
    if broken:
        parts.append(f"{broken} beyond a --fail-on gate")
    pending = sum(1 for s in shown if s.awaiting)
    machine = sum(1 for s in shown if s.awaiting and held_by_machine(s))
    share = sum(1 for s in shown if s.awaiting and held_by_share(s))
    spell = sum(1 for s in shown if s.awaiting and held_by_stretch_spell(s))
    if pending:
        reasons = ([f"{spell} next to a stretch most of the machine's series ran slower at "
                    "once: --confirm"] if spell else []) + (
            [f"{share} where the machine ran slower more often after them: --confirm"]
            if share else [])
        if pending > share + spell:
            reasons.insert(0, "the newest commits: --confirm, or more commits" + (
                f"; {machine} of them there because most of the machine's series ran slower "
                "at once" if machine else ""))
        parts.append(f"{pending} pending ({'; '.join(reasons)})")
    if hidden:
        parts.append(f"{hidden} transient not shown (--all lists them)")
    if shared:
        parts.append(f"{shared} shared by many series")
    if changes:
        parts.append(f"{changes} environment change(s)")
    return "; ".join(parts)


def narrowing(args, names=("benchmark", "machine", "env", "metric")) -> str:
    """The filters a command was given, as `--machine 'x' --env 'y'`."""
    given = [(f"--{name}", getattr(args, name, None)) for name in names]
    return " ".join(f"{flag} {str(value)!r}" for flag, value in given if value is not None)


def held(found: list) -> str:
    """What the history holds, for an error that names a filter matching nothing."""
    def listed(names: set, most: int = 12) -> str:
        names = sorted(printable(n) for n in names if n)
        return ", ".join(names[:most]) + (f" and {len(names) - most} more"
                                          if len(names) > most else "") if names else "none"
    return (f"machines held: {listed({m for s in found for m in s.machines})}; environments: "
            f"{listed({e for s in found for e in s.environments})}; benchmarks: "
            f"{listed({s.benchmark for s in found})}")
