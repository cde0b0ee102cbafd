"""Environments (pure): what sets one machine's series apart, and where a benchmark moved
from one to another.

Environment changes: where a machine's benchmark moved from one environment (a Python, a
library version, an asv environment, hardware of another kind) to another. Series never pool
two environments, so such a move is never a step; it is listed as what it is.

Hardware: a machine name is a label its owner chose. A pool of CI runners shares one
(`asv machine --machine gh-runner`) while its runs land on CPUs of several kinds, each at
its own speed. asv records the hardware with every results file (`params`: arch, cpu,
num_cpu, os, ram); benchkit's own fingerprints keep the CPU model, its count and the
architecture. Where one machine name's runs in one environment differ in architecture, CPU
or CPU count, each kind is a series of its own, its environment named with what differs
(`py3.11 · cpu Intel(R) Xeon(R) Platinum 8272CL`). One series of runs on two CPUs 30 %
apart, half on each, reads as noise that no 50 % step clears
(benchmarks/perf_history_detection.py --runners). Where the runs do not name their
hardware, two kinds are told from the values (`runners`).
"""
from __future__ import annotations

import dataclasses
import itertools
import json
import math
from typing import Any, Iterable, Mapping, Sequence

from benchkit.core.history.series import Commit, Series, commits_of


@dataclasses.dataclass(frozen=True)
class EnvironmentChange:
    """A benchmark on one machine measured in environment `after` from `commit` on, where
    it was measured in `before` up to `previous`."""

    benchmark: str
    metric: str
    machine: str
    before: str
    after: str
    previous: Commit
    commit: Commit
    value_before: float
    value_after: float

    def to_json(self) -> dict[str, Any]:
        """As `history regressions --json` lists it (kind "environment")."""
        return {"kind": "environment", "benchmark": self.benchmark, "metric": self.metric,
                "machine": self.machine, "environment_before": self.before,
                "environment_after": self.after, "previous_commit": self.previous.sha,
                "commit": self.commit.sha, "before": self.value_before,
                "after": self.value_after,
                "change": (self.value_after / self.value_before - 1
                           if self.value_before else None)}


def _point_key(point, series: Series) -> tuple:
    """Where a point stands in history order (first-parent position, else UTC date)."""
    c = point.commit
    return (c.order if not series.by_date and c.order is not None else -1, c.date, c.sha)


def _first_key(series: Series) -> tuple:
    return _point_key(series.points[0], series)


def environment_changes(series_list: Sequence[Series]) -> list[EnvironmentChange]:
    """Each point where a (benchmark, metric, machine) moved to another environment: an
    environment's first commit comes after the last of another, the one that ended latest
    before it (environments measured side by side, as an asv matrix does or a pool of
    runners of two kinds, overlap and are no change)."""
    out = []
    keyed = sorted((s for s in series_list if s.points),
                   key=lambda s: (s.benchmark, str(s.metric), s.machine))
    for (benchmark, metric, machine), group in itertools.groupby(
            keyed, key=lambda s: (s.benchmark, str(s.metric), s.machine)):
        ordered = sorted(group, key=_first_key)
        for i, new in enumerate(ordered[1:], 1):
            # ended before it by position or date (a tie of dates says nothing of which
            # came first; the commit ids only keep the sort stable)
            ended = [old for old in ordered[:i]
                     if _point_key(old.points[-1], old)[:2] < _first_key(new)[:2]]
            if not ended:
                continue
            old = max(ended, key=lambda s: _point_key(s.points[-1], s))
            last = old.points[-1]
            out.append(EnvironmentChange(benchmark, metric, machine, old.environment,
                                         new.environment, last.commit, new.points[0].commit,
                                         last.value, new.points[0].value))
    return out


# (field as labelled, JSON path in the run's stored fingerprint): asv's machine params, then
# benchkit's own fingerprint's. Not os or ram: a kernel update renames the os and VMs of one
# kind report RAM a few MB apart, so splitting on them, as asv's graphs do, cuts a pool's
# history into pieces.
FIELDS = (("arch", "$.machine.arch"), ("cpu", "$.machine.cpu"),
          ("num_cpu", "$.machine.num_cpu"), ("cpu", "$.cpu_model"), ("num_cpu", "$.cpu_count"),
          ("arch", "$.machine"))
LONGEST = 120     # characters of a value kept in a label


