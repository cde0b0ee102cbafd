"""A slow spell of the whole machine at the newest end of a history (pure).

A shared runner's slow nights hit every series of the machine at once. In the middle of a
history they come back and `transient` calls them spells; at the newest end nothing has come
back yet, and one series alone cannot tell them from a regression (`transient.pending` holds
a step there only where the series itself showed as long a spell before). Many series can:
where the newest few commits of a history (one machine, one environment) stand slower at
once in most of its series, each by several of its own noises (`newest_spell`), a step of a
series that is there only because of them (found again with the spell's values taken down
by the series' own gap, it is gone) is pending (`held_by_the_machine`): listed, no gate,
until more commits come back or `--confirm` re-measures it. A step that stands without
the spell stays as it was.

SPELL_AGREEMENT and SPELL_SIGMAS were set before measuring, not tuned. Measured night by
night (benchmarks/perf_history_nightly.py, docs/performance.md) on three noise histories of
the seventh VM: beside a busy neighbour whose 2-4.8x spell hit every series, false alerts
31 -> 14 (asv's 35); none added on the other two or on astropy's results.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Callable, Hashable, Sequence

import numpy as np

from benchkit.core.history.machine.held import found_again, held_where, taken_down
from benchkit.core.history.machine.runners import commits_and_values, wall_time_histories
from benchkit.core.history.series import Series
from benchkit.core.history.step import Step
from benchkit.core.history.transient import NEWEST_REACH

SPELL_MIN_SERIES = 5    # series of a history needed to tell the machine from one series
SPELL_AGREEMENT = 0.8   # the share of them slower at once, at the spell's first commit and over it
SPELL_SIGMAS = 3.0      # ... each by this many of its own noises (commit to commit)
SPELL_BASE = 30         # commits before the spell whose median is the level it left
GAP_BASE = 6            # ... and at least this many just before it, a series' own gap's


HELD_MARK = "of this machine ran slower in"


def held_by_machine(step: Step) -> bool:
    """Whether `step` is pending because of its machine's newest spell."""
    return step.pending and HELD_MARK in step.evidence


@dataclasses.dataclass(frozen=True)
class NewestSpell:
    """The newest commits of a history that most of its series show slower at once."""

    commits: frozenset        # the spell's commits (shas): the newest `length` of the history
    length: int
    slower: int               # series slower there by SPELL_SIGMAS of their noise
    judged: int               # series judged (with values at the spell and before it)
    gaps: tuple[float, ...]   # per series given, log of how much slower it was there (0: none)

    @property
    def note(self) -> str:
        """What a step held by the spell says of it (`held_by_machine` tells it)."""
        return (f"; pending: the newest {self.length} commits {HELD_MARK} "
                f"{self.slower} of its {self.judged} series at once (a slow spell of the "
                "machine, or a change they all share): without them this step is not "
                "there (more commits, or --confirm, settle it)")


def spell_window(series: Sequence[tuple[Sequence[Hashable], Sequence[float]]]
                 ) -> tuple[list[Hashable], np.ndarray, list[int]] | None:
    """The newest NEWEST_REACH + SPELL_BASE commits of a history (of its series' commits
    and values, each series' in the history's order), the log values there of the series
    with a positive value at every one of them, and which series those are (indexes); None
    where the history is too short or too few series have every value."""
    places: dict[Hashable, int] = {}
    for keys, _ in sorted(series, key=lambda s: -len(s[1])):
        for key in keys[-(NEWEST_REACH + SPELL_BASE):]:
            places.setdefault(key, len(places))
    longest = max((len(values) for _, values in series), default=0)
    width = min(longest, NEWEST_REACH + SPELL_BASE)
    if width < SPELL_BASE // 2 + 2 or len(places) != width:
        return None    # the newest commits are not the same in every series: no window
    window = list(places)
    rows, members = [], []
    for i, (keys, values) in enumerate(series):
        tail = np.asarray(values[-width:], dtype=float)
        if len(tail) == width and list(keys[-width:]) == window and np.all(tail > 0):
            rows.append(np.log(tail))
            members.append(i)
    if len(rows) < SPELL_MIN_SERIES:
        return None
    return window, np.stack(rows), members


