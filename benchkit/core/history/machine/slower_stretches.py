"""A step in a stretch the whole machine ran slower, or there only because of one (pure).

A shared VM runs at two speeds, and at the slower one in stretches of several commits, in
most of its series at once. A slower step inside such a stretch fits best at the stretch's
first commit (or one of its first): its commits, at the old level's slower speed, sit where the new
level's faster speed does, and one series cannot tell the two apart (an injected +46 %
step at commits 116-119 of the seventh VM's idle history was named at 113, where a stretch
at 1.4x began). The history's other series can tell that the stretch is the machine's
(`runners.slower_at_once`); a slower step placed in a stretch of STRETCH_MIN commits or
more is given the rest of the stretch as its span (`spanned_by_stretches`): it may lie
anywhere up to the stretch's end, to bisect or re-measure. Unless the series places it
itself: where the stretch stands apart from the others (none within SPELL_NEAR commits) and
the step is named at its commit again once the stretch's values are brought down by how
much slower the series ran in the history's other stretches (`_placed_anyway`). Where the
machine's slower runs are a moderate 22 of 200 commits in short stretches, not a few
extreme ones (the eighth VM's idle history with its real steps taken out, as
perf_history_detection.py reads a real history), the span had made 10 % of 50 % steps
spans that held them, false steps no fewer; a stretch among others (a busy spell) keeps
the span: its own slowness is not the others' (Dec 3).

Measured (benchmarks/perf_history_detection.py --every-position, docs/performance.md) on
the seventh VM: false steps a series idle 0.0207 -> 0.0090, beside a busy neighbour 0.0589
-> 0.0480 and 0.1357 -> 0.1216, numpy's releases 0.0029 -> 0.0017 (asv 0.0028); 50 % steps
found 52.3 -> 30.4 % and 66.0 -> 36.6 % there (asv 20.1 and 21.7 %: the rest are spans that
hold the step); astropy's results the same. runners.AT_ONCE_GAP keeps noise independent
from commit to commit, whose scores split in two by chance, without stretches: without it
15 points of a drawn history's 25 / 50 % steps became spans.

A stretch of SPELL_LEAST commits or more is also a spell of the machine's: a slower step
next to one or in it that the series' step finder no longer finds once the stretch's values
are brought down to the series' level at the machine's faster commits around it (within
MATCH commits of the step or the stretch) is pending (`held_by_stretch_spells`):
listed, no gate, until --confirm re-measures it (the newest spell's rule, `newest_spell`,
inside a history). Beside a busy neighbour, a 13-commit spell of 1.3-2x near the oldest end
of the seventh VM's seed-4 history made most of its false steps (every position: 0.0265 ->
0.0120 false steps a series; seed 3 0.0387 -> 0.0298, below asv's 0.0314; idle 0.0076 ->
0.0058; numpy's releases 0.0017 -> 0.0008), at 0.2-3.1 points of recall (the steps held are
pending, listed). SPELL_LEAST and SPELL_NEAR were set before measuring (MATCH is the other
rules').
"""
from __future__ import annotations

import dataclasses
import math
from typing import Callable, Mapping, Sequence

import numpy as np

from benchkit.core.history.machine.held import MATCH, found_again, held_where, taken_down
from benchkit.core.history.machine.runners import (clearly_slower_at_once, commits_and_values,
                                                   slower_at_once_by_history)
from benchkit.core.history.placement import runs_of
from benchkit.core.history.series import Series, values_of
from benchkit.core.history.step import Step

STRETCH_MIN = 2     # commits in a row that most series ran slower at once: a stretch ...
SPELL_LEAST = 3     # commits a stretch needs to be judged as a spell of the machine's
SPELL_NEAR = 6      # commits around it (at least; as many as it is long) its level is read from

SPELL_MARK = "that most of this machine's series ran slower at once: with its values"


def held_by_stretch_spell(step: Step) -> bool:
    """Whether `step` is pending because of a stretch its machine ran slower."""
    return step.pending and SPELL_MARK in step.evidence


def slower_stretches(members: Sequence[Series]) -> dict[str, tuple[str, int]]:
    """Of one history's wall-time series: each commit (sha) of each stretch of STRETCH_MIN
    commits or more that most of them ran slower at once (one commit between two runs
    bridged), and the commit just after the stretch (sha; the newest commit where it runs
    to the end) with the stretch's length (`stretches_of` their
    `runners.clearly_slower_at_once`)."""
    return stretches_of(clearly_slower_at_once(commits_and_values(members)))


