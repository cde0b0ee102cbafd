"""Steps in a wall-time series (pure).

Wall time, measured on shared machines, has one-sided noise that comes in spells: a busy
neighbour makes runs slower, never faster, for minutes or nights at a time. So:

0. a commit's time is its median, or its first quartile (the 25th percentile of its runs,
   asv's `stats_q_25`) where that is the quieter across the series
   (`series.at_first_quartile`): steals on a shared machine slow some of a commit's runs
   and move its median, less often its first quartile;
1. levels are found in a filtered log(time): the *lower envelope* (each commit as the
   lowest of it and its two neighbours: a cluster of slow commits with a fast one among
   every three does not move it) where the noise is one-sided (`noise.one_sided`), else the
   running median of three (a fast outlier does not widen into a level either); ruptures'
   PELT (linear kernel, in C) proposes generously;
2. a stretch shorter than MIN_LEVEL commits inside the series is a spell, not a level, and
   joins its closer neighbour (MIN_NEWEST at the newest end); neighbouring levels closer
   than the minimum effect are one; in a short series (placement.SHORT_SERIES commits, no
   deviation capped) a spell away from a level and back joins both neighbours (so does a
   slower one beside a spell back at the level beyond it), and its commits neither place
   nor test the step beside it (where levels are the lower envelope, a slower spell away
   and back in the raw values is not tested either);
3. each boundary left is tested on the raw values of up to WINDOW commits on either side
   (Mann-Whitney, so a very slow commit is one rank; or no overlap at all, which is as
   much as a short level can show), alpha shared by Holm's step-down (a series with several
   real steps does not lose one), and its change must clear the user's minimum effect
   (`noise`; so must the raw medians either side, which are reported) and SIGMAS times
   the series' own noise (`effect_for`: fewer between long levels, more beside a short one
   at an end; and as far as its long runs' medians wander, `noise.median_wander`; a series
   longer than STRETCH commits with spells is judged in stretches: the noise around each
   step); the weakest failing boundary is dropped and its
   neighbours judged again until all pass. A series that keeps returning to earlier levels
   (two speeds, in clusters: `two_speed.read.flip_noise`, `two_speed_read`) is judged at
   its faster speed (`two_speed.steps.at_faster_speed_steps`); one whose commits run, one
   in five or so, scattered, at a faster speed of the machine's (`noise.faster_minority`)
   is judged without those commits, and a step among them is placed by their values
   (`_among_the_faster`);
4. where measurements are stored, the per-process evidence of the commits next to a step
   must agree (`verdicts.decide_runs`);
5. a step the data fits about as well 4 or more commits away (or its floors put there;
   near normal noise without spells: under 60 % likely within 2 commits of one) is not
   placed: it is given the span of commits it may lie in, not a commit to blame;
6. a step that a later one takes back (the level returns to within the minimum effect) is
   marked transient: a slow spell or a revert, not a step to act on (asv reports neither);
   a short spell that comes back only part of the way is transient too, and what stays
   (the net change) is one step somewhere in the spell, not placed; so is a slower step
   whose level before is back for a few commits soon after, levels or not, and one after
   a series' first few commits where its spells reach as far (`transient.py`).

Measured, not picked: benchmarks/perf_history_detection.py scores these choices beside
asv's on real series with injected steps (results/history_detection*)."""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, Sequence

import numpy as np

from benchkit.core.decisions.rank_test import apart, rank_p, shift_interval
from benchkit.core.history import placement, transient
from benchkit.core.history.level_change import (MIN_NEWEST, WINDOW, Boundary, Judging,
                                                evidence_decision, failing, judged_boundaries,
                                                levels, slower_spells)
from benchkit.core.history.noise import (faster_minority, independent_values, LAGS,
                                         level_filter, median_wander, noise_of, outliers,
                                         two_sided_independent)
from benchkit.core.history.series import (Point, Series, at_first_quartile, values_at_one_speed,
                                          values_of)
from benchkit.core.history.step import Step
from benchkit.core.history.two_speed.read import flip_noise, two_speed_read
from benchkit.core.history.two_speed.own_speeds import own_fast_runs, without_its_faster_speed
from benchkit.core.history.two_speed.steps import at_faster_speed_steps

