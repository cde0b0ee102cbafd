"""Levels and the slower spells the rank test leaves out (core/history/level_change.py)."""
from __future__ import annotations

import numpy as np
import pytest

from benchkit.core.history.level_change import levels, slower_spells
from benchkit.core.history.series import Commit, Point, Series
from benchkit.core.history.time_steps import time_steps


def _series(values):
    points = tuple(Point(Commit(f"c{i}", f"2026-01-01T{i:05d}"), v, v, v, 1, 1)
                   for i, v in enumerate(values))
    return Series("b", "time", "m", points)


def test_a_slower_spell_away_and_back_is_marked_and_a_faster_one_is_not():
    def none_more_than(n, m):
        return 0.1
    slow = np.log([1.0] * 8 + [2.0] * 3 + [1.0] * 3 + [1.5] * 9)
    marked = slower_spells(slow, [8, 11, 14], min_level=6, effect=none_more_than)
    assert marked is not None and np.flatnonzero(marked).tolist() == [8, 9, 10]
    fast = np.log([1.0] * 8 + [0.5] * 3 + [1.0] * 3 + [1.5] * 9)
    assert slower_spells(fast, [8, 11, 14], min_level=6, effect=none_more_than) is None
    # not back: a step's first commits, no spell
    step = np.log([1.0] * 8 + [2.0] * 3 + [1.5] * 12)
    assert slower_spells(step, [8, 11], min_level=6, effect=none_more_than) is None


# Real: scipy's special.Comb.time_comb_exact[N=100,k=10] on scipy's 23 releases since 1.9.2,
# recorded on this VM (benchmarks/record_release_history.py), each release's first quartile,
# its real level change divided out as benchmarks/perf_history_detection.py does, rounded.
# Releases 8-10 are 1.8x slow, three back at the level before.
COMB_N100_K10 = [
    1.014, 1.0, 1.003, 0.998, 0.988, 0.982, 0.989, 0.997, 1.855, 1.77, 1.782, 1.004, 1.0, 1.0,
    0.997, 1.001, 0.999, 1.0, 0.998, 1.0, 0.995, 1.021, 1.016]


@pytest.mark.parametrize("size", [0.25, 0.5])
def test_a_step_after_a_slow_spell_and_back_is_tested_without_the_spell(size):
    # read in its lower envelope (one-sided noise), where the spell is one commit and no
    # level; its three raw releases weighed in the rank test (p = 0.025 at 50 %) and no
    # step was named at all
    values = np.array(COMB_N100_K10) * 1e-5
    values[14:] *= 1 + size
    (step,) = time_steps(_series(values))
    assert step.placed and step.commit.sha == "c14" and not step.transient
    assert step.change == pytest.approx(size, abs=0.03)
    # the spell alone is no step to act on
    assert not [s for s in time_steps(_series(np.array(COMB_N100_K10) * 1e-5)) if s.to_act_on]


# Real: xarray's merge.DatasetCreation.time_dataset_creation[strategy='dict_of_Tuples',
# count=1000] on its 27 releases since 2024.6.0, recorded on this VM (benchmarks/
# record_release_history.py): each release's median and first quartile, its real level
# change divided out as benchmarks/perf_history_detection.py does, over the medians'
# median, rounded. The first two releases' first quartiles are 7 % below the rest.
TUPLES_MEDIANS = [
    1.164, 0.858, 1.316, 0.962, 0.951, 1.338, 1.409, 0.92, 1.038, 0.907, 1.0, 0.918, 1.402,
    0.976, 1.024, 1.0, 1.718, 1.221, 1.0, 0.971, 0.989, 0.987, 0.987, 0.997, 1.016, 1.02, 1.082]
TUPLES_FIRST_QUARTILES = [
    0.749, 0.754, 0.855, 0.818, 0.813, 0.811, 0.877, 0.794, 0.812, 0.792, 0.811, 0.773, 0.823,
    0.814, 0.808, 0.811, 0.836, 0.828, 0.811, 0.802, 0.811, 0.804, 0.808, 0.807, 0.825, 0.825,
    0.887]


def _read_at_both(medians, quartiles):
    points = tuple(Point(Commit(f"c{i}", f"2026-01-01T{i:05d}"), m * 1e-4, q * 1e-4, m * 1e-4,
                         1, 1) for i, (m, q) in enumerate(zip(medians, quartiles)))
    return Series("b", "time", "m", points)