def hardware_sql(column: str) -> str:
    """SQL that reads FIELDS out of the JSON text in `column` as one JSON array (NULL where
    the text is not JSON): read by `hardware_of`."""
    paths = ", ".join(f"'{path}'" for _, path in FIELDS)
    return f"CASE WHEN json_valid({column}) THEN json_extract({column}, {paths}) END"


def hardware_of(extracted: str | None) -> tuple[tuple[str, str], ...]:
    """The (field, value) pairs a run recorded, from `hardware_sql`'s array: values that
    are text or numbers, printable and cut to LONGEST characters; a field given twice (asv's
    and the fingerprint's) keeps the first."""
    try:
        values = json.loads(extracted) if extracted else []
    except (ValueError, RecursionError):
        return ()
    if not isinstance(values, list):
        return ()
    found: dict[str, str] = {}
    for (field, _), value in zip(FIELDS, values):
        if field in found or isinstance(value, bool) or not isinstance(value, (str, int, float)):
            continue
        if isinstance(value, float) and not math.isfinite(value):
            continue
        text = " ".join(str(value).split())
        if text and text.isprintable():
            found[field] = text[:LONGEST]
    return tuple(sorted(found.items()))


def environment_labels(runs: Mapping[Any, tuple[str, str, tuple[tuple[str, str], ...]]]
                       ) -> dict[Any, str]:
    """Each run's environment as its series names it: `runs` maps a run to (machine,
    environment, hardware_of(...)). Where the runs of one machine and environment recorded
    different values of a field, each run's environment gains the values of the fields that
    differ (`?` where a run recorded none: it may have run on either); elsewhere it stays as
    it is (a run that recorded nothing is not set apart from runs that agree)."""
    groups: dict[tuple[str, str], list[Any]] = {}
    for run, (machine, env, _) in runs.items():
        groups.setdefault((machine, env), []).append(run)
    labels = {}
    for (_, env), members in groups.items():
        kinds = [dict(runs[run][2]) for run in members]
        varying = sorted(field for field in {f for kind in kinds for f in kind}
                         if len({kind[field] for kind in kinds if field in kind}) > 1)
        for run, kind in zip(members, kinds):
            labels[run] = label(env, [(field, kind.get(field, "?")) for field in varying])
    return labels


def labelled_runs(rows: Iterable[tuple]) -> list[tuple]:
    """Runs as (id, commit, machine, environment, measured at, `hardware_sql`'s array)
    -> (id, commit, machine, environment, the environment its series names, measured at)."""
    rows = list(rows)
    labels = environment_labels({row[0]: (row[2], row[3], hardware_of(row[5])) for row in rows})
    return [(id_, sha, host, env, labels[id_], at) for id_, sha, host, env, at, _ in rows]


def label(env: str, differing: Iterable[tuple[str, str]]) -> str:
    """An environment named with the hardware fields that set its runs apart."""
    parts = [f"{field} {value}" for field, value in differing]
    return " · ".join(([env] if env else []) + parts)


def in_environment(named: str, env: str) -> bool:
    """Whether a series (or step) whose environment is `named` (a `label`) is of `env`:
    the environment as the runs recorded it, or the whole label."""
    return named == env or (bool(env) and named.startswith(env + " · "))


HOST_NAMED_MACHINES = 5


def named_by_host(runs_per_machine: Iterable[int]) -> bool:
    """Whether machines holding these many runs each look like CI runners named by their
    host (asv's default machine name, and benchkit's): five or more machines, most with one
    or two runs, so that every series is a point or two long."""
    counts = sorted(runs_per_machine)
    return len(counts) >= HOST_NAMED_MACHINES and counts[len(counts) // 2] <= 2


def shared_places(series_list: Iterable[Series]) -> dict[int, set[str]]:
    """The places on the first-parent line that more than one commit of a series holds, and
    those commits: results of two lines of history in one database (a branch's beside
    main's, each counted on its own line), which a series can only order by date."""
    shared: dict[int, set[str]] = {}
    for series in series_list:
        if series.by_date:
            continue
        holders: dict[int, set[str]] = {}
        for commit in commits_of(series.points):
            holders.setdefault(commit.order, set()).add(commit.sha)
        for place, shas in holders.items():
            if len(shas) > 1:
                shared.setdefault(place, set()).update(shas)
    return shared
