"""Runs back at the level before a slower step that are the machine's own speeds, not a
revert (pure; `transient.comes_back` finds the runs, `time_steps` asks these): the level
before already ran as far below itself (`own_fast_runs`), or it ran at a faster speed the
run lacks (`without_its_faster_speed`)."""
from __future__ import annotations

import numpy as np

from benchkit.core.history import transient
from benchkit.core.history.noise import core_noise
from benchkit.core.history.placement import median

OWN_RUNS_CORES = 8  # a step this many core noises high stands apart (own_fast_runs)
FASTER_SHARE = 0.15  # a level with this share of its commits an effect below its median
#                      runs at a faster speed too (`without_its_faster_speed`)


def own_fast_runs(level: np.ndarray, before: float, after: float, effect: float) -> bool:
    """Whether the commits of the level before a slower step (`level`, log; `before` ->
    `after`) already hold a run as far below it as the step is high (`runs_at` the level
    `before - (after - before)`, as near as `comes_back` asks), and the step stands
    OWN_RUNS_CORES core noises (`noise.core_noise` of the level) or more above it: a machine
    that runs the snippet at distinct faster speeds at times, whose runs after the step at
    one of them land on the level before and are no revert. The fifth VM's third noise
    history runs `time_sum_range` at 1.0x, and at 0.31x, 0.52x and 0.66x of it in 1 commit
    of 4, often a few in a row; 0.66x after a +50 % step is the level before, and such runs
    took back 36 of its 189 steps of 50 % (every position). The level must be longer than a
    SPELL: a short one is no measure of its own noise (the third history's `time_dict_build`
    starts with 13 commits, fast ones among them, and a step after them was kept, and
    false). The height in core noises keeps drift out: where the level before wanders (drawn
    AR(1) noise), a run below it is noise of the level, and steps it took back were false
    (benchmarks/perf_history_detection.py, docs/performance.md)."""
    height = after - before
    if len(level) <= transient.SPELL or height < OWN_RUNS_CORES * core_noise(level):
        return False
    band = transient.back_band(before, after, effect)
    return bool(transient.runs_at(level, before - height, band, effect, True)[0].any())


def without_its_faster_speed(level: np.ndarray, run: np.ndarray, before: float,
                             effect: float) -> bool:
    """Whether the level before a step (`level`, log; its median `before`) ran at a faster
    speed too (FASTER_SHARE of its commits, 3 at least, more than `effect` below it) and
    the commits of a run back (`run`: from its first, 2 x BACK_RUN) hold none in the lower
    half of the way there: a revert brings both speeds back, and a run of the new level's
    faster runs (as high as the level before where the step is as high as the gap between
    the speeds) brings one. Beside the sixth VM's busy neighbour `time_re_findall` runs at
    1x and, one commit in four, at 0.53x; a +58 % step at commit 100 was taken back by four
    commits at 0.9-1.24x 53 commits later. Not for independent noise, whose commits an
    effect below the median are too few. Measured (every position, benchkit alone, without
    -> with it): 50 % steps found beside the busy neighbour 44.7 -> 46.4 %, on the third
    history 71.2 -> 72.0 %; false steps 0.0303 -> 0.0306, 0.0304 -> 0.0322 and, on the idle
    history, 0.0171 -> 0.0183 a series."""
    fast = level[level < before - effect]
    if len(fast) < max(3, FASTER_SHARE * len(level)):
        return False
    line = (before + median(fast)) / 2
    return not np.any(run < line)
