"""A run of commits back at the level before a slower step takes it back, unless the level
before already ran as far below itself at a distinct speed (own_speeds.own_fast_runs): such a
machine's fast runs after the step land on the level before and are no revert."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from benchkit.core.history import noise, transient
from benchkit.core.history.two_speed import own_speeds
from benchkit.core.history.series import Commit, Point, Series
from benchkit.core.history.steps import time_steps

# Real: the fifth VM's third noise history (crowded), 200 commits; `time_sum_range` runs at
# 1.0x and, in about 1 commit of 4, at 0.31x, 0.52x or 0.66x of it. The code never changed.
SUM_RANGE = np.array(json.loads(
    (Path(__file__).parent / "fixtures" / "history" / "third-vm-sum-range.json")
    .read_text(encoding="utf-8"))["series"]["third/time_sum_range"])


def _slower(values) -> list:
    points = tuple(Point(Commit(f"c{i}", f"2026-01-01T{i:05d}"), v, v, v, 1, 1)
                   for i, v in enumerate(values))
    return [s for s in time_steps(Series("b", "time", "m", points)) if s.change > 0]


def _named(values) -> list[tuple[int, bool]]:
    """Each slower step placed at a commit: (its commit, whether it is transient)."""
    return [(int(s.commit.sha[1:]), s.transient) for s in _slower(values) if s.placed]


def test_the_step_says_why_a_run_back_did_not_take_it_back():
    values = SUM_RANGE.copy()
    values[120:] *= 1.5
    (step,) = [s for s in _slower(values) if s.commit.sha == "c121"]
    assert not step.transient
    assert ("; the run back at the level before from c151 is the machine's own: the level "
            "before ran as far below itself;") in step.evidence


@pytest.mark.parametrize("at, named", [(100, 100), (120, 121), (135, 134)])
def test_a_step_on_a_machine_with_distinct_fast_speeds_stays(at, named):
    # +50 % at `at`: after it, runs at 0.66x sit on the level before (0.66 x 1.5 = 1.0);
    # before this rule the step was named and taken back as transient (named a commit off
    # where the commit put in ran fast: 0.66x of the new level is the old one)
    values = SUM_RANGE.copy()
    values[at:] *= 1.5
    assert [(i, gone) for i, gone in _named(values) if abs(i - at) <= 2] == [(named, False)]


def test_without_a_step_the_real_series_names_none_at_a_commit():
    assert [i for i, gone in _named(SUM_RANGE) if not gone] == []


def _level_with_fast_runs(length: int) -> np.ndarray:
    # 1.0 with a 0.66x run of four every ten commits, each speed within 0.1 %
    level = np.log(np.ones(length) * (1 + 0.001 * np.sin(np.arange(length))))
    for start in range(5, length - 4, 10):
        level[start:start + 4] += math.log(2 / 3)
    return level


def test_fast_runs_as_deep_as_the_step_in_a_long_level_are_the_machines():
    height, effect = math.log(1.5), 0.05
    assert own_speeds.own_fast_runs(_level_with_fast_runs(40), 0.0, height, effect)
    # not as deep as the step: a +25 % step's level before has no run at 0.8x
    assert not own_speeds.own_fast_runs(_level_with_fast_runs(40), 0.0, math.log(1.25), effect)
    # a level no longer than a spell is no measure of its own noise
    assert not own_speeds.own_fast_runs(_level_with_fast_runs(transient.SPELL), 0.0, height,
                                       effect)


def test_a_level_that_wanders_as_far_has_no_distinct_speed():
    # a level drifting down and up again by as much as the step, commit by commit: its core
    # noise is large, the step not OWN_RUNS_CORES of it
    drift = np.log(1 - 0.33 * np.abs(np.sin(np.arange(60) / 6)))
    height = math.log(1.5)
    assert height < own_speeds.OWN_RUNS_CORES * noise.core_noise(drift)
    assert not own_speeds.own_fast_runs(drift, 0.0, height, 0.05)


def test_a_run_back_is_the_machines_own_where_the_level_before_ran_as_fast():
    height = math.log(1.5)
    after = _level_with_fast_runs(30) + height
    raw = np.concatenate([_level_with_fast_runs(40), after])
    # the run at 0.66x after the step is back at the level before ...
    assert transient.comes_back(raw, 40, 0.0, height, 0.05) == 45
    # ... and the level before ran as fast: the machine's own, the step is kept
    assert own_speeds.own_fast_runs(raw[:40], 0.0, height, 0.05)
    # judged on the last SPELL commits only, the level before is no measure: taken back
    assert not own_speeds.own_fast_runs(raw[40 - transient.SPELL:40], 0.0, height, 0.05)
    # a level before with no fast runs: the run at 0.66x takes the step back
    clean = np.concatenate([np.zeros(40), after])
    assert transient.comes_back(clean, 40, 0.0, height, 0.05) == 45
    assert not own_speeds.own_fast_runs(clean[:40], 0.0, height, 0.05)
