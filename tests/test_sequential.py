"""Sequential A/B decisions (core.sequential and decide_rounds with a plan): the looks, the
error spent, Yuen's interval, the band that follows the noise, and the false-claim and
detection rates with stopping on the noise model."""
import math

import numpy as np
import pytest

from benchkit.core.decisions import round_verdicts, verdicts
from benchkit.core.decisions.sequential import (BAND_FLOOR, SequentialPlan, auto_band, spent, trimmed)
from benchkit.errors import SchemaError
from noise_model import Machine


def test_looks_grow_by_the_factor_and_end_at_the_budget():
    assert SequentialPlan(30).looks() == (5, 6, 8, 10, 12, 15, 19, 24, 30)
    assert SequentialPlan(100, 6, 1.5).looks() == (6, 9, 14, 21, 32, 48, 72, 100)
    assert SequentialPlan(5).looks() == (5,)


def test_the_looks_spend_exactly_alpha_and_nothing_before_the_first():
    plan = SequentialPlan(30)
    assert sum(plan.alpha_at(n, 0.01) for n in plan.looks()) == pytest.approx(0.01)
    assert plan.alpha_at(4, 0.01) == 0.0
    assert plan.alpha_at(5, 0.01) == pytest.approx(spent(5 / 30, 0.01))
    # a budget that stopped between looks (after 9): what was spent since the look at 8
    assert plan.alpha_at(9, 0.01) == pytest.approx(spent(9 / 30, 0.01) - spent(8 / 30, 0.01))
    assert spent(1.0, 0.01) == pytest.approx(0.01) and spent(0.0, 0.01) == 0.0


def test_plans_no_ab_could_run_are_refused():
    with pytest.raises(ValueError):
        SequentialPlan(30, first_look=2)
    with pytest.raises(ValueError):
        SequentialPlan(4, first_look=5)
    with pytest.raises(SchemaError, match="ab.sequential"):
        SequentialPlan.from_dict({"max_rounds": 3, "first_look": 5, "growth": 1.25})
    plan = SequentialPlan(40, 6, 1.5)
    assert SequentialPlan.from_dict(plan.to_dict()) == plan


def test_yuens_trimmed_mean_and_its_standard_error():
    # 20 % of 10 trimmed each side: mean of 3..8; winsorized 3,3,3,4,5,6,7,8,8,8 has
    # variance 42.5 / 9; se = sd * sqrt(9) / sqrt(6 * 5); df = 6 - 1
    mean, se, df = trimmed(np.arange(1.0, 11.0))
    assert mean == 5.5 and df == 5
    assert se == pytest.approx(math.sqrt(42.5 / 9) * 3 / math.sqrt(30))
    # one wild round moves it not at all
    assert trimmed(np.array([1.0, 2, 3, 4, 5, 6, 7, 8, 9, 1000]))[0] == 5.5


def test_the_band_follows_the_spread_with_a_floor():
    quiet = np.array([0.001, -0.001, 0.002, -0.002, 0.0, 0.05, -0.06])
    assert auto_band(quiet) == BAND_FLOOR            # the tails do not widen it
    noisy = np.random.default_rng(0).normal(0, 0.03, 40)
    # the winsorized spread of normal rounds is about half their standard deviation
    assert 0.012 < auto_band(noisy) < 0.018
    assert auto_band(np.array([0.0])) == BAND_FLOOR


def _stopped(machine: Machine, base_time: float, new_time: float, plan: SequentialPlan):
    """What `benchkit ab` does with a sequential plan, on the noise model: a verdict at
    each look, stop at the first clear one."""
    base, new = machine.interleaved(base_time, new_time, rounds=plan.max_rounds)
    for n in plan.looks():
        decision = round_verdicts.decide_rounds(base[:n], new[:n], plan=plan, noise=None)
        if decision.verdict is not verdicts.Verdict.INCONCLUSIVE:
            break
    return decision