def stretches_of(found: tuple[list, np.ndarray, float] | None) -> dict[str, tuple[str, int]]:
    """The stretches (as `slower_stretches` gives them) of a history's
    `clearly_slower_at_once` (none without it)."""
    if found is None:
        return {}
    keys, slow, _ = found
    # a single commit between two runs does not end a stretch (a run's edges are noisy)
    slow = slow.copy()
    slow[1:-1] |= slow[:-2] & slow[2:]
    return {keys[at]: (keys[min(end, len(keys) - 1)], end - first)
            for first, end in runs_of(slow) if end - first >= STRETCH_MIN
            for at in range(first, end)}


def _around(in_stretch: np.ndarray, first: int, end: int) -> list[int]:
    """The places in no stretch within SPELL_NEAR (or as many as it is long) of the stretch
    [first, end): where a series' level around it is read."""
    reach = max(SPELL_NEAR, end - first)
    return [i for i in (*range(max(0, first - reach), first),
                        *range(end, min(len(in_stretch), end + reach))) if not in_stretch[i]]


def _own_gap(logs: np.ndarray, spells: Sequence[tuple[int, int]], in_stretch: np.ndarray,
             apart: tuple[int, int]) -> float | None:
    """How much slower (log) a series ran in its history's stretches other than the one at
    `apart` (within MATCH commits of it): the median over them of each one's median less
    the median of the commits around it in no stretch (SPELL_NEAR, or as many as it is
    long, a side); None from fewer than two."""
    gaps = []
    for first, end in spells:
        if first <= apart[1] + MATCH and apart[0] <= end + MATCH:
            continue
        near = _around(in_stretch, first, end)
        if len(near) >= SPELL_NEAR:
            gaps.append(float(np.median(logs[first:end]) - np.median(logs[near])))
    return float(np.median(gaps)) if len(gaps) >= 2 else None


def _placed_anyway(series: Series, step: Step, index: Mapping[str, int], first: int, end: int,
                   stretches: dict[str, tuple[str, int]],
                   find: Callable[[Series], list[Step]]) -> bool:
    """Whether `step`, placed in the stretch [first, end) of `series`, is placed by the
    series' own values, not by the stretch: the stretch stands apart (no other stretch
    within SPELL_NEAR commits, or as many as it is long, of its ends) and `find` names the
    step at its commit, or one next to it, again once the stretch's values are taken down
    by how much slower the series ran in its history's other stretches (`_own_gap`)."""
    values = np.asarray(values_of(series.points), dtype=float)
    shas = [p.commit.sha for p in series.points]
    in_stretch = np.array([sha in stretches for sha in shas])
    reach = max(SPELL_NEAR, end - first)
    if (not np.all(values > 0) or in_stretch[max(0, first - reach):first].any()
            or in_stretch[end:end + reach].any()):
        return False
    spells = sorted({(index[e] - n, index[e]) for e, n in stretches.values() if e in index})
    gap = _own_gap(np.log(values), spells, in_stretch, (first, end))
    if gap is None:
        return False
    if gap <= 0:        # the series runs no slower in the machine's stretches
        return True
    at = index[step.commit.sha]
    return any(s.placed and s.change > 0 and not s.transient and s.commit.sha in index
               and abs(index[s.commit.sha] - at) <= 1
               for s in find(taken_down(series, frozenset(shas[first:end]), gap)))


def spanned_by_stretches(series: Series, steps: list[Step],
                         stretches: dict[str, tuple[str, int]],
                         find: Callable[[Series], list[Step]] | None = None) -> list[Step]:
    """`steps` of `series`, each slower step placed at a commit of one of its history's
    `stretches` (`slower_stretches`) given the rest of the stretch as its span (with `find`,
    the series' step finder: unless `_placed_anyway`)."""
    if not stretches:
        return steps
    out, index = [], None
    for step in steps:
        stretch = stretches.get(step.commit.sha)
        if stretch is None or not step.placed or step.transient or step.change <= 0:
            out.append(step)
            continue
        if index is None:
            index = {p.commit.sha: i for i, p in enumerate(series.points)}
        end, length = stretch
        if end not in index:
            out.append(step)
            continue
        if find is not None and _placed_anyway(series, step, index, index[end] - length,
                                               index[end], stretches, find):
            out.append(dataclasses.replace(
                step, evidence=step.evidence + f"; in a stretch of {length} commits that most "
                "of this machine's series ran slower at once, apart from its others: named "
                "here again with the stretch's values brought down to this series' level"))
            continue
        out.append(dataclasses.replace(
            step, span=(step.previous, series.points[index[end]].commit),
            evidence=step.evidence + f"; not placed: it lies in a stretch of {length} commits "
            "that most of this machine's series ran slower at once (at the old level's "
            "slower speed, or the new level's faster one): it may lie anywhere up to the "
            "stretch's end (bisect it, or --confirm re-measures the span's ends)"))
    return out