def test_a_step_after_the_first_few_commits_is_transient_where_spells_reach_as_far():
    # the first two releases' quartiles (judged: the quieter figure) were a level of their
    # own, and a +8 % step "somewhere in 2-12" was named; releases after it stood 5 % faster
    # than their median (more than half of 8 %): the two may be such a spell
    found = time_steps(_read_at_both(TUPLES_MEDIANS, TUPLES_FIRST_QUARTILES))
    assert [s for s in found if s.to_act_on] == []
    (early,) = found
    assert early.transient and "only 2 commits before it, at the oldest end" in early.evidence
    # three commits at the old speed, then +30 % in a quiet series: no commit after the step
    # stands 15 % fast, and the step stays (astropy's real ones three commits in)
    rng = np.random.default_rng(0)
    values = np.r_[np.full(3, 1.0), np.full(21, 1.3)] * (1 + 0.01 * rng.random(24))
    (step,) = time_steps(_series(values * 1e-5))
    assert step.commit.sha == "c3" and step.to_act_on
    # one commit after it 20 % fast: the first three may be a spell of that depth
    values[12] /= 1.2
    (step,) = time_steps(_series(values * 1e-5))
    assert step.commit.sha == "c3" and step.transient and not step.to_act_on


def test_a_slow_stretch_between_its_level_and_a_spell_back_at_it_is_a_departure():
    def none_more_than(n, m):
        return 0.1
    # a slow spell of 3, two commits back at the level before, then a step: two commits are
    # no level (that takes 6), but the spell is away and back, and the step is after them
    found: list[tuple[int, int]] = []
    step_after = np.log([1.0] * 8 + [1.86] * 3 + [1.0] * 2 + [1.5] * 10)
    assert levels(step_after, [3, 8, 11, 13, 17], min_level=6, effect=none_more_than,
                  departures=found) == [(0, 13), (13, 23)]
    assert found == [(8, 11)]
    # the mirror: a step, two commits at its level, the spell, back at it
    found = []
    step_before = np.log([1.0] * 6 + [1.47] * 2 + [2.8] * 3 + [1.5] * 12)
    assert levels(step_before, [3, 6, 8, 11, 17], min_level=6, effect=none_more_than,
                  departures=found) == [(0, 6), (6, 23)]
    assert found == [(8, 11)]
    # a faster stretch is no such spell (shared runners slow commits down): as before, the
    # two commits join the level after them, the three the closer level before
    found = []
    faster = np.log([1.0] * 8 + [0.5] * 3 + [1.0] * 2 + [1.5] * 10)
    assert levels(faster, [3, 8, 11, 13, 17], min_level=6, effect=none_more_than,
                  departures=found) == [(0, 11), (11, 23)]
    assert found == []


# Real: scipy's special.Comb.time_comb_exact[N=10,k=100] on scipy's 23 releases since 1.9.2
# (as COMB_N100_K10), median and first quartile, over the medians' median: read at its
# median (two-sided noise); releases 8-10 are 1.9x slow.
COMB_N10_K100_MEDIANS = [
    1.001, 1.0, 0.994, 1.001, 0.987, 0.987, 0.984, 0.994, 1.859, 1.931, 1.862, 1.002, 1.003,
    1.011, 1.0, 1.0, 1.002, 0.977, 0.977, 0.974, 0.976, 1.003, 0.997]
COMB_N10_K100_FIRST_QUARTILES = [
    0.986, 0.984, 0.98, 0.985, 0.975, 0.974, 0.971, 0.98, 1.837, 1.862, 1.842, 0.985, 0.987,
    0.984, 0.987, 0.983, 0.985, 0.96, 0.961, 0.958, 0.957, 0.986, 0.982]


@pytest.mark.parametrize("at", [6, 13])
def test_a_step_two_commits_from_a_slow_spell_is_named_at_its_commit(at):
    # at 13 (two releases back at the old level between): "+88 % at 8, -21 % at 11" was
    # named; at 6 (two releases at the new level before the spell): "+180 % somewhere in
    # 6-8, -46 % somewhere in 11-17". asv names the step at its commit in both
    medians, quartiles = (np.array(COMB_N10_K100_MEDIANS), np.array(COMB_N10_K100_FIRST_QUARTILES))
    medians[at:] *= 1.5
    quartiles[at:] *= 1.5
    (step,) = [s for s in time_steps(_read_at_both(medians, quartiles)) if s.to_act_on]
    assert step.placed and step.commit.sha == f"c{at}"
    assert step.change == pytest.approx(0.5, abs=0.03)
