"""Kinds of runner that the runs do not name, told from the values (pure).

A pool of CI runners shares one machine name while its runs land on runners of several
kinds; where the runs record their hardware, each kind is a series of its own
(`changes`). Where they do not, `runner_kinds` finds, in one history (one machine, one
environment), the runs that most of its series show slower at once, by a clear gap, and
`on_one_kind` takes each series' values there down by its own gap before steps are found.
Measured on pools made of real histories (benchmarks/perf_history_detection.py
--runners): on none of the real histories themselves does it find two kinds.
"""
from __future__ import annotations

import dataclasses
import math
import warnings
from typing import Container, Hashable, Mapping, NamedTuple, Sequence

import numpy as np

from benchkit.core.history.machine.held import taken_down
from benchkit.core.history.noise import nan_medians
from benchkit.core.history.placement import median, runs_of
from benchkit.core.history.series import Series, commits_of, relatives_of, values_of
from benchkit.core.history.step import Step

# Measured on pools made of real histories (benchmarks/perf_history_detection.py --runners),
# and on steps all of a real history's series take (tests/test_history_hardware.py).
KIND_MIN_SERIES = 5      # series of a history needed to tell a kind of runner from noise
KIND_WINDOW = 7          # commits on either side of the running median a value is read from
KIND_AGREEMENT = 0.6     # a run is slower when this much more of its series are above than below
KIND_SHARE = (0.1, 0.9)  # the slower kind's share of the runs, to be a kind at all
KIND_CLARITY = 4.0       # the kinds' gap in most series, in that series' own noise
KIND_BLOCK = 2_000_000   # window values whose median is taken at once (16 MB)
KIND_SAMPLE = 64         # series a history's kinds are first judged on
KIND_SIDE = 5            # values a side needs for its lower level to count
KIND_MIXED = 3.0         # the slower runs' blocks, in spreads below chance's, at most


@dataclasses.dataclass(frozen=True)
class RunnerKinds:
    """Runs of one history that most of its series show slower at once, by one gap each: a
    pool of two kinds of runner whose runs do not say which they ran on."""

    slow: frozenset          # the commits run on the slower kind
    gaps: tuple[float, ...]  # per series given, log of how much slower its values were there
    share: float             # the slower kind's share of the commits
    # per series given, whether its gap is KIND_CLARITY of its own noise: where it is, its
    # own values tell the runs it ran slower at (`ran_slower`); one per gap, no default (a
    # shorter tuple would drop series where the two are zipped)
    clear: tuple[bool, ...]


def runner_kinds(series: Sequence[tuple[Sequence[Hashable], Sequence[float]]]
                 ) -> RunnerKinds | None:
    """The two kinds of runner of a history (one machine, one environment), from its
    series' commits and values, or None where the values show no such two groups. A run is
    on the slower kind where its series stand furthest above their lower level
    (`_above_lower_level`); where that finds no two kinds, where the share of its series
    above their running median (KIND_WINDOW) exceeds the share below by KIND_AGREEMENT
    (alone, it flips between the kinds half and half; `_off_the_ends`). The kinds must
    hold KIND_SHARE of the runs between them, be mixed (not in fewer blocks than chance
    makes, less KIND_MIXED spreads: a step or spell all series share is one block) and be
    KIND_CLARITY noises apart in most series. A series with a value of zero or below has no
    gap (0)."""
    places, by_length = _by_length(series)
    total, keys = sum(map(len, by_length.values())), list(places)
    if total < KIND_MIN_SERIES:
        return None
    on_slow, _ = _above_lower_level(by_length, len(places)) or (None, 0.0)
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
        kinds = _judged(_off_the_ends(on_slow), residuals, keys, len(series))
    return kinds


def slower_at_once(series: Sequence[tuple[Sequence[Hashable], Sequence[float]]]
                   ) -> tuple[list[Hashable], np.ndarray, float] | None:
    """A history's commits, in order, which of them most of its series ran slower at once
    (`_above_lower_level`: each run's median height above its series' lower level, in its
    noise, split in two groups) and how far apart the two groups' means are (noises), or
    None where too few series or runs say."""
    places, by_length = _by_length(series)
    if sum(map(len, by_length.values())) < KIND_MIN_SERIES:
        return None
    found = _above_lower_level(by_length, len(places))
    return None if found is None else (list(places), *found)


