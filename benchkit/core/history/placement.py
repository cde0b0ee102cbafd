"""Where a wall-time step lies (pure): one commit, or a span the data cannot narrow.

A step found on a shared runner's series is sometimes clear in size and unclear in place: a
slow spell of a few commits next to it, or a short real stretch, fits about as well on
either side. Naming one commit there blames the wrong change (on real series with injected
steps, most of benchkit's wrong steps were right-sized steps named 3-8 commits away). So the
cuts near a step are scored as two levels each (least absolute deviation from each side's
median, on the log values levels were found in: the lower envelope where the noise is
one-sided, else the raw values; in a long series each commit's at most `deviation_cap`, so
that a spell far off both levels does not decide), and every cut that fits within SLACK
times the series' noise of the best one is a place the step may be. When such a cut is
SEPARATION or more commits from the best, or when none is within a commit of the step's own,
the step is *not placed*: it is reported with the span of those cuts, to bisect or
re-measure, and is not a step at one commit -- unless, in a long series, every cut that
fits lies inside the slower level (`within_the_slower_level`), where no slow spell can
make one fit. Where the noise has no spells (a quiet machine's) the chance that a step
lies at each commit is known, each cut as likely as its least-squares fit: it places.

SLACK, REACH and SEPARATION were measured, not picked: benchmarks/perf_history_detection.py
scores placed steps beside asv's on five sets of real series (results/history_detection*);
LONG_SLACK and LONG_SEPARATION on three noise histories of 200 commits recorded on this VM;
PLACED_MASS, CREDIBLE and TAME on drawn series without spells.
"""
from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np


REACH = 10          # commits on either side of a step whose cuts are scored
SLACK = 5.0         # a cut this many noises (of absolute deviation) from the best still fits
LONG_SLACK = 4.0    # ... between two long levels, whose medians a cut barely moves
SEPARATION = 4      # a fitting cut this many commits from the best leaves a step unplaced
LONG_SEPARATION = 5  # ... between two long levels
SLOWER_REACH = 10  # ... unless those cuts lie on the slower level's side, this close
SHORT_SERIES = 60  # a series of at most this many commits ...
SHORT_SLACK = 9.0  # ... fits a cut within this many noises of the best
WINDOW = 30         # commits on either side that a cut is scored on
PLACED_MASS = 0.6   # where the noise has no spells: a step is placed where this share ...
PLACED_WITHIN = 2   # ... of the likelihood of its place lies this close to the best cut,
CREDIBLE = 0.95     # ... else its span holds this share of it
TAME = 3.0          # ... on values whose commits stray at most this many noises,
NORMAL_SHARE = 0.05  # ... where no more than this share strayed further (near normal noise)
FLOOR_QUANTILE = 0.25  # a level's floor: this quantile of its commits ...
FLOOR_SHARE = 0.35  # ... and a commit below this share of the way to the other's is fast
SPELL_RUN = 3       # ... and a run of this many such commits from a step's own commit is one
SPELL_ABOVE = 0.2   # a commit this share of a slower step above its new floor may be a spell
CAP_HEIGHTS = 1.5   # no commit is further off a side than this many heights of the step ...
CAP_NOISES = 4.0    # ... or this many noises, where more (a series longer than SHORT_SERIES)


def median(values: np.ndarray) -> float:
    """np.median of a 1-D run of finite values, bit for bit (nan where empty), without its
    checks: 5x faster on the short runs a series is judged on, and most of its medians are
    of such runs."""
    ordered = np.sort(values)
    n = len(ordered)
    if not n:
        return math.nan
    return float(ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2)


def runs_of(flags: Sequence[bool] | np.ndarray) -> list[tuple[int, int]]:
    """(first, end) of each run of true values in `flags`, in order."""
    edges = np.flatnonzero(np.diff(np.concatenate([[0], np.asarray(flags, dtype=int), [0]])))
    return list(zip(edges[::2].tolist(), edges[1::2].tolist()))


