"""Decision statistics on synthetic data with known truth (tests/noise_model.py)."""
import math

import numpy as np
import pytest

from benchkit.core.decisions import round_verdicts, verdicts
from benchkit.core.measure.measurement import Measurement, ProcessSample
from benchkit.core.measure.task import TaskSpec
from noise_model import Machine


def _claims(decisions):
    return sum(d.verdict in ("faster", "slower") for d in decisions)


@pytest.mark.slow
def test_separate_runs_make_no_false_claims_on_identical_code():
    decisions = []
    for seed in range(150):
        machine = Machine(seed)
        decisions.append(verdicts.decide_runs(machine.run(10e-6), machine.run(10e-6),
                                             resamples=300))
    assert _claims(decisions) == 0
    assert sum(d.verdict == "unchanged" for d in decisions) > 30


@pytest.mark.slow
def test_separate_runs_detect_a_large_change_in_the_right_direction():
    def pair(seed, new_time):
        return verdicts.decide_runs(Machine(seed, slow_fraction=0.2).run(10e-6),
                                   Machine(seed + 1000, slow_fraction=0.2).run(new_time),
                                   resamples=300)
    slower = [pair(s, 13e-6) for s in range(40)]
    faster = [pair(s, 7e-6) for s in range(40)]
    assert sum(d.verdict == "slower" for d in slower) >= 24
    assert sum(d.verdict == "faster" for d in faster) >= 24
    assert all(d.verdict in ("slower", "inconclusive") for d in slower)
    assert all(d.verdict in ("faster", "inconclusive") for d in faster)
    judged = [d for d in slower if math.isfinite(d.ci_low)]
    assert sum(d.ci_low <= 1.3 <= d.ci_high for d in judged) >= 0.9 * len(judged)


@pytest.mark.slow
def test_paired_layouts_make_no_false_claims_and_resolve_what_unpaired_runs_cannot():
    same = [verdicts.decide_runs(Machine(s).run(10e-6, layouts=True),
                                Machine(s + 500).run(10e-6, layouts=True)) for s in range(150)]
    assert _claims(same) == 0
    ten = [verdicts.decide_runs(Machine(s, slow_fraction=0.2).run(10e-6, layouts=True),
                               Machine(s + 500, slow_fraction=0.2).run(11e-6, layouts=True))
           for s in range(40)]
    unpaired = [verdicts.decide_runs(Machine(s, slow_fraction=0.2).run(10e-6),
                                    Machine(s + 500, slow_fraction=0.2).run(11e-6),
                                    resamples=300) for s in range(40)]
    assert sum(d.verdict == "slower" for d in ten) >= 25
    assert sum(d.verdict == "slower" for d in ten) > sum(
        d.verdict == "slower" for d in unpaired)
    assert all(d.verdict in ("slower", "inconclusive") for d in ten)


def test_blocks_of_one_busy_run_do_not_fake_a_slowdown():
    """NEW was recorded while a neighbour kept the machine slow throughout: without the
    speed probe its median is 1.7x; with it the decision says why it cannot judge."""
    quiet, busy = Machine(1, slow_fraction=0.0), Machine(2, slow_fraction=1.0)
    d = verdicts.decide_runs(quiet.run(10e-6), busy.run(10e-6), resamples=300)
    assert d.new_median / d.base_median > 1.6
    assert d.verdict == "inconclusive" and "slow (busy) during most of NEW" in d.reason


def test_a_change_far_beyond_the_busy_machine_is_still_claimed():
    """Too few processes at full speed for a fine decision, but 4x is more than a machine
    1.7x slower explains: claimed, against a band widened by the probes' worst slowdown."""
    quiet, busy = Machine(1, slow_fraction=0.0), Machine(2, slow_fraction=1.0)
    d = verdicts.decide_runs(quiet.run(10e-6), busy.run(40e-6), resamples=300)
    assert d.verdict == "slower" and "machine was busy" in d.reason
    assert d.noise > 0.9                            # the band covers x1.7 slowdown, and more
    d = verdicts.decide_runs(busy.run(40e-6), quiet.run(10e-6), resamples=300)
    assert d.verdict == "faster"
    d = verdicts.decide_runs(quiet.run(10e-6), busy.run(12.5e-6), resamples=300)
    assert d.verdict == "inconclusive"       # x1.25 * x1.7 is within what the machine explains


def test_one_process_per_side_is_inconclusive_and_says_what_would_settle_it():
    one = Measurement(1, [1e-6] * 20, TaskSpec("x", "pass"))
    d = verdicts.decide_runs(one, one)
    assert d.verdict == "inconclusive" and "benchkit ab" in d.reason