def _spells(series: Series, stretches: dict[str, tuple[str, int]]
            ) -> list[tuple[int, int]]:
    """The places [first, end) of the `stretches` of SPELL_LEAST commits or more in
    `series` that end before its newest commit (the newest spell's rule judges those)."""
    index = {p.commit.sha: i for i, p in enumerate(series.points)}
    return sorted({(index[end] - length, index[end]) for end, length in stretches.values()
                   if end in index and index[end] < len(index) - 1 and length >= SPELL_LEAST})


def held_by_stretch_spells(series: Series, steps: list[Step],
                           stretches: dict[str, tuple[str, int]],
                           find: Callable[[Series], list[Step]]) -> list[Step]:
    """`steps` of `series` with each slower step that a stretch of its history
    (`slower_stretches`) of SPELL_LEAST commits or more makes marked pending: a step within
    MATCH commits of the stretch that `find` (the series' step finder) does not find
    again, within MATCH commits of the step or the stretch, once the stretch's values
    are taken down by how far their median stands above the series' median at the commits
    around it (SPELL_NEAR, or as many as the stretch is long, on each side) that are in no
    stretch."""
    spells = _spells(series, stretches) if stretches and steps else []
    values = np.asarray(values_of(series.points), dtype=float)
    if not spells or not np.all(values > 0):
        return steps
    logs = np.log(values)
    shas = [p.commit.sha for p in series.points]
    index = {sha: i for i, sha in enumerate(shas)}
    in_stretch = np.array([sha in stretches for sha in shas])

    def note(step: Step, low: int, high: int) -> str | None:
        for first, end in spells:
            if not (low - MATCH <= end and first <= high + MATCH):
                continue
            near = _around(in_stretch, first, end)
            if len(near) < SPELL_NEAR:
                continue
            gap = float(np.median(logs[first:end]) - np.median(logs[near]))
            if gap <= 0:
                continue
            again = find(taken_down(series, frozenset(shas[first:end]), gap))
            if found_again(again, index, min(low, first), max(high, end)):
                continue
            return (f"; pending: next to a stretch of {end - first} commits (from "
                    f"{shas[first][:12]}) {SPELL_MARK} divided by {math.exp(gap):.2f}, to this "
                    "series' level around it, this step is not there (a spell of the "
                    "machine's, or a change it hides: --confirm re-measures it)")
        return None
    return held_where(steps, index, note)


def told_by_stretches(series_list: Sequence[Series], found: Sequence[list[Step]],
                      find: Callable[[int, Series], list[Step]],
                      context: Sequence[Series] | None = None,
                      slower: Mapping[tuple[str, str], tuple | None] | None = None
                      ) -> list[list[Step]]:
    """`found` (the steps of each series of `series_list`) with `spanned_by_stretches` and
    then `held_by_stretch_spells` applied, each history's stretches told from its wall-time
    series in `context` (default `series_list`; `slower`: their `slower_at_once_by_history`,
    if found already); only histories with a slower step are looked at (`find(i, series)`
    finds series i's steps again)."""
    if slower is None:
        slower = slower_at_once_by_history(series_list, found, context)
    stretches = {key: stretches_of(at_once) for key, at_once in slower.items()}
    out = list(found)
    for i, series in enumerate(series_list):
        mine = stretches.get((series.machine, series.environment))
        if mine and str(series.metric) == "time" and out[i]:
            again = (lambda s, i=i: find(i, s))
            out[i] = held_by_stretch_spells(
                series, spanned_by_stretches(series, out[i], mine, again), mine, again)
    return out