def spell_in(logs: np.ndarray) -> tuple[int, np.ndarray, np.ndarray] | None:
    """Where the spell of `spell_window`'s log values starts (a column), each row's log
    gap there and its noise, or None (`newest_spell`)."""
    width = logs.shape[1]
    noise = np.maximum(np.median(np.abs(np.diff(logs, axis=1)), axis=1)
                       / (0.6745 * math.sqrt(2)), 1e-4)
    needed = SPELL_AGREEMENT * len(logs)
    best = None
    # from the newest commit back: the longest run that holds is the spell
    for first in range(width - 1, max(width - NEWEST_REACH, SPELL_BASE // 2) - 1, -1):
        base = np.median(logs[:, max(0, first - SPELL_BASE):first], axis=1)
        heights = (logs[:, first:] - base[:, None]) / noise[:, None]
        if (np.count_nonzero(heights[:, 0] > SPELL_SIGMAS) >= needed
                and np.count_nonzero(np.median(heights, axis=1) > SPELL_SIGMAS) >= needed):
            best = first
    # as long as NEWEST_REACH: a level, not a spell
    if best is None or width - best >= NEWEST_REACH:
        return None
    first = best
    # each series' gap from the commits just before the spell (as many as it is long, at
    # least GAP_BASE): a step of its own a little earlier is not taken for the spell's
    near = np.median(logs[:, max(0, first - max(GAP_BASE, width - first)):first], axis=1)
    return first, np.median(logs[:, first:], axis=1) - near, noise


def newest_spell(series: Sequence[tuple[Sequence[Hashable], Sequence[float]]]
                 ) -> NewestSpell | None:
    """The spell at the newest end of one history, from its series' commits and values
    (each series' in the history's order), or None. The spell is the longest run of the
    history's newest commits, shorter than NEWEST_REACH (as long: a level), whose first
    commit, and whose median, stand more than SPELL_SIGMAS of a series' own noise above the
    median of its SPELL_BASE commits before, in SPELL_AGREEMENT of the series judged: those
    (at least SPELL_MIN_SERIES) with positive values at each of the history's newest
    NEWEST_REACH + SPELL_BASE commits (`spell_window`)."""
    window = spell_window(series)
    found = None if window is None else spell_in(window[1])
    if found is None:
        return None
    keys, _, members = window
    first, over, noise = found
    gaps = [0.0] * len(series)
    for i, gap in zip(members, over):
        gaps[i] = float(gap)
    return NewestSpell(frozenset(keys[first:]), len(keys) - first,
                       int(np.count_nonzero(over / noise > SPELL_SIGMAS)), len(members),
                       tuple(gaps))




def held_by_the_machine(series: Series, steps: list[Step], spell: NewestSpell, gap: float,
                        find: Callable[[Series], list[Step]]) -> list[Step]:
    """`steps` of `series` (of the spell's history; `gap` its own, log), with those that
    the spell may make marked pending: slower steps that stay, within NEWEST_REACH commits
    before the spell, that `find` (the series' step finder) does not find again within
    MATCH commits once the spell's values are taken down by `gap`."""
    if gap <= 0 or not steps:
        return steps
    index = {p.commit.sha: i for i, p in enumerate(series.points)}
    reach = len(series.points) - spell.length - NEWEST_REACH

    again: list[list[Step]] = []    # found once, for the first step it may hold

    def note(step: Step, first: int, last: int) -> str | None:
        if last < reach:
            return None
        if not again:
            again.append(find(taken_down(series, spell.commits, gap)))
        return None if found_again(again[0], index, first, last) else spell.note
    return held_where(steps, index, note)


def spell_of(members: Sequence[Series]) -> NewestSpell | None:
    """`newest_spell` of a history's series."""
    return newest_spell(commits_and_values(members))


def held_by_spells(series_list: Sequence[Series], found: Sequence[list[Step]],
                   find: Callable[[int, Series], list[Step]],
                   context: Sequence[Series] | None = None) -> list[list[Step]]:
    """`found` (the steps of each series of `series_list`) with the steps that the newest
    spell of their history (`newest_spell`, of the wall-time series of each machine and
    environment in `context`, default `series_list`) may make marked pending
    (`held_by_the_machine`; `find(i, series)` finds series i's steps again). Series timed
    against benchkit's speed probe are left as they are. Only histories with a slower step
    that may be held are looked at."""
    wanted = {(s.machine, s.environment) for s, steps in zip(series_list, found)
              if any(st.change > 0 and not st.transient and not st.pending for st in steps)}
    histories = wall_time_histories(series_list if context is None else context)
    spells: dict[tuple, tuple[NewestSpell, float]] = {}
    for members in (members for key, members in histories.items() if key in wanted):
        spell = spell_of(members)
        if spell is not None:
            spells.update({s.key: (spell, gap) for s, gap in zip(members, spell.gaps)})
    out = list(found)
    for i, series in enumerate(series_list):
        if series.key in spells and out[i]:
            spell, gap = spells[series.key]
            out[i] = held_by_the_machine(series, out[i], spell, gap,
                                         lambda s, i=i: find(i, s))
    return out