def deviation_cap(height: float, sigma: float, length: int) -> float | None:
    """The most a commit may cost a cut (absolute deviation, log) near a step of `height`
    (log) in a series of `length` commits and noise `sigma`: CAP_HEIGHTS heights, or
    CAP_NOISES noises where more; None (no cap) in a series of at most SHORT_SERIES commits.
    A commit far off both levels (a spell beside the step, 30 % fast or 2x slow) is then
    as far from either side and does not decide where the step lies: uncapped, it pulled
    the cut past itself and the step was named 3-6 commits away. Measured (benchmarks/
    perf_history_detection.py, docs/performance.md): the three noise histories joined,
    false steps 0.0398 / 0.0454 / 0.0547 -> 0.0354 / 0.0354 / 0.0479 a series; every
    position, third history 0.0421 -> 0.0373, busy 0.0212 -> 0.0201. Releases (21-39
    commits) lost recall with a cap (astropy's 10 % steps 14.7 -> 12.1 %, asv 12.6): there
    a cut is few commits, and each commit's full deviation tells."""
    if length <= SHORT_SERIES:
        return None
    return max(CAP_HEIGHTS * abs(height), CAP_NOISES * sigma)


def refined(logs: np.ndarray, start: int, at: int, end: int, reach: int = 2,
            costs: Callable[[np.ndarray, Sequence[int]], Sequence[float]] | None = None,
            keep: np.ndarray | None = None) -> int:
    """The boundary near `at` that best splits logs[start:end] into two levels (least
    absolute deviation from each side's median, or `costs` (`least_squares`, capped
    `cut_costs`); of cuts within 1e-12, the first): the envelope moves a step by a commit.
    `keep` (over logs[start:end]): only those commits are costed (`kept_cuts`)."""
    cuts = range(max(start + 1, at - reach), min(end - 1, at + reach) + 1)
    best, best_cost = at, math.inf
    values, places = logs[start:end], [c - start for c in cuts]
    if keep is not None:
        pairs = kept_cuts(keep, cuts, places)
        values, cuts, places = values[keep], [c for c, _ in pairs], [p for _, p in pairs]
    for cut, cost in zip(cuts, (costs or cut_costs)(values, places)):
        if cost < best_cost - 1e-12:
            best, best_cost = cut, cost
    return best


def kept_cuts(keep: np.ndarray, cuts: Sequence[int], places: Sequence[int]
              ) -> list[tuple[int, int]]:
    """(cut, place among the kept commits) of each cut (`places`: its index in the values
    `keep` is over) that leaves a kept commit on either side: a cut inside a run of
    commits left out stands where the run begins."""
    before = np.concatenate([[0], np.cumsum(keep)])
    total = int(before[-1])
    return [(cut, int(before[place])) for cut, place in zip(cuts, places)
            if 0 < before[place] < total]


