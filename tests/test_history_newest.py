"""Steps at the newest end of a wall-time series: pending while the series' own spells could
explain them (pure)."""
from __future__ import annotations

import numpy as np

from benchkit.core.history.transient import longest_spell
from benchkit.core.history.series import Commit, Point, Series
from benchkit.core.history.steps import time_steps


def _series(levels, noise=0.01, seed=0):
    rng = np.random.default_rng(seed)
    values = [1e-5 * (1 + level) * (1 + noise * abs(rng.normal())) for level in levels]
    return Series("b", "time", "m", tuple(
        Point(Commit(f"c{i}", f"2026-01-01T{i:05d}"), v, v, v, 1, 1)
        for i, v in enumerate(values)))


def test_the_longest_spell_is_the_longest_run_as_far_out_that_came_back():
    logs = np.array([0, 0, 1, 1, 1, 0.4, 0, 0, 1, 1])
    assert longest_spell(logs, 0.0, 1.0) == 3          # the run at the end has not come back
    assert longest_spell(logs, 0.0, 0.9) == 3          # 0.4 is not beyond half of 0.9
    assert longest_spell(logs, 0.0, 0.7) == 4          # ... but is beyond half of 0.7
    assert longest_spell(-logs, 0.0, -1.0) == 3        # a faster step: spells the other way
    assert longest_spell(logs, 0.0, -1.0) == 0
    assert longest_spell(np.zeros(0), 0.0, 1.0) == 0


def _at_the_end(levels):
    steps = [s for s in time_steps(_series(levels)) if not s.transient]
    assert len(steps) == 1, steps
    return steps[0]


def test_a_step_at_the_newest_end_no_longer_than_a_spell_that_came_back_is_pending():
    # ten slow nights that came back, then the same height for the newest eight commits:
    # nothing yet tells the two apart
    spell = [0.0] * 20 + [0.6] * 10 + [0.0] * 42
    step = _at_the_end(spell + [0.6] * 8)
    assert (step.commit.sha, step.pending, step.to_act_on) == ("c72", True, False)
    assert ("pending: 8 commits after it, and before it a spell of 10 commits as far out "
            "came back") in step.evidence
    # longer than any spell the series had: a step to act on
    step = _at_the_end(spell + [0.6] * 11)
    assert (step.commit.sha, step.pending, step.to_act_on) == ("c72", False, True)
    # the same eight commits in a series without spells: a step to act on
    step = _at_the_end([0.0] * 72 + [0.6] * 8)
    assert (step.commit.sha, step.pending, step.to_act_on) == ("c72", False, True)
    # a spell a third of the step's height is not as far out
    step = _at_the_end([0.0] * 20 + [0.2] * 10 + [0.0] * 42 + [0.6] * 8)
    assert (step.commit.sha, step.pending) == ("c72", False)


def test_a_step_older_than_the_reach_of_spells_is_not_pending():
    # a 40-commit spell that came back does not hold back a step 31 commits old
    step = _at_the_end([0.0] * 10 + [0.6] * 40 + [0.0] * 40 + [0.6] * 31)
    assert (step.pending, step.to_act_on) == (False, True)
