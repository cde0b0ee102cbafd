"""The steps' rank test (core/decisions/rank_test.rank_p) against scipy.stats.mannwhitneyu,
whose p it reproduces bit for bit."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from benchkit.core.decisions.rank_test import apart, rank_p

# values from a few levels, so that ties come often, or any finite floats
SIDES = st.one_of(
    st.lists(st.sampled_from([-0.5, 0.0, 0.1, 0.25, 1.0]), min_size=0, max_size=45),
    st.lists(st.floats(-5, 5, allow_nan=False), min_size=0, max_size=45))


def scipy_p(before, after) -> float:
    if len(before) < 2 or len(after) < 2:
        return 1.0
    return float(stats.mannwhitneyu(after, before, alternative="two-sided").pvalue)


@settings(max_examples=400, deadline=None)
@given(SIDES, SIDES)
def test_the_p_is_scipys_bit_for_bit(before, after):
    before, after = np.array(before, dtype=float), np.array(after, dtype=float)
    assert rank_p(before, after) == scipy_p(before, after)


def test_short_untied_sides_take_the_exact_distribution():
    # 3 and 4 commits apart: the exact p is 2 / C(7, 3); the normal approximation's is not
    before, after = np.array([0.0, 0.1, 0.2]), np.array([1.0, 1.1, 1.2, 1.3])
    assert rank_p(before, after) == 2 / 35


def test_long_sides_and_all_ties():
    rng = np.random.default_rng(7)
    before, after = rng.normal(0, 0.1, 30), rng.normal(0.3, 0.1, 30)
    assert rank_p(before, after) == scipy_p(before, after) < 1e-6
    same = np.zeros(12)
    assert rank_p(same, same) == scipy_p(same, same) == 1.0
    assert rank_p(np.array([1.0]), after) == 1.0


def test_apart():
    assert apart(np.array([0.0, 0.1]), np.array([0.2, 0.3]))
    assert apart(np.array([0.2, 0.3]), np.array([0.0, 0.1]))
    assert not apart(np.array([0.0, 0.25]), np.array([0.2, 0.3]))
    assert not apart(np.array([0.0]), np.array([0.2, 0.3]))


def test_holm_steps_down_where_bonferroni_would_lose_a_step():
    """Holm's step-down: the smallest p against alpha / m, the next against alpha / (m - 1),
    ...; the first that fails stops it. Two real steps at p 0.01 and 0.02 both hold at 0.05
    (Bonferroni's 0.025 for each would lose the second); 0.03 fails its 0.05 / 3 and so
    does every larger p, though 0.04 < 0.05 / 2."""
    from benchkit.core.decisions.rank_test import holm_rejected
    assert holm_rejected([0.02, 0.01], 0.05) == [True, True]
    assert holm_rejected([0.001, 0.04, 0.03, 0.5], 0.05) == [True, False, False, False]
    assert holm_rejected([0.05], 0.05) == [False]                 # at alpha: not below it
    assert holm_rejected([], 0.01) == []
