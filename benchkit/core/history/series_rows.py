"""Series from the history database's rows (pure): the columns of each series gathered as
its observations are read, then ordered by commit (first-parent place, else UTC date) with
the commits where it only failed. The database (system/history_db.py) reads the rows; no
file or process here."""
from __future__ import annotations

import operator
from array import array
from typing import Iterable, NamedTuple, Sequence

from benchkit.core.history.series import Commit, Point, Points, Series, Status
from benchkit.core.metrics.metric import history_metric


class _Rows(NamedTuple):
    """One series' observations with a value, as columns, in the order read."""

    commits: list
    value: array
    low: array
    high: array
    units: array
    relatives: list
    measured: list

    @classmethod
    def empty(cls) -> "_Rows":
        return cls([], array("d"), array("d"), array("d"), array("q"), [], [])


def _series_from_rows(key: tuple, rows: _Rows, failures: Sequence[tuple] = (), *,
                      unit: str = "", evidence: bool = False) -> Series:
    """One series from the history database's observations of it (`key`: benchmark,
    metric, machine, environment; `rows`: each observation with a value; `failures`:
    Commit, measured_at, status of each without; `evidence`: whether results-file items
    are stored for it): a point per commit that has values, in commit order
    (first-parent position when every commit has one, else UTC date, then first
    measured), and the commits where it only failed."""
    benchmark, metric, machine, env = key
    if not failures and len(rows.commits) > 1 and len(
            {commit.sha for commit in rows.commits}) == len(rows.commits):
        return _one_a_commit(key, rows, unit, evidence)
    at: dict[str, list[int]] = {}              # sha -> its observations, in the order given
    commits: dict[str, Commit] = {}
    first: dict[str, str] = {}
    for i, commit in enumerate(rows.commits):
        sha = commit.sha
        found = at.get(sha)
        if found is None:
            at[sha] = [i]
            commits[sha] = commit
            first[sha] = rows.measured[i]
        else:
            found.append(i)
            first[sha] = min(first[sha], rows.measured[i])
    statuses: dict[str, str] = {}
    for commit, measured_at, status in failures:
        statuses.setdefault(commit.sha, status)
        if commit.sha not in commits:
            commits[commit.sha] = commit
            first[commit.sha] = measured_at
        else:
            first[commit.sha] = min(first[commit.sha], measured_at)
    by_date = any(c.order is None for c in commits.values())
    shas = list(commits)
    keys = _order_keys([commits[sha] for sha in shas], [first[sha] for sha in shas], by_date)
    ordered = [shas[i] for i in sorted(range(len(shas)), key=keys.__getitem__)]
    picked = [at[sha] for sha in ordered if sha in at]
    if all(len(found) == 1 for found in picked):
        # one observation a commit (an import with failures): its columns, in commit order
        points = _in_order(rows, [found[0] for found in picked])
    else:
        points = Points.of(
            Point(rows.commits[found[0]], rows.value[found[0]], rows.low[found[0]],
                  rows.high[found[0]], rows.units[found[0]], 1, rows.relatives[found[0]])
            if len(found) == 1 else Point.of_values(rows.commits[found[0]], [
                (rows.value[i], rows.low[i], rows.high[i], rows.units[i], rows.relatives[i])
                for i in found]) for found in picked)
    failed = tuple((commits[sha], Status(statuses[sha])) for sha in ordered
                   if sha in statuses and sha not in at)
    return Series(benchmark, history_metric(metric), machine, points, env, unit, failed,
                  by_date, evidence)


def _order_keys(commits: Sequence[Commit], first: Sequence[str], by_date: bool) -> list:
    """Each commit's place in a series: (first-parent position, date, first measured), or
    by UTC date where a commit has no position."""
    if by_date:
        return [(c.date, -1 if c.order is None else c.order, m) for c, m in zip(commits, first)]
    return [(c.order, c.date, m) for c, m in zip(commits, first)]


