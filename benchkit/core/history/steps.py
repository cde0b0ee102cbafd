"""Steps in a series (pure).

Instruction counts are deterministic: a step is any change that leaves the layout bands of
the commits on either side (no statistics, so an unchanged benchmark never shows a step).

Wall time: ruptures' kernel change-point detection (PELT on a linear kernel, which is the
least-squares mean-shift model, implemented in C) proposes where the level of log(median)
moves, with a penalty on each step scaled to the series' own noise (the median absolute
difference of neighbouring commits). Each proposal must then be confirmed twice before it is
reported: by the commits on either side (a t test of their log medians, or a prediction
interval when one side is a single commit), and, where the measurements are stored, by the
per-process evidence of the commits next to it (`verdicts.decide_runs` of the pooled
processes). Both must clear the noise band.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, Sequence

import numpy as np

from benchkit.core.bands import instruction_change
from benchkit.core.history.series import (Commit, HistoryMetric, Point, Series,
                                          probe_relative_times)
from benchkit.core.verdicts import Interval, ratio_of, t_interval

DEFAULT_ALPHA = 0.01
DEFAULT_NOISE = 0.02
PENALTY_PER_LOG_N = 3.0    # the penalty of one step: this many times log(points)
NEIGHBOURS = 5             # commits on each side whose processes confirm a time step
NOISE_FLOOR = 1e-3         # relative; a series quieter than this is scaled as if it were this


@dataclasses.dataclass(frozen=True)
class MovedFunction:
    """A function whose instructions per run changed across a step."""

    function: str
    before: float
    after: float

    @property
    def delta(self) -> float:
        """Instructions per run after minus before."""
        return self.after - self.before


@dataclasses.dataclass(frozen=True)
class Step:
    """A change in one series between two neighbouring commits. `change` is relative (+0.10:
    10 % slower or 10 % more instructions), `ci_low`/`ci_high` its interval (for
    instructions, the change from band edge to band edge)."""

    benchmark: str
    metric: HistoryMetric
    machine: str
    previous: Commit
    commit: Commit
    before: float
    after: float
    change: float
    ci_low: float
    ci_high: float
    functions: tuple[MovedFunction, ...] = ()
    evidence: str = ""

    def to_json(self) -> dict[str, Any]:
        """The JSON object `benchkit history regressions --json` prints."""
        return {"benchmark": self.benchmark, "metric": str(self.metric),
                "machine": self.machine, "commit": self.commit.sha,
                "previous_commit": self.previous.sha, "commit_date": self.commit.date,
                "message": self.commit.message, "before": self.before, "after": self.after,
                "change": self.change, "ci_low": self.ci_low, "ci_high": self.ci_high,
                "evidence": self.evidence,
                "functions": [{"function": f.function, "before": f.before, "after": f.after,
                               "delta": f.delta} for f in self.functions]}


def moved_functions(before: Sequence[Any], after: Sequence[Any], top: int = 10
                    ) -> tuple[MovedFunction, ...]:
    """The functions whose instructions per run changed most between two commits'
    CallgrindStats (the first of each side; baseline subtracted, paths standardised, as
    `benchkit diff` compares them)."""
    from benchkit.core.callgrind.counts import diff_counts
    if not before or not after:
        return ()
    a, b = before[0], after[0]
    rows = diff_counts(a.as_standardized(thorough=True).stats(subtract_baseline=True),
                       b.as_standardized(thorough=True).stats(subtract_baseline=True)).rows()
    moved = [MovedFunction(fn, (count_a or 0) / a.number_per_run,
                           (count_b or 0) / b.number_per_run)
             for fn, _, count_a, count_b, _ in rows]
    moved = [f for f in moved if f.delta]
    moved.sort(key=lambda f: (-abs(f.delta), f.function))
    return tuple(moved[:top])


def instruction_steps(series: Series,
                      evidence: Callable[[Point], Sequence[Any]] | None = None
                      ) -> list[Step]:
    """Every change between neighbouring commits that leaves both layout bands."""
    steps = []
    points = series.points
    for prev, cur in zip(points, points[1:]):
        if prev.value == cur.value and prev.low == cur.low and prev.high == cur.high:
            continue
        if instruction_change(prev.band(), cur.band()) == 0 or prev.value <= 0:
            continue
        functions = moved_functions(evidence(prev), evidence(cur)) if evidence else ()
        steps.append(Step(series.benchmark, series.metric, series.machine, prev.commit,
                          cur.commit, prev.value, cur.value, cur.value / prev.value - 1,
                          cur.low / prev.high - 1, cur.high / prev.low - 1, functions,
                          "outside both layout bands"))
    return steps


def noise_of(logs: np.ndarray) -> float:
    """The series' noise (log scale): the median absolute difference of neighbouring
    commits over sqrt(2), scaled to a standard deviation, never below NOISE_FLOOR."""
    if len(logs) < 3:
        return NOISE_FLOOR
    mad = float(np.median(np.abs(np.diff(logs)))) / (0.6745 * math.sqrt(2))
    return max(mad, NOISE_FLOOR)


def despiked(logs: np.ndarray) -> np.ndarray:
    """A running median of three (the ends kept): one slow commit between normal ones is
    an outlier, not two steps, while a step keeps its place and a change at the newest
    commit stays visible."""
    if len(logs) < 3:
        return logs
    padded = np.concatenate([logs[:1], logs, logs[-1:]])
    out = np.median(np.stack([padded[:-2], padded[1:-1], padded[2:]]), axis=0)
    out[0], out[-1] = logs[0], logs[-1]
    return out


def proposed_steps(logs: np.ndarray, penalty: float = PENALTY_PER_LOG_N) -> list[int]:
    """Indexes where ruptures' PELT (linear kernel) puts a change in level: each is the
    first point after a step."""
    import ruptures
    n = len(logs)
    if n < 3:
        return []
    scaled = ((despiked(logs) - np.median(logs)) / noise_of(logs)).reshape(-1, 1)
    ends = ruptures.KernelCPD(kernel="linear", min_size=1).fit(scaled).predict(
        pen=penalty * math.log(n))
    return [int(e) for e in ends[:-1]]


def _segment_interval(before: np.ndarray, after: np.ndarray, alpha: float):
    """The interval of the level change between two runs of log medians: Yuen's trimmed
    t (20 % trimmed means, so a slow commit inside a run does not hide a step) when both
    have three or more commits, Welch's with two, and a prediction interval around the
    other side's median for a single commit at the newest end."""
    if len(before) >= 2 and len(after) >= 2:
        from scipy import stats as scipy_stats
        trim = 0.2 if min(len(before), len(after)) >= 3 else 0.0
        result = scipy_stats.ttest_ind(after, before, equal_var=False, trim=trim)
        low, high = result.confidence_interval(1 - alpha)
        estimate = (scipy_stats.trim_mean(after, trim) - scipy_stats.trim_mean(before, trim))
        if not (math.isfinite(low) and math.isfinite(high)):
            return None
        return Interval(float(estimate), float(low), float(high), float(result.pvalue))
    many, one = (before, after) if len(before) >= 2 else (after, before)
    if len(many) < 2:
        return None
    spread = float(np.median(np.abs(many - np.median(many)))) / 0.6745
    spread = max(spread, float(many.std(ddof=1)) if len(many) < 5 else spread, NOISE_FLOOR)
    sign = 1 if many is before else -1
    return t_interval(sign * float(one.mean() - np.median(many)),
                      spread * math.sqrt(1 + 1 / len(many)), len(many) - 1, alpha)