@pytest.mark.slow
def test_stopping_early_makes_no_false_claims_on_identical_code():
    # rounds with a core a few tenths of a percent wide, as measured on this machine
    plan = SequentialPlan(30)
    same = [_stopped(Machine(s, process_sd=0.002), 10e-6, 10e-6, plan) for s in range(200)]
    assert sum(d.verdict.is_claim for d in same) == 0
    unchanged = [d for d in same if d.verdict is verdicts.Verdict.UNCHANGED]
    assert len(unchanged) >= 190
    # and it stops early: most A/As settle well before the budget
    assert np.median([d.n_base for d in unchanged]) <= 8


@pytest.mark.slow
def test_stopping_early_detects_two_percent_in_the_right_direction():
    plan = SequentialPlan(30)
    slower = [_stopped(Machine(s, process_sd=0.002), 10e-6, 10.2e-6, plan)
              for s in range(100)]
    assert sum(d.verdict is verdicts.Verdict.SLOWER for d in slower) >= 90
    assert not any(d.verdict is verdicts.Verdict.FASTER for d in slower)
    gross = [_stopped(Machine(s, process_sd=0.002), 10e-6, 12e-6, plan) for s in range(50)]
    assert all(d.verdict is verdicts.Verdict.SLOWER and d.n_base == 5 for d in gross)


@pytest.mark.slow
def test_a_noisy_benchmark_gets_a_wider_band_and_says_so():
    plan = SequentialPlan(30)
    noisy = [_stopped(Machine(s, process_sd=0.03), 10e-6, 10e-6, plan) for s in range(50)]
    assert sum(d.verdict.is_claim for d in noisy) == 0
    assert min(d.noise for d in noisy) > BAND_FLOOR
    assert np.median([d.noise for d in noisy]) > 0.02


def test_before_the_first_look_nothing_is_decided():
    base, new = Machine(0).interleaved(10e-6, 20e-6, rounds=4)
    d = round_verdicts.decide_rounds(base, new, plan=SequentialPlan(30), noise=None)
    assert d.verdict is verdicts.Verdict.INCONCLUSIVE and "after 5" in d.reason


def _as_rounds(log_ratios):
    """One one-run trial per round: BASE 1.0, NEW exp(log ratio)."""
    return [[[1.0]] for _ in log_ratios], [[[math.exp(x)]] for x in log_ratios]


def test_unchanged_spends_the_equivalence_error_and_claims_keep_alpha():
    base, new = _as_rounds([0.002, -0.002, 0.001, -0.001, 0.0])
    strict = SequentialPlan(30, equivalence_error=0.01)      # alpha for both ways
    judged = round_verdicts.decide_rounds(base, new, alpha=0.01, noise=None,
                                          plan=SequentialPlan(30))
    assert judged.verdict is verdicts.Verdict.UNCHANGED
    assert 0.994 < judged.ci_low < judged.ci_high < 1.006       # the equivalence interval
    assert round_verdicts.decide_rounds(base, new, alpha=0.01, noise=None,
                                        plan=strict).verdict is verdicts.Verdict.INCONCLUSIVE
    # A change just beyond the band: the equivalence interval is clear of it, the claim's
    # is not; no claim is made on the equivalence test's error.
    base, new = _as_rounds([0.016 + x for x in (0.002, -0.002, 0.001, -0.001, 0.0)])
    judged = round_verdicts.decide_rounds(base, new, alpha=0.01, noise=None,
                                          plan=SequentialPlan(30))
    assert judged.verdict is verdicts.Verdict.INCONCLUSIVE
    assert judged.ci_low < 1.01 < judged.ci_high


def test_plans_without_an_equivalence_error_read_as_the_default():
    plan = SequentialPlan.from_dict({"max_rounds": 30, "first_look": 5, "growth": 1.25})
    assert plan.equivalence_error == 0.10
    with pytest.raises(SchemaError, match="ab.sequential"):
        SequentialPlan.from_dict({"max_rounds": 30, "first_look": 5, "growth": 1.25,
                                  "equivalence_error": 1.5})
