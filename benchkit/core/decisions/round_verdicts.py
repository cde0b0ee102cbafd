"""Verdicts of an interleaved A/B (`benchkit ab`), pure: in every round a fresh BASE and NEW
process alternate short trials in random order; a round's evidence is the median of its trial
pairs' log ratios. A fixed design judges all rounds at the end (a t interval of the mean); a
sequential one (core.sequential) stops each benchmark once clear, with the error spent over the
looks and a trimmed-mean interval. The shared machinery (Decision, intervals, the band) is in
core.verdicts."""
from __future__ import annotations

import dataclasses
import math
from typing import Sequence

import numpy as np

from benchkit.core.decisions import sequential
from benchkit.core.decisions.sequential import SequentialPlan
from benchkit.core.decisions.verdicts import (MIN_ROUNDS, Decision, Design, Verdict, _decided,
                                    _undecided, mean_interval, t_interval)



def trial_log_ratios(base_trials: Sequence[Sequence[float]],
                     new_trials: Sequence[Sequence[float]]) -> np.ndarray:
    """log(median NEW / median BASE) of each paired trial (per-run times)."""
    if len(base_trials) != len(new_trials):
        raise ValueError("base and new must have the same number of trials")
    return np.array([math.log(float(np.median(n)) / float(np.median(b)))
                     for b, n in zip(base_trials, new_trials)])


def decide_rounds(base_rounds: Sequence[Sequence[Sequence[float]]],
                  new_rounds: Sequence[Sequence[Sequence[float]]], *,
                  alpha: float = 0.01, noise: float | None = 0.01,
                  plan: SequentialPlan | None = None) -> Decision:
    """Decide from an interleaved A/B: `rounds[r][k]` are the per-run times of trial k of
    round r; trial k of BASE and of NEW were taken back to back.

    With a SequentialPlan (an A/B that stopped each benchmark once its verdict was clear) the
    interval is Yuen's trimmed-mean t interval at the error the plan spent on this many
    rounds (core.sequential), and `noise=None` is the band that follows the rounds' spread;
    without, a t interval of the mean at `alpha`."""
    base_all = [t for rnd in base_rounds for trial in rnd for t in trial]
    new_all = [t for rnd in new_rounds for trial in rnd for t in trial]
    base_median = float(np.median(base_all)) if base_all else float("nan")
    new_median = float(np.median(new_all)) if new_all else float("nan")
    rounds = [float(np.median(trial_log_ratios(b, n)))
              for b, n in zip(base_rounds, new_rounds) if len(b) and len(n)]
    if plan is not None:
        return _decide_sequential(base_median, new_median, np.asarray(rounds), alpha, noise,
                                  plan)
    if noise is None:
        raise ValueError("a fixed-rounds A/B needs its band (noise)")
    if len(rounds) < MIN_ROUNDS:
        return _undecided(base_median, new_median,
                          f"{len(rounds)} rounds; need {MIN_ROUNDS} (raise --rounds)",
                          n_base=len(rounds), n_new=len(rounds), noise=noise,
                          design=Design.ROUNDS)
    return _decided(base_median, new_median, mean_interval(np.asarray(rounds), alpha),
                    alpha=alpha, noise=noise, n_base=len(rounds), n_new=len(rounds),
                    design=Design.ROUNDS)


def _decide_sequential(base_median: float, new_median: float, rounds: np.ndarray,
                       alpha: float, noise: float | None, plan: SequentialPlan) -> Decision:
    band = sequential.auto_band(rounds) if noise is None else noise
    level = plan.alpha_at(len(rounds), alpha)
    if level <= 0.0:
        return _undecided(base_median, new_median,
                          f"{len(rounds)} rounds; the first verdict is taken after "
                          f"{plan.first_look} (raise --max-rounds or --max-time)",
                          n_base=len(rounds), n_new=len(rounds), noise=band,
                          design=Design.SEQUENTIAL)
    estimate, se, df = sequential.trimmed(rounds)
    decision = _decided(base_median, new_median, t_interval(estimate, se, df, level),
                        alpha=level, noise=band, n_base=len(rounds), n_new=len(rounds),
                        design=Design.SEQUENTIAL)
    if decision.verdict is Verdict.INCONCLUSIVE:
        # No claim: is it unchanged, by the equivalence test's own (larger) error?
        equivalence = plan.alpha_at(len(rounds), plan.equivalence_error)
        if equivalence > level:
            judged = _decided(base_median, new_median,
                              t_interval(estimate, se, df, equivalence), alpha=equivalence,
                              noise=band, n_base=len(rounds), n_new=len(rounds),
                              design=Design.SEQUENTIAL)
            if judged.verdict is Verdict.UNCHANGED:
                decision = judged
    if decision.verdict is Verdict.INCONCLUSIVE and len(rounds) >= plan.max_rounds:
        return dataclasses.replace(decision, reason=decision.reason +
                                   f"; all {plan.max_rounds} rounds of the budget used")
    return decision