def _clears(low: float, high: float, p: float, noise: float, alpha: float) -> bool:
    band = math.log1p(noise)
    return p < alpha and (low > band or high < -band)


def time_steps(series: Series, evidence: Callable[[Point], Sequence[Any]] | None = None, *,
               alpha: float = DEFAULT_ALPHA, noise: float = DEFAULT_NOISE,
               penalty: float = PENALTY_PER_LOG_N) -> list[Step]:
    """The confirmed steps in a wall-time series (module docstring)."""
    points = series.points
    values = np.array([p.value for p in points], dtype=float)
    if all(p.relative for p in points):
        # in units of the machine's speed when each was measured, scaled back to seconds
        relatives = np.array([p.relative for p in points], dtype=float)
        values = relatives * float(np.median(values / relatives))
    if len(points) < 3 or not np.all(values > 0):
        return []
    logs = np.log(values)
    proposals = proposed_steps(logs, penalty)
    edges = [0, *proposals, len(points)]
    steps = []
    for k, at in enumerate(proposals):
        before, after = logs[edges[k]:at], logs[at:edges[k + 2]]
        at_the_end = edges[k + 2] == len(points)
        if len(before) < 2 or (len(after) < 2 and not at_the_end):
            continue        # one commit between two others is an outlier, not a level
        interval = _segment_interval(before, after, alpha)
        if (interval is None or interval.p >= alpha
                or abs(interval.estimate) <= math.log1p(noise)):
            continue
        clear = _clears(interval.low, interval.high, interval.p, noise, alpha)
        how = f"commits on either side: {len(before)} and {len(after)}"
        if len(after) == 1:
            how += (" (the newest commit alone: one slow run looks the same; measure it "
                    "again or wait for the next commit)")
        decision = None if evidence is None else _evidence_decision(
            points, at, edges[k], edges[k + 2], evidence, alpha, noise)
        if decision is not None:
            # the level moved beyond the band; the processes next to the step must agree
            if not decision.verdict.is_claim or (decision.ratio > 1) != (interval.estimate > 0):
                continue
            how += (f"; processes of the neighbouring commits: {decision.verdict} "
                    f"[{decision.ci_low - 1:+.1%}, {decision.ci_high - 1:+.1%}]")
        elif not clear:
            continue        # no processes stored: the commits alone must clear the band
        level_before = math.exp(float(np.median(before)))
        level_after = level_before * ratio_of(interval.estimate)
        steps.append(Step(series.benchmark, series.metric, series.machine,
                          points[at - 1].commit, points[at].commit, level_before,
                          level_after, level_after / level_before - 1,
                          ratio_of(interval.low) - 1, ratio_of(interval.high) - 1, (), how))
    return steps