DEFAULT_ALPHA = 0.01       # the rank tests' for a whole series (Holm's step-down)
DEFAULT_NOISE = 0.02       # the smallest step reported unless the series is noisier
PENALTY_PER_LOG_N = 1.0    # the penalty of one proposed step: this many times log(points)
MIN_LEVEL = 6              # commits a level needs inside a series (shorter: a spell)
SIGMAS = 2.25              # a step must be this many times the series' noise, at least
LONG_LEVEL = 20            # levels longer than this need less than SIGMAS noises (as 1/sqrt)
LONG_COUNTED = 60          # ... counting at most this many of their commits
WANDER_SIGMAS = 3.0        # ... and this many times two of their medians' spread (wander)
STRETCH = 200              # commits judged together (a longer series: stretches of this)
SEAM = 10                  # ... a step named this close to where two meet is named once


def proposed_steps(logs: np.ndarray, penalty: float = PENALTY_PER_LOG_N,
                   sigma: float | None = None) -> list[int]:
    """Indexes where ruptures' PELT (linear kernel) puts a change in level of the lower
    envelope, in units of `sigma` (the raw series' noise; default the envelope's own): each
    is the first point after a step. Generous on purpose: levels() decides which are
    levels."""
    import ruptures
    n = len(logs)
    if n < 3:
        return []
    scaled = ((logs - np.median(logs)) / (sigma or noise_of(logs))).reshape(-1, 1)
    ends = ruptures.KernelCPD(kernel="linear", min_size=1).fit(scaled).predict(
        pen=penalty * math.log(n))
    return [int(e) for e in ends[:-1]]


def effect_for(floor: float, sigma: float, min_level: int = MIN_LEVEL,
               long_level: int = LONG_LEVEL, wander: float = 0.0) -> Callable[[int, int], float]:
    """The change a boundary between levels of n and m commits must clear: `floor` (the
    user's minimum effect), SIGMAS noises (fewer where both levels are longer than
    `long_level`, a spell's length, or `min_level` where the noise is independent: a median
    is known to 1/sqrt(its commits), up to LONG_COUNTED; more beside one shorter than
    `min_level`) and, between levels of LONG_LEVEL or more, WANDER_SIGMAS times the
    difference of two medians of LONG_LEVEL commits that `wander` (`noise.median_wander`)
    gives: spells tens of commits long move them as far as single commits."""
    def need(n: int, m: int) -> float:
        shorter = max(min(n, m, LONG_COUNTED), 1)
        scale = min(max(shorter, min_level), long_level) / shorter
        spells = WANDER_SIGMAS * wander * math.sqrt(2 * LONG_LEVEL / shorter) if (
            shorter >= LONG_LEVEL) else 0.0
        return max(floor, SIGMAS * sigma * math.sqrt(scale), spells)
    return need