# the two groups of commits `slower_at_once` splits stand this many noises apart, at least,
# for the machine's rules to read them (noise independent from commit to commit splits in
# two by chance, about 0.5 apart; the seventh VM's histories 1.8-3.1)
AT_ONCE_GAP = 1.0


def clearly_slower_at_once(series: Sequence[tuple[Sequence[Hashable], Sequence[float]]]
                           ) -> tuple[list[Hashable], np.ndarray, float] | None:
    """`slower_at_once`, or None where its two groups stand less than AT_ONCE_GAP apart."""
    found = slower_at_once(series)
    return None if found is None or found[2] < AT_ONCE_GAP else found


def slower_at_once_by_history(series_list: Sequence[Series], found: Sequence[Sequence[Step]],
                              context: Sequence[Series] | None = None
                              ) -> dict[tuple[str, str], tuple | None]:
    """`clearly_slower_at_once` of each history (machine, environment) of `series_list` that one of
    its wall-time series has a slower step to judge in (`found`: each series' steps; not
    transient, not pending), told from the history's wall-time series in `context`
    (default `series_list`): what the machine's rules read, found once."""
    wanted = {(s.machine, s.environment) for s, steps in zip(series_list, found)
              if str(s.metric) == "time"
              and any(st.change > 0 and not st.transient and not st.pending for st in steps)}
    histories = wall_time_histories(series_list if context is None else context)
    return {key: clearly_slower_at_once(commits_and_values(members))
            for key, members in histories.items() if key in wanted}


def _by_length(series: Sequence[tuple[Sequence[Hashable], Sequence[float]]]
               ) -> tuple[dict[Hashable, int], dict[int, list[tuple[int, np.ndarray, np.ndarray]]]]:
    """The history's commits (each its place) and its series with positive values, grouped
    by length: (index, places of its commits, log values)."""
    places: dict[Hashable, int] = {}
    known: dict[tuple, np.ndarray] = {}      # series of one history mostly share their commits
    by_length: dict[int, list[tuple[int, np.ndarray, np.ndarray]]] = {}
    # the runs in the order of the commits: the longest series' first (a benchmark added
    # later holds only the newest), so that the ends and the blocks of slower runs are
    # the history's own
    for i in sorted(range(len(series)), key=lambda i: -len(series[i][1])):
        keys, values = series[i]
        values = np.asarray(values, dtype=float)
        if not len(values) or not np.all(values > 0):
            continue
        keys = tuple(keys)
        at = known.get(keys)
        if at is None:
            at = known[keys] = np.array([places.setdefault(key, len(places)) for key in keys])
        by_length.setdefault(len(values), []).append((i, at, np.log(values)))
    return places, by_length


def _off_the_ends(on_slow: np.ndarray) -> np.ndarray:
    """`on_slow` without its blocks of 3 or more slower runs within KIND_WINDOW of either
    end: there a running median, cut short, cannot tell them from a step all the series
    take (a step a few commits before the newest reads as a block of slower runs)."""
    out = on_slow.copy()
    for first, end in runs_of(on_slow):
        if end - first >= 3 and (first >= len(on_slow) - KIND_WINDOW or end <= KIND_WINDOW):
            out[first:end] = False
    return out


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
            # a window of slow runs only: NaN
            local = nan_medians(sliding_window_view(np.concatenate(
                [edge, kept, edge], axis=1), 2 * KIND_WINDOW + 1, axis=1))
            for (i, at, _), row, middle in zip(block, logs, local):
                out[i] = (at, row - middle)
    return out