def _in_order(rows: _Rows, index: list[int]) -> Points:
    """The points of rows of one observation a commit, in the order of `index`: each
    column reordered by one itemgetter (not a list per commit)."""
    columns: tuple = (rows.commits, rows.value, rows.low, rows.high, rows.units, rows.relatives)
    if index != list(range(len(index))):
        take = operator.itemgetter(*index)         # len(index) > 1 here: gives a tuple
        columns = tuple(take(column) for column in columns)
    return Points(*columns[:5], array("q", [1]) * len(index), columns[5])


def _one_a_commit(key: tuple, rows: _Rows, unit: str, evidence: bool) -> Series:
    """_series_from_rows where every commit has one observation and none failed (an
    import): the same order (a stable sort of the same keys) without a dict entry or list
    per commit (480,000 values: 4.0 -> 1.0 s)."""
    by_date = any(commit.order is None for commit in rows.commits)
    keys = _order_keys(rows.commits, rows.measured, by_date)
    points = _in_order(rows, sorted(range(len(keys)), key=keys.__getitem__))
    return Series(key[0], history_metric(key[1]), key[2], points, key[3], unit, (), by_date,
                  evidence)


def series_from_observations(values: Iterable[tuple], failures: Iterable[tuple],
                             extras: Iterable[tuple], runs: dict[int, tuple],
                             names: dict[int, tuple[str, str]]) -> list[Series]:
    """Every series of a history database's observations, sorted by benchmark, metric,
    machine and environment. The rows, read by the caller: `values` (bench, run, value,
    low, high, units, relative) of each observation with a value, low or high None where it
    is the value; `failures` (bench, run, status) of each without; `extras` (bench, run,
    unit, whether evidence is stored) of the few that carry them. `runs`: run id -> (Commit,
    machine, environment, measured_at); `names`: benchmark id -> (name, metric). Rows of
    other runs or benchmarks are passed over. Each value goes into its series' columns as
    it is read (4,000,000 values: a Point each peaked at 0.7 GiB; columns hold about 50
    bytes a value), and each series is made as its columns are let go of."""
    groups: dict[tuple, tuple[_Rows, list, list]] = {}

    def lists_of(bench: int, at: tuple) -> tuple[_Rows, list, list]:
        key = (bench, at[1], at[2])
        return groups.get(key) or groups.setdefault(key, (_Rows.empty(), [], []))

    # each group's columns' bound appends, by machine and environment, then benchmark: a
    # file's rows come together, so the run (and its machine's adders) is looked up once
    adders: dict[tuple, dict[int, tuple]] = {}
    last_run, at, of_run = None, None, {}
    for bench, run, value, low, high, units, relative in values:
        if run != last_run:
            last_run, at = run, runs.get(run)
            if at is not None:
                of_run = adders.setdefault((at[1], at[2]), {})
        if at is None:
            continue
        add = of_run.get(bench)
        if add is None:
            if bench not in names:
                continue
            add = of_run[bench] = tuple(column.append for column in lists_of(bench, at)[0])
        add[0](at[0])
        add[1](value)
        add[2](value if low is None else low)
        add[3](value if high is None else high)
        add[4](units)
        add[5](relative)
        add[6](at[3])
    adders.clear()
    for bench, run, status in failures:
        at = runs.get(run)
        if at is not None and bench in names:
            lists_of(bench, at)[1].append((at[0], at[3], status))
    for bench, run, unit, has_evidence in extras:
        at = runs.get(run)
        if at is not None and bench in names:
            lists_of(bench, at)[2].append((unit, has_evidence))
    out = []
    for key in sorted(groups, key=lambda k: (*names[k[0]], k[1], k[2])):
        rows, failed, extra = groups.pop(key)   # each let go of as it is made
        out.append(_series_from_rows(
            (*names[key[0]], key[1], key[2]), rows, failed,
            unit=next((u for u, _ in reversed(extra) if u), ""),
            evidence=any(e for _, e in extra)))
    return out