def time_steps(series: Series, evidence: Callable[[Point], Sequence[Any]] | None = None, *,
               alpha: float = DEFAULT_ALPHA, noise: float = DEFAULT_NOISE,
               penalty: float = PENALTY_PER_LOG_N, min_level: int = MIN_LEVEL,
               at_faster_speed: bool = True) -> list[Step]:
    """The confirmed steps in a wall-time series (module docstring); `at_faster_speed`
    False judges a two-speed series as it comes (its flips as its noise).

    A series longer than STRETCH commits is judged in stretches of STRETCH, each starting
    half a stretch after the one before, and a step is taken from the stretch it lies in
    the middle half of (one that both name within SEAM commits of where they meet, once,
    from the stretch nearer its middle): noise is the noise *around* a step. Years of CI
    are quiet for a while and busy for a while (a runner replaced, a neighbour moved in):
    the whole series' noise is too much for its quiet years and too little for its busy
    ones, whose returning spells read as a two-speed machine's flips everywhere. A series
    whose noise is independent throughout (`noise.independent_values`) is judged whole."""
    options = dict(alpha=alpha, noise=noise, penalty=penalty, min_level=min_level,
                   at_faster_speed=at_faster_speed)
    # a time's first quartile (not a track_'s or peakmem's low: their least value)
    if at_faster_speed and series.metric == "time" and (
            quartiles := at_first_quartile(series.points)) is not None:
        quiet, usual = (noise_of(np.log(values_of(p))) for p in (quartiles, series.points))
        if quiet < usual:
            # judged on the quieter: each commit's first quartile
            note = (f"; judged on each commit's first quartile (noise {quiet:.1%}, its "
                    f"median's {usual:.1%})")
            return [dataclasses.replace(s, evidence=s.evidence + note) for s in time_steps(
                dataclasses.replace(series, points=quartiles), evidence, **options)]
    n = len(series.points)
    if n <= STRETCH or (at_faster_speed and independent_values(values_at_one_speed(series.points))):
        return transient.at_the_ends(series.points, _steps_of_stretch(
            series, evidence, **options), min_level, STRETCH)
    count = math.ceil((n - STRETCH) / (STRETCH // 2)) + 1
    starts = [round(k * (n - STRETCH) / (count - 1)) for k in range(count)]
    # (commits from the stretch's middle, stretch, position, step): a stretch answers for its
    # middle half, to the series' ends, and SEAM commits past it (its neighbour's step there
    # may be a commit or two off, or missing)
    found: list[tuple[float, int, int, Step]] = []
    for k, start in enumerate(starts):
        first = 0 if k == 0 else (start + starts[k - 1] + STRETCH) // 2 - SEAM
        last = n if k == count - 1 else (starts[k + 1] + start + STRETCH) // 2 + SEAM
        stretch = dataclasses.replace(series, points=series.points[start:start + STRETCH])
        index = {p.commit: start + i for i, p in enumerate(stretch.points)}
        for step in _steps_of_stretch(stretch, evidence, **options):
            at = index[step.commit]
            if first <= at < last:
                found.append((abs(at - start - STRETCH / 2), k, at, step))
    # a step both stretches name near their seam is the one nearer its stretch's middle
    kept: list[tuple[int, int, Step]] = []
    for _, k, at, step in sorted(found, key=lambda f: f[:3]):
        if not any(other != k and abs(at - where) <= SEAM and (s.change > 0) == (step.change > 0)
                   for other, where, s in kept):
            kept.append((k, at, step))
    ordered = [step for _, _, step in sorted(kept, key=lambda f: f[1])]
    return transient.at_the_ends(series.points, ordered, min_level, STRETCH)


def _steps_of_stretch(series: Series, evidence: Callable[[Point], Sequence[Any]] | None, *,
                      alpha: float, noise: float, penalty: float, min_level: int,
                      at_faster_speed: bool, stripped: bool = False) -> list[Step]:
    points = series.points
    if len(points) < 2 * MIN_NEWEST:
        return []
    values = values_at_one_speed(points)
    if not np.all(values > 0):
        # log values: a point at or below zero (a track_ count, a timer that read 0) is left out
        kept = tuple(p for p, v in zip(points, values) if v > 0)
        found = time_steps(dataclasses.replace(series, points=kept), evidence, alpha=alpha,
                           noise=noise, penalty=penalty, min_level=min_level,
                           at_faster_speed=at_faster_speed)
        note = f"; {len(points) - len(kept)} point(s) of zero or below left out"
        return [dataclasses.replace(s, evidence=s.evidence + note) for s in found]
    raw = np.log(values)
    deviations = outliers(raw)
    logs, envelope = level_filter(raw, deviations)
    sigma = noise_of(raw)
    proposals = proposed_steps(logs, penalty, sigma)
    # a level change must clear the minimum effect and the noise inside levels (not across)
    found = levels(logs, proposals, min_level=min_level,
                   effect=effect_for(math.log1p(noise), sigma, min_level))
    sigma = noise_of(raw, found, LAGS)
    same = max(math.log1p(noise), SIGMAS * sigma)
    flips = 0.0 if stripped else flip_noise(logs, found, same)
    if at_faster_speed and not stripped and (read := two_speed_read(
            raw, logs, levels(logs, proposals, min_level=min_level), same, flips)):
        def steps_in(folded: Series) -> list[Step]:
            return time_steps(folded, evidence, alpha=alpha, noise=noise, penalty=penalty,
                              min_level=min_level, at_faster_speed=False)
        return at_faster_speed_steps(series, raw, read, steps_in, SIGMAS)
    if at_faster_speed and not stripped and (minor := faster_minority(raw)) is not None:
        # judged without them: their flips are not the series' noise, nor are the levels
        # they leave two speeds; what spells are left are judged as spells
        faster, gap = minor
        kept = tuple(p for p, fast in zip(points, faster) if not fast)
        note = (f"; judged without the {int(faster.sum())} commits that ran at the "
                f"machine's faster speed ({math.exp(-gap):.2f}x)")
        return [_among_the_faster(dataclasses.replace(step, evidence=step.evidence + note),
                                  points, raw, gap)
                for step in _steps_of_stretch(
                    dataclasses.replace(series, points=kept), evidence, alpha=alpha,
                    noise=noise, penalty=penalty, min_level=min_level,
                    at_faster_speed=at_faster_speed, stripped=True)]
    sigma = max(sigma, flips)  # still two-speed when read so: no long-level discount
    effect = max(math.log1p(noise), SIGMAS * sigma)
    # no spells (a two-speed fold's are folded out, not absent): a long level is a level
    iid = at_faster_speed and not stripped and two_sided_independent(raw, deviations)
    tamed = placement.tamed(raw, deviations, sigma) if iid else None   # None: not near normal
    need = (lambda n, m: effect) if flips else effect_for(
        math.log1p(noise), sigma, min_level, min_level if iid else LONG_LEVEL,
        0.0 if iid else median_wander(logs, found, LONG_LEVEL))
    # a short series (no commit's deviation capped, placement.deviation_cap): a spell away
    # from a level and back neither places nor judges a step. Not on longer series, which
    # the cap serves (measured: fewer steps found beside a busy neighbour); in the lower
    # envelope only a slower spell between two levels, as one fast commit reads there as
    # three away and back (a step's first releases were taken for a slow spell between
    # two such: numpy's time_diagflat_l100)
    departures: list[tuple[int, int]] | None = (
        [] if len(raw) <= placement.SHORT_SERIES else None)
    bounds = [start for start, _ in levels(logs, proposals, min_level=min_level, effect=need,
                                           departures=departures, envelope=envelope)[1:]]
    spells = None
    if departures:
        spells = np.zeros(len(raw), dtype=bool)
        for a, b in departures:
            spells[a:b] = True
    # ... and where levels are the envelope, the raw values' slower spells are not tested
    untested = slower_spells(raw, proposed_steps(raw, penalty, sigma), min_level=min_level,
                             effect=need) if departures is not None and envelope else None
    if spells is not None:
        untested = spells if untested is None else spells | untested
    # backward elimination in Holm's order (Bonferroni lost one of astropy's 4 real steps)
    whole = noise_of(raw, (), LAGS)
    how_judged = Judging(need, envelope, tamed, MIN_LEVEL, whole, spells, untested)
    judged: list[Boundary] = []
    known: dict[tuple[int, int, int], Boundary] = {}
    while bounds:
        judged = judged_boundaries(raw, logs, bounds, how_judged, known)
        if not (fails := failing(judged, alpha)):
            break
        del bounds[max(fails, key=lambda i: (judged[i].p, -abs(judged[i].change)))]
        judged = []
    edges = [0, *(b.at for b in judged), len(raw)]    # the neighbours as placed, not as found
    steps: list[Step] = []
    positions: list[int] = []
    for i, (at, change, p, _, _) in enumerate(judged):
        start, end = min(edges[i], at - 1), max(edges[i + 2], at + 1)
        before, after = raw[max(start, at - WINDOW):at], raw[at:min(end, at + WINDOW)]
        # what is reported: the levels of the raw medians on either side of the commit, which
        # must clear the minimum effect as the filtered levels did (a two-speed series' commits
        # folded below its faster speed raised its filtered level 11 %, its medians 1 %)
        level_before, level_after = (math.exp(placement.median(side)) for side in (before, after))
        if abs(math.log(level_after / level_before)) <= math.log1p(noise):
            continue
        low, high = shift_interval(before, after, alpha)
        kind = ", half the height of its flips" if flips else ", no spells" if iid else ""
        how = f"levels of {at - start} and {end - at} commits (noise {sigma:.1%}{kind}); " \
            f"rank test p={p:.2g}"
        if end == len(points) and end - at < min_level:
            how += (f"; only {end - at} commits after it: measure again (`--confirm`) or "
                    "wait for more")
        decision = None if evidence is None else evidence_decision(
            points, at, start, end, evidence, alpha, noise)
        if decision is not None:
            # the level moved beyond the band; the processes next to the step must agree
            if not decision.verdict.is_claim or (decision.ratio > 1) != (change > 0):
                continue
            how += (f"; processes of the neighbouring commits: {decision.verdict} "
                    f"[{decision.ci_low - 1:+.1%}, {decision.ci_high - 1:+.1%}]")
        steps.append(Step(series.benchmark, series.metric, series.machine,
                          points[at - 1].commit, points[at].commit, level_before,
                          level_after, level_after / level_before - 1, low, high, (), how,
                          series.environment))
        positions.append(at)
    # placed on the values levels were found in where those are the lower envelope (one-sided
    # noise: the raw values' slow spells fit a step anywhere near them), in raw noise units
    placed_on = logs if envelope else raw if tamed is None else tamed
    # ... and on the raw values' floors, which a slow spell beside the step does not move (not
    # a two-speed series' read at its faster speed: placed on its raw values at two speeds)
    floors = (placement.floor_spans(raw, positions, [step.change > 0 for step in steps],
                                    one_sided=envelope)
              if at_faster_speed and not iid else [None] * len(positions))
    for i, (span, floor) in enumerate(zip(placement.spans(
            placed_on, positions, whole, LONG_LEVEL, tamed is not None, spells), floors)):
        if span is not None or floor is not None:
            first, last = span or floor
            why = (f"its floors put it anywhere in {last - first + 1} commits" if not span else
                   f"fits anywhere in {last - first + 1} commits" if tamed is None else
                   f"{placement.CREDIBLE:.0%} likely in these {last - first + 1} commits")
            steps[i] = dataclasses.replace(
                steps[i], span=(points[first - 1].commit, points[last].commit),
                evidence=steps[i].evidence + f"; not placed: {why} (bisect it, or --confirm "
                "re-measures the span's ends)")
    # a spell no higher than single commits reach elsewhere may be noise; higher is code
    reach = (float(deviations.max()), float(-deviations.min()))
    spell_edges = [0, *positions, len(raw)]

    def net_change(i: int, j: int) -> tuple[float, float, str] | None:
        # the levels before step i and after step j, judged as one step between them: its
        # interval and how it was judged, or None where it does not hold
        start, end = spell_edges[i], spell_edges[j + 2]
        a, b = positions[i], positions[j]
        before, after = raw[max(start, a - WINDOW):a], raw[b:min(end, b + WINDOW)]
        change = (placement.median(logs[b:min(end, b + WINDOW)])
                  - placement.median(logs[max(start, a - WINDOW):a]))
        p = rank_p(before, after)
        if abs(change) <= need(a - start, end - b) or not (p < alpha or apart(before, after)):
            return None
        low, high = shift_interval(before, after, alpha)
        return low, high, (f"levels of {a - start} and {end - b} commits either side (noise "
                           f"{sigma:.1%}); rank test p={p:.2g}")
    steps = transient.excursions(steps, logs, positions, effect, reach, net_change,
                                 need if iid else None, MIN_LEVEL)
    for i, (step, at) in enumerate(zip(steps, positions)):
        sides = (math.log(step.before), math.log(step.after))
        back = None if step.transient else transient.comes_back(raw, at, *sides, effect, iid)
        if back is None:
            continue
        sha = points[back].commit.sha[:12]
        # the level before: from the step before this one
        level = raw[positions[i - 1] if i else 0:at]
        if not iid and without_its_faster_speed(
                level, raw[back:back + 2 * transient.BACK_RUN], sides[0], effect):
            steps[i] = dataclasses.replace(step, evidence=step.evidence + (
                f"; the run back at the level before from {sha} is not it: the level "
                "before ran at a faster speed too, and the run does not"))
        elif not iid and own_fast_runs(level, *sides, effect):
            steps[i] = dataclasses.replace(step, evidence=step.evidence + (
                f"; the run back at the level before from {sha} is the machine's own: the "
                "level before ran as far below itself"))
        else:
            steps[i] = dataclasses.replace(step, transient=True, evidence=step.evidence + (
                f"; transient: the level before it is back at {sha}"))
    return steps


def _among_the_faster(step: Step, points: Sequence[Point], raw: np.ndarray, gap: float
                      ) -> Step:
    """`step`, found without the commits at the machine's faster speed (`gap` below the
    rest, log), placed among those of them between its two commits (`raw`: all commits'
    log values): each is on the level whose faster speed it is nearer. Where they do not
    fall as one run on the level before and one on the level after, the step is given
    the commits between as its span."""
    if not step.placed:
        return step
    index = {p.commit: i for i, p in enumerate(points)}
    a, b = index[step.previous], index[step.commit]
    if b - a < 2:
        return step
    middle = (math.log(step.before) + math.log(step.after)) / 2 - gap
    after = (raw[a + 1:b] - middle) * math.copysign(1, step.change) > 0
    first = int(np.argmax(np.append(after, True)))
    if after[first:].all():
        return dataclasses.replace(step, previous=points[a + first].commit,
                                   commit=points[a + 1 + first].commit)
    return dataclasses.replace(step, span=(step.previous, step.commit), evidence=(
        step.evidence + f"; not placed: the {b - a - 1} faster commits between its "
        "neighbours fall on both levels (bisect it, or --confirm re-measures the span's "
        "ends)"))
