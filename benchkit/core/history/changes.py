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
hardware, two kinds are told from the values (`runner_kinds`: most series slower at once)
and the slower kind's values taken down before steps are found (`on_one_kind`).
"""
from __future__ import annotations

import dataclasses
import itertools
import json
import math
import warnings
from typing import Any, Hashable, Iterable, Mapping, Sequence

import numpy as np

from benchkit.core.history.series import (Commit, Points, Series, commits_of, relatives_of,
                                          values_of)


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


HOST_NAMED_MACHINES = 5


def named_by_host(runs_per_machine: Iterable[int]) -> bool:
    """Whether machines holding these many runs each look like CI runners named by their
    host (asv's default machine name, and benchkit's): five or more machines, most with one
    or two runs, so that every series is a point or two long."""
    counts = sorted(runs_per_machine)
    return len(counts) >= HOST_NAMED_MACHINES and counts[len(counts) // 2] <= 2


# Kinds of runner that the runs do not name, told from the values (runner_kinds): measured
# on pools made of real histories (benchmarks/perf_history_detection.py --runners), and on
# none of the real histories do they find two kinds.
KIND_MIN_SERIES = 5      # series of a history needed to tell a kind of runner from noise
KIND_WINDOW = 7          # commits on either side of the running median a value is read from
KIND_AGREEMENT = 0.6     # a run is slower when this much more of its series are above than below
KIND_SHARE = (0.1, 0.9)  # the slower kind's share of the runs, to be a kind at all
KIND_CLARITY = 4.0       # the kinds' gap in most series, in that series' own noise
KIND_BLOCK = 2_000_000   # window values whose median is taken at once (16 MB)
KIND_SAMPLE = 64         # series a history's kinds are first judged on


@dataclasses.dataclass(frozen=True)
class RunnerKinds:
    """Runs of one history that most of its series show slower at once, by one gap each: a
    pool of two kinds of runner whose runs do not say which they ran on."""

    slow: frozenset          # the commits run on the slower kind
    gaps: tuple[float, ...]  # per series given, log of how much slower its values were there
    share: float             # the slower kind's share of the commits


def runner_kinds(series: Sequence[tuple[Sequence[Hashable], Sequence[float]]]
                 ) -> RunnerKinds | None:
    """The two kinds of runner of a history (one machine, one environment), from its
    series' commits and values, or None where the values show no such two groups. A run is
    on the slower kind where its series stand furthest above their lower level
    (`_above_lower_level`); where that finds no two kinds, where the share of its series
    above their running median (KIND_WINDOW) exceeds the share below by KIND_AGREEMENT
    (which alone, half and half, flips between the kinds). The kinds must hold KIND_SHARE
    of the runs between them and be KIND_CLARITY noises apart in most series. A series with
    a value of zero or below has no gap (0)."""
    places: dict[Hashable, int] = {}
    known: dict[tuple, np.ndarray] = {}      # series of one history mostly share their commits
    by_length: dict[int, list[tuple[int, np.ndarray, np.ndarray]]] = {}
    for i, (keys, values) in enumerate(series):
        values = np.asarray(values, dtype=float)
        if not len(values) or not np.all(values > 0):
            continue
        keys = tuple(keys)
        at = known.get(keys)
        if at is None:
            at = known[keys] = np.array([places.setdefault(key, len(places)) for key in keys])
        by_length.setdefault(len(values), []).append((i, at, np.log(values)))
    total, keys = sum(map(len, by_length.values())), list(places)
    if total < KIND_MIN_SERIES:
        return None
    on_slow = _above_lower_level(by_length, len(places))
    kinds, every = None, math.ceil(total / KIND_SAMPLE)
    # judged on KIND_SAMPLE series first (no two kinds, the usual answer, is known without a
    # running median of every series), then each series' gap against the running median of
    # the faster kind's values
    if on_slow is not None and (every == 1 or _judged(on_slow, _residuals(
            {n: members[::every] for n, members in by_length.items()}, on_slow), keys,
            len(series))):
        kinds = _judged(on_slow, _residuals(by_length, on_slow), keys, len(series))
    if kinds is None:
        residuals = _residuals(by_length)
        at_all = np.concatenate([at for at, _ in residuals.values()])
        above = np.bincount(at_all, np.concatenate([np.sign(r) for _, r in residuals.values()]),
                            len(places))
        seen = np.bincount(at_all, minlength=len(places))
        on_slow = (seen >= KIND_MIN_SERIES) & (above >= KIND_AGREEMENT * np.maximum(seen, 1))
        kinds = _judged(on_slow, residuals, keys, len(series))
    return kinds


def _residuals(by_length: Mapping[int, list], slow: np.ndarray | None = None
               ) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Each series' log values less their running median (KIND_WINDOW either side, cut at
    the ends; of the runs not `slow` only, where given), by the series' index."""
    from numpy.lib.stride_tricks import sliding_window_view
    out: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    # the running medians of series of one length together, a block at a time: the median
    # copies its windows, 15 values for each one of the block's
    for length, members in by_length.items():
        rows = max(1, KIND_BLOCK // (length * (2 * KIND_WINDOW + 1)))
        for start in range(0, len(members), rows):
            block = members[start:start + rows]
            logs = np.stack([m[2] for m in block])
            kept = logs if slow is None else np.where(
                np.stack([slow[m[1]] for m in block]), np.nan, logs)
            edge = np.full((len(block), KIND_WINDOW), np.nan)
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)   # a window of slow runs only
                local = np.nanmedian(sliding_window_view(np.concatenate(
                    [edge, kept, edge], axis=1), 2 * KIND_WINDOW + 1, axis=1), axis=2)
            for (i, at, _), row, middle in zip(block, logs, local):
                out[i] = (at, row - middle)
    return out


