"""A step that is only the machine running slower more often (pure).

A shared VM beside a busy neighbour runs at two speeds, and how often at the slower one
changes over weeks: a series that follows the machine moves from mostly its faster speed to
mostly its slower one, and one series alone reads that as a step (the seventh VM beside a
busy neighbour: `time_sum_range` +35 % at commit 141, where the machine went from a third
of its commits slower to four fifths). The history's other series tell which commits the
machine ran slower (`runners.slower_at_once`, as the stretches do). A code change makes a
series slower at both of the machine's speeds; the machine's share makes it slower only in
that more of its commits are at the slower one. So a slower step is held as pending
(`held_by_slower_share`) where, within SHARE_WINDOW commits on either side, the machine ran
slower more often after it than before, each side holds SHARE_MIN commits of each speed,
the series ran slower at the machine's slower commits on both sides, and with the values of
those commits taken down by that gap the series' step finder no longer finds it. A step that
stands without them, or where one side holds one speed only (a change every series takes
at once is one block of "slower" commits: its other side has none), stays as it was.

SHARE_WINDOW and SHARE_MIN were set before measuring, not tuned. Measured every position
(benchmarks/perf_history_detection.py, docs/performance.md) on the seventh VM: false steps a
series beside the busy neighbour of seed 3 0.1216 -> 0.0387, of seed 4 0.0480 -> 0.0265, idle
0.0090 -> 0.0076, numpy's releases the same (0.0017), at 0.2-3.3 points of recall.
"""
from __future__ import annotations

import dataclasses
from typing import Callable, Mapping, Sequence

import numpy as np

from benchkit.core.history.machine.held import found_again, held_where, taken_down
from benchkit.core.history.machine.runners import (clearly_slower_at_once, commits_and_values,
                                                   slower_at_once_by_history)
from benchkit.core.history.series import Series, values_of
from benchkit.core.history.step import Step

SHARE_WINDOW = 30   # commits on either side of a step whose speeds are compared
SHARE_MIN = 5       # commits of each of the machine's speeds a side needs

HELD_MARK = "ran slower more often after it"


def held_by_share(step: Step) -> bool:
    """Whether `step` is pending because its machine ran slower more often after it."""
    return step.pending and HELD_MARK in step.evidence


def slower_commits(members: Sequence[Series]) -> frozenset[str]:
    """The commits (shas) that most of one history's wall-time series ran slower at once
    (`slower_commits_of` their `runners.clearly_slower_at_once`)."""
    return slower_commits_of(clearly_slower_at_once(commits_and_values(members)))


def slower_commits_of(found: tuple[list, np.ndarray, float] | None) -> frozenset[str]:
    """The slower commits of a history's `clearly_slower_at_once` (none without it)."""
    if found is None:
        return frozenset()
    keys, slow, _ = found
    return frozenset(key for key, is_slow in zip(keys, slow) if is_slow)


def _sides(logs: np.ndarray, on_slow: np.ndarray, first: int, last: int
           ) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """(log values, on the machine's slower commits) of the SHARE_WINDOW commits before
    `first` and of those from `last` on."""
    before = slice(max(0, first - SHARE_WINDOW), first)
    after = slice(last, last + SHARE_WINDOW)
    return (logs[before], on_slow[before]), (logs[after], on_slow[after])


@dataclasses.dataclass(frozen=True)
class ShareShift:
    """How a series stood on either side of a step, at each of the machine's speeds."""

    gap: float          # log: how much slower it ran at the machine's slower commits
    before: float       # the share of the machine's slower commits before the step ...
    after: float        # ... and after it


def share_shift(logs: np.ndarray, on_slow: np.ndarray, first: int, last: int
                ) -> ShareShift | None:
    """For a step between places `first` and `last` of a series (its log values, and which
    of its commits the machine ran slower), its `ShareShift` over SHARE_WINDOW commits on
    either side; None where a side lacks SHARE_MIN commits of a speed, the machine did not
    run slower more often after, or a side's gap is not above 0."""
    levels, shares = [], []
    for values, slow in _sides(logs, on_slow, first, last):
        count = int(np.count_nonzero(slow))
        if count < SHARE_MIN or len(slow) - count < SHARE_MIN:
            return None
        levels.append((float(np.median(values[~slow])), float(np.median(values[slow]))))
        shares.append(count / len(slow))
    (fast_before, slow_before), (fast_after, slow_after) = levels
    gaps = (slow_before - fast_before, slow_after - fast_after)
    if shares[1] <= shares[0] or min(gaps) <= 0:
        return None
    return ShareShift(sum(gaps) / 2, shares[0], shares[1])


def held_by_slower_share(series: Series, steps: list[Step], slow: frozenset[str],
                         find: Callable[[Series], list[Step]]) -> list[Step]:
    """`steps` of `series` with each slower step that the machine's share of slower commits
    (`slow`, shas: `slower_commits`) makes marked pending: where `share_shift` finds the
    series slower there and `find` (its step finder) does not find the step again within
    MATCH commits once those commits' values are taken down by that gap."""
    if not slow or not steps:
        return steps
    values = np.asarray(values_of(series.points), dtype=float)
    if not np.all(values > 0):
        return steps
    logs = np.log(values)
    index = {p.commit.sha: i for i, p in enumerate(series.points)}
    on_slow = np.array([p.commit.sha in slow for p in series.points])

    def note(step: Step, first: int, last: int) -> str | None:
        shift = share_shift(logs, on_slow, first, last)
        if shift is None or found_again(find(taken_down(series, slow, shift.gap)), index,
                                        first, last):
            return None
        return (f"; pending: this machine {HELD_MARK} than before (most of its series at once "
                f"at {shift.after:.0%} of the commits after, {shift.before:.0%} before); this "
                f"series ran {np.expm1(shift.gap):.0%} slower at those commits on both sides: "
                "with them taken down by that much this step is not there (the machine's, or a "
                "change that shows only when it is busy: --confirm re-measures it)")
    return held_where(steps, index, note)


def held_by_shares(series_list: Sequence[Series], found: Sequence[list[Step]],
                   find: Callable[[int, Series], list[Step]],
                   context: Sequence[Series] | None = None,
                   slower: Mapping[tuple[str, str], tuple | None] | None = None
                   ) -> list[list[Step]]:
    """`found` (the steps of each series of `series_list`) with `held_by_slower_share`
    applied, each history's slower commits told from its wall-time series in `context`
    (default `series_list`; `slower`: their `slower_at_once_by_history`, if found already);
    only histories with a slower step it may hold are looked at (`find(i, series)` finds
    series i's steps again)."""
    if slower is None:
        slower = slower_at_once_by_history(series_list, found, context)
    slow = {key: slower_commits_of(at_once) for key, at_once in slower.items()}
    out = list(found)
    for i, series in enumerate(series_list):
        commits = slow.get((series.machine, series.environment))
        if commits and str(series.metric) == "time" and out[i]:
            out[i] = held_by_slower_share(series, out[i], commits,
                                          lambda s, i=i: find(i, s))
    return out