def test_without_probes_processes_still_are_the_units():
    def run(scale, seed):
        rng = np.random.default_rng(seed)
        effects = np.exp(rng.normal(0, 0.05, 6))
        times = [t for e in effects for t in scale * e * (1 + 0.001 * rng.random(30))]
        return Measurement(1, times, TaskSpec("x", "pass"),
                           processes=[ProcessSample((30,))] * 6)
    # 5 % process-to-process spread: a 2 % shift must not be claimed from 180 blocks a side
    d = verdicts.decide_runs(run(1.0, 1), run(1.02, 2), noise=0.0)
    assert d.verdict == "inconclusive" and d.n_base == 6


@pytest.mark.slow
def test_interleaved_rounds_make_no_false_claims_and_catch_ten_percent():
    same = [round_verdicts.decide_rounds(*Machine(s).interleaved(10e-6, 10e-6)) for s in range(150)]
    assert _claims(same) == 0
    ten = [round_verdicts.decide_rounds(*Machine(s, process_sd=0.01).interleaved(10e-6, 11e-6))
           for s in range(60)]
    assert sum(d.verdict == "slower" for d in ten) >= 57
    assert all(d.verdict != "faster" for d in ten)
    assert all(abs(d.ratio - 1.1) < 0.03 for d in ten)


def test_interleaved_needs_rounds():
    base, new = Machine(0).interleaved(1e-6, 2e-6, rounds=2)
    d = round_verdicts.decide_rounds(base, new)
    assert d.verdict == "inconclusive" and "need 3" in d.reason


def test_identical_rounds_are_unchanged_with_a_zero_width_interval():
    rounds = [[[1e-6, 1e-6]] * 4] * 5
    d = round_verdicts.decide_rounds(rounds, rounds)
    assert d.verdict == "unchanged" and d.ci_low == d.ci_high == d.ratio == 1.0


def test_trial_log_ratios_pair_by_position():
    ratios = round_verdicts.trial_log_ratios([[1.0, 1.0], [2.0]], [[1.1, 1.1], [1.0]])
    assert ratios == pytest.approx([math.log(1.1), math.log(0.5)])
    with pytest.raises(ValueError):
        round_verdicts.trial_log_ratios([[1.0]], [])


def test_detectable_grows_with_the_interval():
    assert verdicts._detectable(0.02, 0.0) == pytest.approx(0.02)
    assert verdicts._detectable(0.02, math.log(1.1)) == pytest.approx(1.02 * 1.1 - 1)


def test_an_inconclusive_verdict_says_how_many_units_would_settle_it():
    import math
    from benchkit.core.decisions.verdicts import Interval, units_to_settle
    # ratio 1.015 with a +-0.01 (log) half-width after 10 rounds, against a 2 % band:
    # the interval must shrink to the 0.0048 between the estimate and the band's edge.
    interval = Interval(math.log(1.015), math.log(1.015) - 0.01, math.log(1.015) + 0.01, 0.2)
    distance = math.log(1.02) - math.log(1.015)
    assert units_to_settle(interval, 10, 0.02) == math.ceil(10 * (0.01 / distance) ** 2)
    on_edge = Interval(math.log(1.02), math.log(1.02) - 0.01, math.log(1.02) + 0.01, 0.1)
    assert units_to_settle(on_edge, 10, 0.02) == math.inf


def test_the_report_prints_what_would_settle_an_inconclusive_benchmark():
    import numpy as np
    from benchkit.core.decisions.round_verdicts import decide_rounds
    rng = np.random.default_rng(3)
    base = [[[1.0 + 0.01 * rng.standard_normal()]] for _ in range(8)]
    new = [[[1.015 + 0.01 * rng.standard_normal()]] for _ in range(8)]
    decision = decide_rounds(base, new, noise=0.02)
    assert decision.verdict == "inconclusive" and decision.to_settle > 8
    from benchkit.core.compare.report import _settle
    assert _settle(decision) == (f"; about {int(decision.to_settle) - 8} more rounds would "
                                 "settle it at this spread")


def test_an_interval_hundreds_of_log_units_wide_is_an_infinite_ratio_not_an_overflow():
    # found by the results-file fuzzer: one raw time replaced by 16 s among 1.2e-07 s ones
    interval = verdicts.Interval(0.0, -711.0, 711.0, 1.0)
    decision = verdicts._decided(1.2e-07, 1.2e-07, interval, alpha=0.01, noise=0.05, n_base=2,
                                 n_new=2, design=verdicts.Design.RUNS)
    assert decision.verdict is verdicts.Verdict.INCONCLUSIVE
    assert decision.ci_low < 1e-300 and decision.ci_high == math.inf