def _above_lower_level(by_length: Mapping[int, list], count: int) -> np.ndarray | None:
    """The runs on the slower kind, half and half too: each series' height above its lower
    level (the second lowest of 2 KIND_WINDOW + 1 values on each side, the higher side: a
    step moves it no later than the step; near an end, the whole side), in its own noise; a
    run's score is its series' median height, and the runs split in two groups of scores
    (Otsu's: the least spread within). None with fewer than ten scored runs."""
    from numpy.lib.stride_tricks import sliding_window_view
    score = np.full((sum(map(len, by_length.values())), count), np.nan)
    side, k = 2 * KIND_WINDOW + 1, 0
    for length, members in by_length.items():
        if length < 2:
            k += len(members)
            continue
        whole = np.arange(length)
        left_whole, right_whole = whole >= side - 1, whole <= length - side
        # series of one length together, a block at a time (the windows are copied)
        rows = max(1, KIND_BLOCK // (length * side))
        for start in range(0, len(members), rows):
            block = members[start:start + rows]
            logs = np.stack([m[2] for m in block])
            edge = np.full((len(block), side - 1), np.inf)
            padded = np.concatenate([edge, logs, edge], axis=1)
            left = np.partition(sliding_window_view(padded[:, :length + side - 1], side,
                                                    axis=1), 1, axis=2)[:, :, 1]
            right = np.partition(sliding_window_view(padded[:, side - 1:], side, axis=1),
                                 1, axis=2)[:, :, 1]
            level = np.where(left_whole & right_whole, np.maximum(left, right),
                             np.where(left_whole, left, np.where(right_whole, right,
                                                                 np.minimum(left, right))))
            noise = np.maximum(np.median(np.abs(np.diff(logs, axis=1)), axis=1)
                               / (0.6745 * math.sqrt(2)), 1e-4)
            heights = (logs - level) / noise[:, None]
            for (_, at, _), height in zip(block, heights):
                score[k, at] = height
                k += 1
    seen = np.sum(~np.isnan(score), axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)        # a run no series has
        # (series that all share their commits, the usual case, need no slow nanmedian)
        middle = (np.median if seen.min() == len(score) else np.nanmedian)(score, axis=0)
    scored = (seen >= KIND_MIN_SERIES) & np.isfinite(middle)
    ordered = np.sort(middle[scored])
    if len(ordered) < 10:
        return None
    # the split that leaves the least squared spread within the two groups
    n = np.arange(1, len(ordered))
    total, squares = np.cumsum(ordered), np.cumsum(ordered ** 2)
    low = squares[:-1] - total[:-1] ** 2 / n
    high = (squares[-1] - squares[:-1]) - (total[-1] - total[:-1]) ** 2 / (len(ordered) - n)
    split = int(np.argmin(low + high))
    return scored & (middle > (ordered[split] + ordered[split + 1]) / 2)


def _judged(on_slow: np.ndarray, residuals: Mapping[int, tuple[np.ndarray, np.ndarray]],
            keys: list, count: int) -> RunnerKinds | None:
    """The kinds `on_slow` marks, if they hold KIND_SHARE of the runs and their gap is
    KIND_CLARITY noises in most series; each series' gap, by index among `count`."""
    share = float(on_slow.sum()) / len(keys)
    if not KIND_SHARE[0] <= share <= KIND_SHARE[1]:
        return None
    gaps, clarity = [0.0] * count, []
    for i, (at, residual) in residuals.items():
        slow = on_slow[at] & ~np.isnan(residual)
        fast = residual[~on_slow[at] & ~np.isnan(residual)]
        if slow.sum() < 2 or len(fast) < 2:
            continue
        gaps[i] = float(np.median(residual[slow]) - np.median(fast))
        clarity.append(gaps[i] / (float(np.median(np.abs(fast - np.median(fast)))) + 1e-9))
    if not clarity or float(np.median(clarity)) < KIND_CLARITY:
        return None
    return RunnerKinds(frozenset(keys[j] for j in np.flatnonzero(on_slow)), tuple(gaps), share)


def on_one_kind(series_list: Sequence[Series], context: Sequence[Series] | None = None
                ) -> tuple[list[Series], dict[tuple, str]]:
    """The wall-time series of each history (machine and environment) whose runs fall into
    two kinds of runner that they do not name (`runner_kinds`, told from all the
    history's series in `context`, default `series_list`), each with its values on the
    slower kind taken down by its own gap; and, per series so changed, what was done.
    Series timed against benchkit's speed probe are left as they are. (Pure: a caller
    holding millions of points pauses the cycle collector around it.)"""
    def series_key(series: Series) -> tuple:
        return (series.benchmark, series.metric, series.machine, series.environment)

    groups: dict[tuple, list[Series]] = {}
    for series in series_list if context is None else context:
        if (str(series.metric) == "time" and series.points
                and relatives_of(series.points) is None):
            groups.setdefault((series.machine, series.environment), []).append(series)
    gaps: dict[tuple, tuple[frozenset, float, int]] = {}
    for members in groups.values():
        kinds = runner_kinds([([c.sha for c in commits_of(s.points)], values_of(s.points))
                              for s in members])
        if kinds is not None:
            gaps.update({series_key(s): (kinds.slow, gap, len(kinds.slow))
                         for s, gap in zip(members, kinds.gaps)})
    out, notes = [], {}
    for series in series_list:
        key = series_key(series)
        if not gaps.get(key, (0, 0.0))[1]:
            out.append(series)
            continue
        slow, gap, count = gaps[key]
        scale = math.exp(-gap)
        out.append(dataclasses.replace(series, points=Points.of(
            p._replace(value=p.value * scale, low=p.low * scale, high=p.high * scale)
            if p.commit.sha in slow else p for p in series.points)))
        notes[key] = (f"; {count} of this history's runs were slower in most of its series "
                      f"at once (a second kind of runner?): this series' values there taken "
                      f"{abs(1 - scale):.0%} {'down' if scale < 1 else 'up'}")
    return out, notes


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