def _above_lower_level(by_length: Mapping[int, list], count: int
                       ) -> tuple[np.ndarray, float] | None:
    """The runs on the slower kind, half and half too: each series' height above its lower
    level (of the 2 KIND_WINDOW + 1 values on each side the second lowest, the lowest of a
    side an end cuts short; the higher of the sides that have KIND_SIDE: a step moves it no
    later than the step), in its own noise; a run's score is its series' median height,
    and the runs split in two groups of scores (Otsu's: the least spread within), with how
    far apart the groups' mean scores are. None with fewer than ten scored runs."""
    from numpy.lib.stride_tricks import sliding_window_view
    score = np.full((sum(map(len, by_length.values())), count), np.nan)
    side, k = 2 * KIND_WINDOW + 1, 0
    for length, members in by_length.items():
        if length < 2:
            k += len(members)
            continue
        place = np.arange(length)
        left_counts, right_counts = place >= KIND_SIDE - 1, place <= length - KIND_SIDE
        # series of one length together, a block at a time (the windows are copied)
        rows = max(1, KIND_BLOCK // (length * side))
        for start in range(0, len(members), rows):
            block = members[start:start + rows]
            logs = np.stack([m[2] for m in block])
            edge = np.full((len(block), side - 1), np.inf)
            padded = np.concatenate([edge, logs, edge], axis=1)
            # the second lowest of a whole side, the lowest of one cut short by an end
            left = np.partition(sliding_window_view(padded[:, :length + side - 1], side,
                                                    axis=1), (0, 1), axis=2)
            left = np.where(place >= side - 1, left[:, :, 1], left[:, :, 0])
            right = np.partition(sliding_window_view(padded[:, side - 1:], side, axis=1),
                                 (0, 1), axis=2)
            right = np.where(place <= length - side, right[:, :, 1], right[:, :, 0])
            level = np.where(left_counts & right_counts, np.maximum(left, right),
                             np.where(left_counts, left, np.where(right_counts, right,
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
    gap = float(ordered[split + 1:].mean() - ordered[:split + 1].mean())
    return scored & (middle > (ordered[split] + ordered[split + 1]) / 2), gap


def _judged(on_slow: np.ndarray, residuals: Mapping[int, tuple[np.ndarray, np.ndarray]],
            keys: list, count: int) -> RunnerKinds | None:
    """The kinds `on_slow` marks, if they hold KIND_SHARE of the runs and their gap is
    KIND_CLARITY noises in most series; each series' gap, by index among `count`."""
    share = float(on_slow.sum()) / len(keys)
    if not KIND_SHARE[0] <= share <= KIND_SHARE[1]:
        return None
    # a pool sends runs to either kind in no order: slower runs in fewer blocks than chance
    # would make them (Wald and Wolfowitz's runs, in the order the commits came) are a
    # step or a spell that all the series share, not a kind of runner
    n, slow = len(on_slow), float(on_slow.sum())
    blocks = 1 + int(np.count_nonzero(on_slow[1:] != on_slow[:-1]))
    mixed = 2 * slow * (n - slow)
    spread = math.sqrt(max(mixed * (mixed - n) / (n * n * (n - 1)), 1e-12))
    if (blocks - 1 - mixed / n) / spread < -KIND_MIXED:
        return None
    gaps, clarity, clear = [0.0] * count, [], [False] * count
    for i, (at, residual) in residuals.items():
        slow = on_slow[at] & ~np.isnan(residual)
        fast = residual[~on_slow[at] & ~np.isnan(residual)]
        if slow.sum() < 2 or len(fast) < 2:
            continue
        gaps[i] = median(residual[slow]) - median(fast)
        clarity.append(gaps[i] / (median(np.abs(fast - median(fast))) + 1e-9))
        clear[i] = clarity[-1] >= KIND_CLARITY
    if not clarity or float(np.median(clarity)) < KIND_CLARITY:
        return None
    return RunnerKinds(frozenset(keys[j] for j in np.flatnonzero(on_slow)), tuple(gaps), share,
                       tuple(clear))


def wall_time_histories(series_list: Sequence[Series]) -> dict[tuple[str, str], list[Series]]:
    """The wall-time series of `series_list` by history (machine, environment), those timed
    against benchkit's speed probe left out: what a history's other series are."""
    groups: dict[tuple[str, str], list[Series]] = {}
    for series in series_list:
        if (str(series.metric) == "time" and series.points
                and relatives_of(series.points) is None):
            groups.setdefault((series.machine, series.environment), []).append(series)
    return groups


def commits_and_values(members: Sequence[Series]) -> list[tuple[list[str], np.ndarray]]:
    """Each series' commits (shas) and values: what the history's judges read."""
    return [([c.sha for c in commits_of(s.points)], values_of(s.points)) for s in members]


class SeriesGap(NamedTuple):
    """One series' part in its history's two kinds of runner (`runner_kinds`)."""

    slow: frozenset     # the slower kind's commits
    gap: float          # how much slower this series ran there (log)
    clear: bool         # whether that gap is KIND_CLARITY of its own noise (`ran_slower`)


def runner_gaps(series_list: Sequence[Series]) -> dict[tuple, SeriesGap]:
    """Per wall-time series (its key) of each history of `series_list` whose runs fall into
    two kinds of runner that they do not name (`runner_kinds`): its `SeriesGap`."""
    gaps: dict[tuple, SeriesGap] = {}
    for members in wall_time_histories(series_list).values():
        kinds = runner_kinds(commits_and_values(members))
        if kinds is not None:
            gaps.update({s.key: SeriesGap(kinds.slow, gap, clear)
                         for s, gap, clear in zip(members, kinds.gaps, kinds.clear)})
    return gaps


def on_one_kind(series_list: Sequence[Series], context: Sequence[Series] | None = None
                ) -> tuple[list[Series], dict[tuple, str]]:
    """The wall-time series of each history (machine and environment) whose runs fall into
    two kinds of runner that they do not name (`runner_gaps`, told from all the history's
    series in `context`, default `series_list`), each with its values on the slower kind
    taken down by its own gap; and, per series so changed, what was done. Series timed
    against benchkit's speed probe are left as they are. (Pure: a caller holding millions
    of points pauses the cycle collector around it.)"""
    return _taken_to_one_kind(series_list, runner_gaps(
        series_list if context is None else context))


def on_one_kind_with(series_list: Sequence[Series], context: Sequence[Series] | None = None
                     ) -> tuple[list[Series], dict[tuple, str], list[Series] | None]:
    """`on_one_kind` of `series_list` with its notes, and of `context` (None stays None),
    the kinds told once from `context` (default `series_list`): the machine's rules read the
    runs on one kind, as the steps are found, whether a query names a benchmark or not (a
    pool's slower kind read as the machine running slower at once had made most steps spans)."""
    gaps = runner_gaps(series_list if context is None else context)
    out, notes = _taken_to_one_kind(series_list, gaps)
    return out, notes, None if context is None else _taken_to_one_kind(context, gaps)[0]


def _taken_to_one_kind(series_list: Sequence[Series], gaps: Mapping[tuple, SeriesGap]
                       ) -> tuple[list[Series], dict[tuple, str]]:
    """`series_list` with each series that has a gap in `gaps` taken down by it, and notes."""
    out, notes = [], {}
    for series in series_list:
        key = series.key
        part = gaps.get(key)
        if part is None or not part.gap:
            out.append(series)
            continue
        scale = math.exp(-part.gap)
        # where its gap is clear, only the runs it ran slower at itself
        where = ran_slower(series, part.slow, part.gap) if part.clear else part.slow
        out.append(taken_down(series, where, part.gap))
        at = f"the {len(where)} it ran slower at" if part.clear else "them"
        notes[key] = (f"; {len(part.slow)} of this history's runs were slower in most of its "
                      f"series at once (a second kind of runner?): this series' values at {at} "
                      f"taken {abs(1 - scale):.0%} {'down' if scale < 1 else 'up'}")
    return out, notes


NEAR_FAST = 3   # the faster kind's runs on each side that a run of the slower kind is read against


def ran_slower(series: Series, slow: Container[str], gap: float) -> frozenset:
    """The commits of `slow` (the slower kind's) at which `series` itself ran slower: its
    log value more than half its `gap` above the median of the NEAR_FAST nearest runs of
    the faster kind on either side (the lower side's, where both have them). A busy
    neighbour slows a machine's series unevenly; a series taken down where it ran at its
    own speed stood a gap below it, and after a step there at the level before (the eighth
    VM's busy history of seed 6, every position: 50 % steps found 45.5 -> 71.6 %, asv's
    58.9; docs/performance.md)."""
    shas = [c.sha for c in commits_of(series.points)]
    flagged = np.array([sha in slow for sha in shas], dtype=bool)
    values = np.asarray(values_of(series.points), dtype=float)
    fast = np.flatnonzero(~flagged)
    if gap <= 0 or len(fast) < 2 or not np.all(values > 0):
        return frozenset(sha for sha in shas if sha in slow)
    logs = np.log(values)
    at = np.flatnonzero(flagged)
    k = np.searchsorted(fast, at)
    offsets = np.arange(NEAR_FAST)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)     # a side with none: NaN
        left, right = (np.nanmedian(np.where(
            (idx >= 0) & (idx < len(fast)), logs[fast[np.clip(idx, 0, len(fast) - 1)]],
            np.nan), axis=1) for idx in (k[:, None] - 1 - offsets, k[:, None] + offsets))
    level = np.where(np.isnan(left), right, np.where(np.isnan(right), left,
                                                     np.minimum(left, right)))
    return frozenset(shas[i] for i in at[logs[at] - level > gap / 2])
