"""A commit far off both levels beside a step (a spell) does not decide where the step lies:
each commit's deviation from its side's level is capped (placement.deviation_cap)."""
from __future__ import annotations

import functools
import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchkit.core.history import placement
from benchkit.core.history.series import Commit, Point, Series
from benchkit.core.history.steps import time_steps

# Real: the fifth VM's three noise histories end to end (crowded, busy neighbour, idle; 600
# commits), level changes taken out. `time_sum_range` runs 30 % fast for four commits at
# 28-31, `time_json_dumps` 2x slow for two at 394-395.
JOINED = json.loads((Path(__file__).parent / "fixtures" / "history" / "joined-spells.json")
                    .read_text(encoding="utf-8"))["series"]


def _claimed_at(values) -> list[int]:
    points = tuple(Point(Commit(f"c{i}", f"2026-01-01T{i:05d}"), v, v, v, 1, 1)
                   for i, v in enumerate(values))
    return [int(s.commit.sha[1:]) for s in time_steps(Series("b", "time", "m", points))
            if not s.transient and s.placed]


def test_the_cap_is_the_steps_heights_or_the_noises_and_none_on_a_short_series():
    assert placement.deviation_cap(0.1, 0.01, 200) == pytest.approx(
        placement.CAP_HEIGHTS * 0.1)
    assert placement.deviation_cap(-0.01, 0.01, 200) == placement.CAP_NOISES * 0.01
    assert placement.deviation_cap(0.1, 0.01, placement.SHORT_SERIES) is None


def test_a_spell_far_off_both_levels_does_not_pull_the_cut_past_itself():
    # +10 % at 20, two commits at the new level, then four 30 % fast, then the new level
    logs = np.log([1.0] * 20 + [1.1] * 2 + [0.7] * 4 + [1.1] * 20)
    assert placement.refined(logs, 0, 23, len(logs), reach=6) == 26
    cap = placement.deviation_cap(math.log(1.1), 0.01, 200)
    assert placement.refined(logs, 0, 23, len(logs), reach=6,
                             costs=functools.partial(placement.cut_costs, cap=cap)) == 20


@given(st.lists(st.floats(-20, 5, allow_nan=False), min_size=2, max_size=120), st.data(),
       st.floats(0.0, 3.0))
def test_each_capped_cost_is_numpys_medians_and_capped_sums_bit_for_bit(values, data, cap):
    logs = np.array(values)
    cuts = data.draw(st.lists(st.integers(1, len(logs) - 1), min_size=1, max_size=21))
    expected = [float(np.minimum(np.abs(logs[:c] - np.median(logs[:c])), cap).sum()
                      + np.minimum(np.abs(logs[c:] - np.median(logs[c:])), cap).sum())
                for c in cuts]
    assert placement.cut_costs(logs, cuts, cap) == expected


@pytest.mark.parametrize("name, at, size, named", [
    # uncapped, the fast spell after the step put it at 32, past the spell
    ("joined/time_sum_range", 26, 0.10, 26),
    # ... and the 2x spell before it at 394, before the spell
    ("joined/time_json_dumps", 397, 0.05, 396),
])
def test_a_real_step_beside_a_spell_is_named_at_its_commit(name, at, size, named):
    values = np.array(JOINED[name])
    values[at:] *= 1 + size
    assert named in _claimed_at(values)
    assert all(abs(i - at) <= 2 for i in _claimed_at(values) if abs(i - at) <= 8)