def _evidence_decision(points, at, start, end, evidence, alpha, noise):
    from benchkit.core.verdicts import decide_runs

    def measurements(chosen):
        return [m for p in chosen for m in evidence(p) if m.processes]
    before = measurements(points[max(start, at - NEIGHBOURS):at])
    after = measurements(points[at:min(end, at + NEIGHBOURS)])
    if not before or not after:
        return None
    probes = [x for m in before + after for p in m.processes for x in p.probes]
    reference = float(np.median(probes)) if probes else None
    return decide_runs(_pooled(before, reference), _pooled(after, reference), alpha=alpha,
                       noise=noise)


def _pooled(ms: Sequence[Any], reference: float | None):
    """One Measurement holding the processes of several (per-run times). With speed probes
    on every process, times are taken at the `reference` probe's speed: a commit measured
    while the machine ran slow counts at the speed of the others."""
    from benchkit.core.measurement import Measurement, ProcessSample
    relative = [probe_relative_times(m) for m in ms]
    scale = reference is not None and None not in relative
    times, processes = [], []
    for m, over_probes in zip(ms, relative):
        per_process = ([[t * reference for t in process] for process in over_probes]
                       if scale else m.process_times())
        for sample, process_times in zip(m.processes, per_process):
            times += process_times
            processes.append(ProcessSample(sample.chunks, (), None))
    return Measurement(1, times, ms[0].task_spec, None, processes)


def steps_of(series: Series, evidence=None, **options) -> list[Step]:
    """The steps of a series of either metric."""
    if series.metric is HistoryMetric.INSTRUCTIONS:
        return instruction_steps(series, evidence)
    return time_steps(series, evidence, **options)