def cut_costs(logs: np.ndarray, cuts: Sequence[int], cap: float | None = None) -> list[float]:
    """For each cut, the least absolute deviation of logs[:cut] and logs[cut:] from their
    own medians (each commit's at most `cap`: `deviation_cap`): the same figures as
    np.median and a sum per cut (checked bit for bit), with every cut's medians from one
    sort (8x faster: this was a fifth of the time of a noise series)."""
    ends = np.asarray(cuts, dtype=np.intp)
    if not len(ends):
        return []
    left = np.arange(len(logs))[None, :] < ends[:, None]
    rows = np.arange(len(ends))

    def medians(side: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        ordered = np.sort(np.where(side, logs[None, :], np.inf), axis=1)
        return (ordered[rows, (sizes - 1) // 2] + ordered[rows, sizes // 2]) / 2
    deviations = np.abs(logs[None, :] - np.where(
        left, medians(left, ends)[:, None], medians(~left, len(logs) - ends)[:, None]))
    if cap is not None:
        deviations = np.minimum(deviations, cap)
    return [float(deviations[i, :cut].sum() + deviations[i, cut:].sum())
            for i, cut in enumerate(ends.tolist())]


def least_squares(logs: np.ndarray, cuts: Sequence[int]) -> np.ndarray:
    """For each cut, the sum of squared deviations of logs[:cut] and logs[cut:] from their
    own means (from running sums, centred first so that no precision is lost)."""
    centred = logs - logs.mean()
    ends = np.asarray(cuts, dtype=np.intp)
    left = np.cumsum(centred)[ends - 1]
    right = -left                   # the centred values sum to zero
    return float(centred @ centred) - left * left / ends - right * right / (len(logs) - ends)


def tamed(logs: np.ndarray, deviations: np.ndarray, sigma: float) -> np.ndarray | None:
    """`logs` with each commit's deviation from its running median of five (`deviations`,
    noise.outliers) held within TAME noises (`sigma`): least squares is what places a step
    best in normal noise, and a rare far commit would pull it. None where more than
    NORMAL_SHARE of the commits stray further: that noise is not near normal, and its
    likelihood is not a cut's (drawn normal noise: 0.1-0.6 % of commits; Student's t with
    3 degrees of freedom: 2.4-3.6 %; time_numpy_dot's OpenBLAS speeds, 100x apart, on this
    VM: 18-23 %, and noise without spells in 1 of its 3 histories)."""
    far = np.abs(deviations) > TAME * sigma
    if far.mean() > NORMAL_SHARE:
        return None
    return logs - deviations + np.clip(deviations, -TAME * sigma, TAME * sigma)


def cut_likelihood(logs: np.ndarray, sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """Each cut of `logs` (1 to len - 1) and its likelihood as the place of one step between
    two levels in normal noise of `sigma` (log) from commit to commit: exp(-SSE / 2 sigma^2)
    of its least-squares fit, a flat prior over the cuts, the likelihoods summing to 1."""
    cuts = np.arange(1, len(logs))
    cost = least_squares(logs, cuts)
    weight = np.exp(-(cost - cost.min()) / (2 * sigma * sigma))
    return cuts, weight / weight.sum()


def likely_span(logs: np.ndarray, at: int, sigma: float) -> tuple[int, int] | None:
    """Where the noise is independent (each commit scatters on its own, normal in log):
    None where the step in `logs` (one step between two levels, `at` the first commit after
    it) is placed, else the span (first, last) it may lie in. The step is placed where
    PLACED_MASS of its `cut_likelihood` lies within PLACED_WITHIN commits of the best cut
    and that cut is `at` or next to it; else its span is the likeliest cuts that hold
    CREDIBLE of it. The share near the best cut is the chance that the step is there:
    benchmarks/perf_history_placement.py measures how often it is (results/
    history_placement.json), and perf_history_detection.py the steps found beside asv's."""
    if len(logs) < 2:
        return None
    cuts, weight = cut_likelihood(logs, sigma)
    best = int(cuts[np.argmax(weight)])
    if abs(best - at) <= 1 and weight[np.abs(cuts - best) <= PLACED_WITHIN].sum() >= PLACED_MASS:
        return None
    order = np.argsort(-weight, kind="stable")
    held = cuts[order[:int(np.searchsorted(np.cumsum(weight[order]), CREDIBLE)) + 1]]
    return int(min(held.min(), at)), int(max(held.max(), at))


def spans(logs: np.ndarray, positions: Sequence[int], sigma: float,
          long_level: int | None = None, independent: bool = False,
          spells: np.ndarray | None = None) -> list[tuple[int, int] | None]:
    """For each step (`positions`: the first commit after each, ascending) None when it is
    placed, else (first, last): the step may be at any commit from `first` to `last`. Each
    is judged between its neighbouring steps, at most WINDOW commits either side; `sigma`
    is the series' noise (log scale). Between two levels longer than `long_level` commits a
    cut fits within LONG_SLACK noises, not SLACK: a few commits more or less barely move
    the median of either side, so the costs of the cuts scatter less (measured on three
    200-commit noise histories of this VM: 5 % steps placed 6-8 points more often, and
    misplaced no more often; benchmarks/perf_history_detection.py). There a step is left
    unplaced only where a cut LONG_SEPARATION commits off fits: once rare slow clusters no
    longer made levels (`noise.one_sided`), 5, not 4, found 5 % steps 3.5-6 points more
    often on the quiet history (now at or above asv's) for 0.001-0.004 more false steps per
    series, still below asv's on all three histories; 6 named more than asv's on the third.
    A step whose commit is more than one commit from every cut that fits is not placed
    either: the filtered values put it where the raw ones do not (a two-commit dip beside a
    step reads as a stretch half way up in the running median of three; measured: 8 fewer
    false steps in 15 runs of five sets, 6 of 24,000 steps found at a commit now spans).
    In a series of at most SHORT_SERIES commits (a project's releases) a cut fits within
    SHORT_SLACK noises: there a real dip of two or three releases beside a step fits it as
    well a few releases off. Measured on astropy's and numpy's real series (21-39 commits):
    numpy's false steps per series 0.009 / 0.014 / 0.013 -> 0.002 / 0.007 / 0.005 (asv's
    0.002 / 0.002 / 0.001), astropy's 0.002 / 0.004 / 0.002 -> 0.001 / 0 / 0; 9 is the
    largest slack whose recall stays at or above asv's at every size and seed (at 10,
    astropy's 10 % steps fell below); scipy's and xarray's releases, held out: 0.000 and
    0.001. The noise histories (200 commits) do not change. Beyond SHORT_SERIES commits
    each commit costs a cut at most `deviation_cap` (a spell beside a step fits it as well
    on either side of itself, so the step is placed at its commit or given the span). Where
    the noise is `independent` (noise.independent: no spells, so a level's every commit
    tells where it ends) a step is placed by the likelihood of each cut between its
    neighbours instead (`likely_span`, on `tamed` values). The commits `spells` marks (a
    spell away from a level and back) are left out of every cut's cost."""
    out: list[tuple[int, int] | None] = []
    edges = [0, *positions, len(logs)]
    for k, at in enumerate(positions):
        if independent:
            span = likely_span(logs[edges[k]:edges[k + 2]], at - edges[k], sigma)
            out.append(span and (edges[k] + span[0], edges[k] + span[1]))
            continue
        low = max(edges[k], at - WINDOW)
        high = min(edges[k + 2], at + WINDOW)
        stretch = logs[low:high]
        cuts = range(max(2, at - low - REACH), min(len(stretch) - 2, at - low + REACH) + 1)
        height = (median(stretch[at - low:]) - median(stretch[:at - low])
                  if 0 < at - low < len(stretch) else None)
        cap = None if height is None else deviation_cap(height, sigma, len(logs))
        if spells is not None and spells[low:high].any():
            keep = ~spells[low:high]
            kept = dict(kept_cuts(keep, cuts, cuts))
            unique = sorted(set(kept.values()))
            of = dict(zip(unique, cut_costs(stretch[keep], unique, cap)))
            costs = {cut: of[place] for cut, place in kept.items()}
        else:
            costs = dict(zip(cuts, cut_costs(stretch, cuts, cap)))
        if not costs:
            out.append(None)
            continue
        best = min(costs, key=costs.__getitem__)
        long = long_level is not None and min(at - edges[k], edges[k + 2] - at) > long_level
        slack = LONG_SLACK if long else SHORT_SLACK if len(logs) <= SHORT_SERIES else SLACK
        fitting = [cut for cut, cost in costs.items() if cost - costs[best] < slack * sigma]
        separation = LONG_SEPARATION if long else SEPARATION
        # the commit judged stands apart from every cut that fits: the data puts the step
        # elsewhere (the lower envelope moves a step by one commit, no more)
        apart = min(abs(cut - (at - low)) for cut in fitting) > 1
        if not apart and (all(abs(cut - best) < separation for cut in fitting)
                          or len(logs) > SHORT_SERIES
                          and within_the_slower_level(fitting, at - low, separation, height)):
            out.append(None)
        else:
            out.append((low + min(*fitting, at - low), low + max(*fitting, at - low)))
    return out


def within_the_slower_level(fitting: Sequence[int], at: int, separation: int,
                            height: float | None) -> bool:
    """Whether every cut that fits (`fitting`, commits of the stretch; `at` the step's own)
    lies less than `separation` commits on the faster level's side of the step and less
    than SLOWER_REACH on the slower level's (`height`: the step's, log; above 0 a slower
    step, whose slower level comes after it). A slow spell makes a cut fit on the faster
    side, where it looks like the slower level; on the slower side only commits that ran
    fast for their level can, and the commit the levels put the step at stands. Measured
    where cuts that fit were SEPARATION or more commits apart (every position, the third
    and busy histories of this VM): with the cuts only after a slower step, the step was
    at its own commit in 70 % and 72 % of cases; with cuts before it, 31 % and 66 %. So
    placed, the busy history's 25 / 50 % steps were found 26.8 / 46.4 -> 31.5 / 51.9 % of
    the time for 0.0306 -> 0.0354 false steps a series (asv: 37.4 / 59.7 %, 0.0721); `spans`
    asks it only of series longer than SHORT_SERIES: on astropy's releases (21-32 commits)
    false steps rose 0.0011 -> 0.0032 a series, above asv's 0.0021."""
    if height is None or height == 0:
        return False
    offsets = [(cut - at) * (1 if height > 0 else -1) for cut in fitting]
    return all(-separation < offset < SLOWER_REACH for offset in offsets)


def floor_spans(raw: np.ndarray, positions: Sequence[int], slower: Sequence[bool],
                one_sided: bool = True) -> list[tuple[int, int] | None]:
    """For each step (`positions`, as in `spans`; `slower`: whether each is a slowdown) a
    span (first, last) where the series' floors say the step may lie elsewhere, else None.
    Noise only slows runs: a commit of the old level may run slow, one of the new level
    hardly ever runs fast. So a commit within REACH of a slower step that runs below its
    two floors' FLOOR_SHARE line (the floor: the FLOOR_QUANTILE of each side, WINDOW
    commits at most) is of the old level: where it comes after the step, the step lies
    after it, unless the commits between sit at the new level (not above its upper
    quartile, nor, as for `slow_start_span`, above SPELL_ABOVE of the step over its floor:
    then the fast commit is the odd one, as on astropy's laptop); where it comes
    SEPARATION or more commits before the step, the commits between may be either level.
    A faster step likewise with the first commit below the line. Measured (benchmarks/
    perf_history_detection.py, 400 trials): numpy's releases 0.0043 -> 0.0024 false steps a
    series (asv 0.0030): a real step put in beside a slow spell of releases was named at the
    spell's start, before a release at the old speed; beside a busy neighbour, as recorded,
    0.0187 -> 0.0162; recall and false steps of every other set within 0.3 points.

    And the other way (`slow_start_span`): in a series longer than SHORT_SERIES whose noise
    is `one_sided` (its levels found in the lower envelope), a slower step whose own commit
    begins a run of SPELL_RUN or more commits above the new level (a slow spell) may lie
    anywhere up to the first commit back at the new level."""
    out: list[tuple[int, int] | None] = []
    edges = [0, *positions, len(raw)]
    for k, at in enumerate(positions):
        before = raw[max(edges[k], at - WINDOW):at]
        after = raw[at:min(edges[k + 2], at + WINDOW)]
        if len(before) < 2 or len(after) < 2:
            out.append(None)
            continue
        old, new = (float(np.quantile(side, FLOOR_QUANTILE)) for side in (before, after))
        # a slower step where a busy spell may begin at it (`slow_start_span`)
        spelly = slower[k] and one_sided and len(raw) > SHORT_SERIES
        out.append(_old_speed_span(raw, at, (edges[k], edges[k + 2]), old, new, slower[k],
                                   after if slower[k] else before,
                                   spell_line(old, new) if spelly else None)
                   or (slow_start_span(raw, at, edges[k + 2], old, new) if spelly else None))
    return out


def _old_speed_span(raw: np.ndarray, at: int, inside: tuple[int, int], old: float, new: float,
                    slower: bool, level: np.ndarray, spell_line: float | None = None
                    ) -> tuple[int, int] | None:
    # a commit at the old level's floor on the far side of the step (`floor_spans`). The
    # commits between sit at the new level where their median is not above its upper
    # quartile and, given a `spell_line` (a slower step in a long series whose noise is
    # one-sided), not above that line either: beside a busy neighbour a spell's commits
    # 1.0-1.45x the new level passed the quartile of a level full of spells, the commit at
    # the old speed after them was taken for the odd one, and the step was named at the
    # spell's start (busy neighbour, every position: 0.0258 -> 0.0240 false steps a
    # series, recall the same; the joined histories' false steps the same, no other set
    # moved)
    line = old + FLOOR_SHARE * (new - old) if slower else new + FLOOR_SHARE * (old - new)
    fast = [i for i in range(max(inside[0], at - REACH), min(inside[1], at + REACH))
            if raw[i] < line]
    if not fast:
        return None
    # the fast commit that bounds the step: the last of the old level, the first of the new
    bound = max(fast) + 1 if slower else min(fast)
    between = raw[at:bound - 1] if slower else raw[bound + 1:at]
    if len(between) and median(between) <= float(np.quantile(level, 0.75)) and (
            spell_line is None or median(between) <= spell_line):
        return None
    # inside the neighbouring steps, as every span
    first, last = max(min(at, bound), inside[0] + 1), min(max(at, bound), inside[1] - 1)
    return None if last - first < SEPARATION else (first, last)


def spell_line(old: float, new: float) -> float:
    """The line above a slower step's new floor (`old`, `new`: the two floors, log) that
    a commit of a busy spell stands above: SPELL_ABOVE of the step over the new floor."""
    return new + SPELL_ABOVE * (new - old)


def slow_start_span(raw: np.ndarray, at: int, end: int, old: float, new: float
                    ) -> tuple[int, int] | None:
    """(at, first commit back at the new level) where a slower step at `at` (the first
    commit after it; `end` the next step's; `old`, `new`: the two floors, log) begins a run
    of SPELL_RUN or more commits above the new level's line (SPELL_ABOVE of the step above
    its floor) that ends within REACH, else None. Beside a busy neighbour (slow spells of
    2x, 3-10 commits, a third of all commits) a spell that began at the old level and the
    step inside it read as one step at the spell's start: an injected step was named 3-7
    commits early. The run's commits may be either level, so the step may be at any of
    them. Measured (benchmarks/perf_history_detection.py --every-position, docs/
    performance.md): beside the busy neighbour 0.0500 -> 0.0355 false steps a series
    (recall of 25 / 50 % steps 41.5 / 54.2 -> 40.2 / 51.8 %; asv finds none there); the
    third noise history 0.0398 -> 0.0392; the quiet one and the three joined unchanged.
    Not in a series of releases (SHORT_SERIES commits or fewer): there it named fewer steps
    (astropy's 50 % steps 96.5 -> 95.7 %) and no fewer false ones; nor where the noise
    scatters both ways (drawn drifting noise, AR(1) with phi 0.6: 10 % steps found 63.7 ->
    59.8 %, false steps the same), where a run above the new level is no busy spell. The
    line was FLOOR_SHARE (0.35) of the step: a busy spell 1.7x the old level ran 1.13x the
    new one after a +50 % step (`time_dict_build`), under the line, and the step was named
    at the spell's start; at 0.2 beside the busy neighbour 0.0316 -> 0.0291 false steps a
    series (50 % steps 51.6 -> 50.9 %; 0.1: 0.0283, 50.1 %, and the idle history's 10 %
    steps 99.4 -> 98.2 %). The run was SEPARATION (4) commits long: beside the busy
    neighbour steps were named at the first of three slow commits before them
    (`time_json_dumps`, `time_re_findall`, `time_sorted`); at 3, 0.0291 -> 0.0268 false
    steps a series there (25 / 50 % steps 39.6 / 50.9 -> 38.6 / 48.7 %), the third history
    0.0275 -> 0.0271, the idle one's 5 % steps 95.3 -> 94.0 %, its false steps the same; the
    three joined 0.0336 / 0.0286 / 0.0286 -> 0.0336 / 0.0286 / 0.0280, their 10 % steps 85.8
    / 86.2 / 89.0 -> 85.0 / 85.5 / 87.8 %; no set of releases moved."""
    line = spell_line(old, new)
    last = min(end, at + REACH)
    back = next((i for i in range(at, last) if raw[i] <= line), None)
    if back is None or back - at < SPELL_RUN:
        return None
    return at, back
