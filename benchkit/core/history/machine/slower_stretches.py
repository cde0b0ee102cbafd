"""A step at the start of a stretch the whole machine ran slower (pure).

A shared VM runs at two speeds, and at the slower one in stretches of several commits, in
most of its series at once. A slower step inside such a stretch fits best at the stretch's
first commit (or one of its first): its commits, at the old level's slower speed, sit where the new
level's faster speed does, and one series cannot tell the two apart (an injected +46 %
step at commits 116-119 of the seventh VM's idle history was named at 113, where a stretch
at 1.4x began). The history's other series can tell that the stretch is the machine's
(`runners.slower_at_once`); a slower step placed in a stretch of STRETCH_MIN commits or
more is given the rest of the stretch as its span (`spanned_by_stretches`): it may lie
anywhere up to the stretch's end, to bisect or re-measure.

Measured (benchmarks/perf_history_detection.py --every-position, docs/performance.md) on
the seventh VM: false steps a series idle 0.0207 -> 0.0090, beside a busy neighbour 0.0589
-> 0.0480 and 0.1357 -> 0.1216, numpy's releases 0.0029 -> 0.0017 (asv 0.0028); 50 % steps
found 52.3 -> 30.4 % and 66.0 -> 36.6 % there (asv 20.1 and 21.7 %: the rest are spans that
hold the step); astropy's results the same. STRETCH_GAP keeps noise independent from commit
to commit, whose scores split in two by chance, without stretches: without it 15 points of
a drawn history's 25 / 50 % steps became spans.
"""
from __future__ import annotations

import dataclasses
from typing import Sequence

from benchkit.core.history.machine.runners import (commits_and_values, slower_at_once,
                                                   wall_time_histories)
from benchkit.core.history.placement import runs_of
from benchkit.core.history.series import Series
from benchkit.core.history.step import Step

STRETCH_MIN = 2     # commits in a row that most series ran slower at once: a stretch ...
STRETCH_GAP = 1.0   # ... where the slower runs stand this many noises above the others


def slower_stretches(members: Sequence[Series]) -> dict[str, tuple[str, int]]:
    """Of one history's wall-time series: each commit (sha) of each stretch of STRETCH_MIN
    commits or more that most of them ran slower at once (one commit between two runs
    bridged), and the commit just after the stretch (sha; the newest commit where it runs
    to the end) with the stretch's length.
    Empty where the slower runs' median heights stand less than STRETCH_GAP noises above
    the others' on average: the runs' scores then split in two by chance (drawn noise
    independent from commit to commit splits 0.5 noise apart; this VM's histories
    1.8-2.5)."""
    found = slower_at_once(commits_and_values(members))
    if found is None or found[2] < STRETCH_GAP:
        return {}
    keys, slow, _ = found
    # a single commit between two runs does not end a stretch (a run's edges are noisy)
    slow = slow.copy()
    slow[1:-1] |= slow[:-2] & slow[2:]
    return {keys[at]: (keys[min(end, len(keys) - 1)], end - first)
            for first, end in runs_of(slow) if end - first >= STRETCH_MIN
            for at in range(first, end)}


def spanned_by_stretches(series: Series, steps: list[Step],
                         stretches: dict[str, tuple[str, int]]) -> list[Step]:
    """`steps` of `series`, each slower step placed at a commit of one of its history's
    `stretches` (`slower_stretches`) given the rest of the stretch as its span."""
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
        out.append(dataclasses.replace(
            step, span=(step.previous, series.points[index[end]].commit),
            evidence=step.evidence + f"; not placed: it lies in a stretch of {length} commits "
            "that most of this machine's series ran slower at once (at the old level's "
            "slower speed, or the new level's faster one): it may lie anywhere up to the "
            "stretch's end (bisect it, or --confirm re-measures the span's ends)"))
    return out


def spanned_in_histories(series_list: Sequence[Series], found: Sequence[list[Step]],
                         context: Sequence[Series] | None = None) -> list[list[Step]]:
    """`found` (the steps of each series of `series_list`) with `spanned_by_stretches`
    applied, each history's stretches told from its wall-time series in `context`
    (default `series_list`); only histories with a slower placed step are looked at."""
    wanted = {(s.machine, s.environment) for s, steps in zip(series_list, found)
              if any(st.placed and not st.transient and st.change > 0 for st in steps)}
    histories = wall_time_histories(series_list if context is None else context)
    stretches = {key: slower_stretches(members) for key, members in histories.items()
                 if key in wanted}
    return [spanned_by_stretches(series, steps, stretches[(series.machine,
                                                             series.environment)])
            if str(series.metric) == "time" and (series.machine, series.environment)
            in stretches else steps for series, steps in zip(series_list, found)]
