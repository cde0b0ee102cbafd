"""Pure A/B decision statistics: is NEW faster, slower, unchanged, or is it too early to say?

The unit of evidence is the worker process (or the interleaved round), not the block: most of
a micro-benchmark's variance on a real machine lies between processes (layout, hash seeds)
and between moments (frequency, neighbours), so blocks of one process are not independent
evidence. Two designs:

- `decide_rounds` (core.round_verdicts): an interleaved A/B (`benchkit ab`). In every round
  a fresh BASE and NEW process alternate short trials in random order, so drift hits both
  sides of each pair. The rounds' log ratios are the samples: a t interval over rounds (a
  trimmed-mean one, with the error spent over the looks, when the A/B is sequential).
- `decide_runs`: two separately recorded runs (`benchkit run` + `compare`). Only chunks
  taken while the machine ran at full speed (speed probe) count. Processes started with
  reproducible layouts (hash seed, stack position, no ASLR) pair up across the runs, and the
  interval is a t interval over the pairs' log ratios; otherwise each process is one sample
  and the standard error comes from a hierarchical bootstrap (processes, then blocks).
  Separate runs cannot see drift between the moments they were taken, so the default band
  is wider, and a smaller change is reported as inconclusive, pointing to `benchkit ab`.

A change is claimed only when the whole confidence interval of the ratio lies outside the
noise band (and the test rejects equality at alpha); `unchanged` when it lies inside the band.
Every interval is one t interval (`t_interval`) around an estimate and its standard error.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from benchkit.core.enums import TextEnum

MIN_ROUNDS = 3
MIN_PROCESSES = 2


class Verdict(TextEnum):
    """NEW relative to BASE."""

    FASTER = "faster"
    SLOWER = "slower"
    UNCHANGED = "unchanged"
    INCONCLUSIVE = "inconclusive"

    @property
    def is_claim(self) -> bool:
        """A claimed change (faster or slower)."""
        return self in (Verdict.FASTER, Verdict.SLOWER)


class Design(TextEnum):
    """Where the evidence comes from: interleaved rounds (`ab`) or separate runs."""

    ROUNDS = "rounds"
    SEQUENTIAL = "sequential rounds"
    RUNS = "runs"

    @property
    def interleaved(self) -> bool:
        """Evidence from interleaved rounds (fixed or sequential)."""
        return self is not Design.RUNS


@dataclasses.dataclass(frozen=True)
class Decision:
    """NEW relative to BASE for one benchmark."""

    base_median: float            # seconds per run
    new_median: float
    ratio: float                  # estimated new/base time ratio
    ci_low: float                 # confidence interval of the ratio
    ci_high: float
    p_value: float
    verdict: Verdict
    reason: str
    n_base: int                   # units of evidence (processes or rounds) per side
    n_new: int
    noise: float                  # the band a change must clear, relative (0.02 == 2 %)
    detectable: float             # smallest change this data could have claimed, relative
    design: Design
    to_settle: float = math.nan   # inconclusive: units in all that would settle it (inf: never)

    @property
    def change(self) -> float:
        """Relative change: +0.05 is 5 % slower."""
        return self.ratio - 1.0


@dataclasses.dataclass(frozen=True)
class Interval:
    """A t interval of a log ratio: the estimate, its bounds and the two-sided p value."""

    estimate: float
    low: float
    high: float
    p: float

    @property
    def half_width(self) -> float:
        """Half the interval's width (log scale)."""
        return (self.high - self.low) / 2


def t_interval(estimate: float, se: float, df: int, alpha: float) -> Interval:
    """The (1 - alpha) t interval around `estimate` with standard error `se`, and the p value
    of the t test of estimate == 0. A zero standard error is a zero-width interval."""
    from scipy import stats as scipy_stats
    if se == 0.0:
        return Interval(estimate, estimate, estimate, 0.0 if estimate != 0.0 else 1.0)
    half = float(scipy_stats.t.ppf(1 - alpha / 2, df)) * se
    p = float(2 * scipy_stats.t.sf(abs(estimate) / se, df))
    return Interval(estimate, estimate - half, estimate + half, p)


def mean_interval(d: np.ndarray, alpha: float) -> Interval:
    """The t interval of the mean of `d` (one-sample t test against 0)."""
    sd = float(d.std(ddof=1))
    return t_interval(float(d.mean()), sd / math.sqrt(len(d)), len(d) - 1, alpha)


def _judge(ratio: float, low: float, high: float, p: float, alpha: float,
           noise: float) -> tuple[Verdict, str]:
    up, down = 1 + noise, 1 / (1 + noise)
    if low > up and p < alpha:
        return Verdict.SLOWER, f"CI above +{noise:.0%}"
    if high < down and p < alpha:
        return Verdict.FASTER, f"CI below -{noise:.0%}"
    if low >= down and high <= up:
        return Verdict.UNCHANGED, f"CI within +-{noise:.0%}"
    return Verdict.INCONCLUSIVE, f"CI [{low:.3f}, {high:.3f}] crosses the +-{noise:.0%} band"


def ratio_of(log_ratio: float) -> float:
    """exp(log_ratio), infinite instead of an OverflowError: a two-sample interval from a
    handful of wildly different times can be hundreds of log units wide."""
    return math.exp(log_ratio) if log_ratio < 709.0 else math.inf


def _decided(base_median: float, new_median: float, interval: Interval, *, alpha: float,
             noise: float, n_base: int, n_new: int, design: Design,
             note: str = "") -> Decision:
    """The Decision of a log-ratio interval judged against the +-noise band."""
    ratio, low, high = (ratio_of(interval.estimate), ratio_of(interval.low),
                        ratio_of(interval.high))
    verdict, reason = _judge(ratio, low, high, interval.p, alpha, noise)
    to_settle = math.nan
    if verdict is Verdict.INCONCLUSIVE:
        to_settle = units_to_settle(interval, min(n_base, n_new), noise)
    return Decision(base_median=base_median, new_median=new_median, ratio=ratio, ci_low=low,
                    ci_high=high, p_value=interval.p, verdict=verdict, reason=reason + note,
                    n_base=n_base, n_new=n_new, noise=noise,
                    detectable=_detectable(noise, interval.half_width), design=design,
                    to_settle=to_settle)


def units_to_settle(interval: Interval, units: int, noise: float) -> float:
    """How many units of evidence (rounds, processes) in all would make this interval clear
    the +-noise band or fit inside it, if the estimate and the spread stayed as they are:
    the half-width shrinks as 1/sqrt(units). Infinite when the estimate sits on the band's
    edge (no amount of data settles that)."""
    edge = math.log1p(noise)
    distance = abs(abs(interval.estimate) - edge)
    if distance <= 1e-12 or units < 1:
        return math.inf
    return float(math.ceil(units * (interval.half_width / distance) ** 2))


def _undecided(base_median: float, new_median: float, reason: str, *, n_base: int, n_new: int,
               noise: float, design: Design) -> Decision:
    nan = float("nan")
    ratio = new_median / base_median if base_median > 0 else nan
    return Decision(base_median=base_median, new_median=new_median, ratio=ratio, ci_low=nan,
                    ci_high=nan, p_value=nan, verdict=Verdict.INCONCLUSIVE, reason=reason,
                    n_base=n_base, n_new=n_new, noise=noise, detectable=nan, design=design)


def _detectable(noise: float, half_width: float) -> float:
    """Smallest slowdown whose interval (of this width) would clear the noise band."""
    return (1 + noise) * ratio_of(half_width) - 1


# ----------------------------------------------------------------------------- separate runs

PROBE_TOLERANCE = 0.15    # a chunk counts as "machine at full speed" within 15 % of the fastest
# One process a side says nothing of process-to-process variance (up to ~15 % here between
# processes with different hash seeds and layouts): only changes beyond this are judged.
SINGLE_PROCESS_BAND = 0.30


def _units(m, reference: float | None, tolerance: float) -> list[tuple[int | None, np.ndarray]]:
    """(layout, per-run times) per process kept for the decision: with speed probes, only
    the chunks taken while the machine ran within `tolerance` of its fastest (`reference`)."""
    samples = m.processes or [None]
    if reference is None or m.processes is None or not all(p.probes for p in m.processes):
        return [(getattr(s, "layout", None), np.asarray(t))
                for s, t in zip(samples, m.process_times()) if t]
    out = []
    for sample, chunks in zip(m.processes, m.chunk_times()):
        kept = [t for probe, c in zip(sample.probes, chunks) for t in c
                if probe <= reference * (1 + tolerance)]
        if kept:
            out.append((sample.layout, np.asarray(kept)))
    return out


def _paired(a: list, b: list) -> list[tuple[np.ndarray, np.ndarray]] | None:
    """Processes of both runs matched by layout, when every process has one."""
    if not a or not b or any(layout is None for layout, _ in a + b):
        return None
    by_layout = dict(a)
    return [(by_layout[layout], times) for layout, times in b if layout in by_layout]


def _probe_reference(base, new) -> float | None:
    probes = [x for m in (base, new) for p in (m.processes or []) for x in p.probes]
    has_all = all(m.processes is not None and all(p.probes for p in m.processes)
                  for m in (base, new))
    return min(probes) if probes and has_all else None


def _bootstrap_log_medians(units: list[np.ndarray], resamples: int,
                           rng: np.random.Generator) -> np.ndarray:
    """Hierarchical bootstrap: resample processes, then blocks within each; log of the pooled
    median per resample."""
    flat = np.concatenate(units)
    lengths = np.array([len(u) for u in units])
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    picks = rng.integers(0, len(units), size=(resamples, len(units)))
    picked_lengths = lengths[picks].ravel()
    picked_starts = np.repeat(starts[picks].ravel(), picked_lengths)
    within = np.floor(rng.random(picked_lengths.sum()) *
                      np.repeat(picked_lengths, picked_lengths)).astype(np.int64)
    values = flat[picked_starts + within]
    bounds = np.concatenate([[0], np.cumsum(lengths[picks].sum(axis=1))])
    return np.log([np.median(values[bounds[r]:bounds[r + 1]]) for r in range(resamples)])


def decide_runs(base, new, *, alpha: float = 0.01, noise: float = 0.05,
                probe_tolerance: float = PROBE_TOLERANCE, resamples: int = 1000,
                seed: int = 0) -> Decision:
    """Decide from two separately recorded Measurements (each ideally sampled across
    processes, with speed probes).

    Units are processes; with speed probes only the chunks taken at full machine speed count.
    Processes that pair up by layout give a t interval over the pairs; otherwise the interval
    is a t interval (df = fewer processes - 1) around the log ratio of pooled medians, with
    the standard error of a hierarchical bootstrap (processes, then blocks). When too few
    processes ran at full speed to decide, a change beyond the machine's slowdown is still
    claimed.
    """
    decision = _decide_runs_fine(base, new, alpha, noise, probe_tolerance, resamples, seed)
    if decision.verdict is Verdict.INCONCLUSIVE:
        gross = _gross_change(base, new, _probe_reference(base, new), alpha)
        if gross is not None:
            return gross
    return decision


def _decide_runs_fine(base, new, alpha: float, noise: float, probe_tolerance: float,
                      resamples: int, seed: int) -> Decision:
    base_median, new_median = base.median, new.median
    reference = _probe_reference(base, new)
    units = {"BASE": _units(base, reference, probe_tolerance),
             "NEW": _units(new, reference, probe_tolerance)}
    if base.num_processes == 1 or new.num_processes == 1:
        return _decide_single_processes(base, new, reference, probe_tolerance, alpha, noise)
    for side, m in (("BASE", base), ("NEW", new)):
        if len(units[side]) < MIN_PROCESSES:
            if m.num_processes < MIN_PROCESSES:
                why = (f"{side} was measured in {m.num_processes} process; need "
                       f"{MIN_PROCESSES}+ (benchkit run --processes) or use benchkit ab")
            else:
                why = (f"the machine was slow (busy) during most of {side}: "
                       f"{len(units[side])} of {m.num_processes} processes ran at full speed; "
                       "re-record at a quieter time or use benchkit ab")
            return _undecided(base_median, new_median, why, n_base=len(units["BASE"]),
                              n_new=len(units["NEW"]), noise=noise, design=Design.RUNS)
    pairs = _paired(units["BASE"], units["NEW"])
    if pairs is not None:
        return _decide_pairs(base_median, new_median, pairs, alpha, noise)
    a = [times for _, times in units["BASE"]]
    b = [times for _, times in units["NEW"]]
    estimate = (math.log(float(np.median(np.concatenate(b)))) -
                math.log(float(np.median(np.concatenate(a)))))
    rng = np.random.default_rng(seed)
    se = math.sqrt(float(np.var(_bootstrap_log_medians(a, resamples, rng), ddof=1)) +
                   float(np.var(_bootstrap_log_medians(b, resamples, rng), ddof=1)))
    interval = t_interval(estimate, se, min(len(a), len(b)) - 1, alpha)
    return _decided(base_median, new_median, interval, alpha=alpha, noise=noise,
                    n_base=len(a), n_new=len(b), design=Design.RUNS)


def _chunk_log_medians(m, reference: float | None, tolerance: float | None) -> list[float]:
    """log median per chunk; with `tolerance`, only chunks timed at full machine speed."""
    out = []
    for p, process_chunks in enumerate(m.chunk_times()):
        sample = m.processes[p] if m.processes else None
        probes = sample.probes if sample is not None else ()
        for k, times in enumerate(process_chunks):
            fast = (tolerance is None or reference is None or not probes
                    or probes[k] <= reference * (1 + tolerance))
            if fast and times:
                out.append(math.log(float(np.median(times))))
    return out


def _chunk_interval(a: list[float], b: list[float], alpha: float) -> Interval:
    """Welch-style t interval of the difference of median chunk log-times."""
    se = math.sqrt(np.var(a, ddof=1) / len(a) + np.var(b, ddof=1) / len(b))
    return t_interval(float(np.median(b) - np.median(a)), se, min(len(a), len(b)) - 1, alpha)


def _decide_single_processes(base, new, reference: float | None, tolerance: float,
                             alpha: float, noise: float) -> Decision:
    """A side measured in one process: chunks are the samples, and the band widens to
    SINGLE_PROCESS_BAND, since how much another process would differ is unknown."""
    band = max(noise, SINGLE_PROCESS_BAND)
    a = _chunk_log_medians(base, reference, tolerance)
    b = _chunk_log_medians(new, reference, tolerance)
    if len(a) < 2 or len(b) < 2:
        return _undecided(base.median, new.median,
                          "one process a side and too few chunks at full machine speed; "
                          "measure across processes (benchkit run) or use benchkit ab",
                          n_base=base.num_processes, n_new=new.num_processes, noise=band,
                          design=Design.RUNS)
    return _decided(base.median, new.median, _chunk_interval(a, b, alpha), alpha=alpha,
                    noise=band, n_base=base.num_processes, n_new=new.num_processes,
                    design=Design.RUNS,
                    note=" (one process a side: only changes beyond the wide band are judged; "
                         "benchkit run or benchkit ab measure finer)")


def _gross_change(base, new, reference: float | None, alpha: float) -> Decision | None:
    """When too few processes ran at full speed for a fine decision, a change far beyond what
    the busy machine could explain is still claimed: the band covers the worst slowdown the
    speed probes saw, times SINGLE_PROCESS_BAND for process-to-process variation."""
    probes = [x for m in (base, new) for p in (m.processes or []) for x in p.probes]
    if reference is None or not probes:
        return None
    slowdown = max(probes) / reference
    band = slowdown * (1 + SINGLE_PROCESS_BAND) - 1
    a = _chunk_log_medians(base, None, None)
    b = _chunk_log_medians(new, None, None)
    if len(a) < 2 or len(b) < 2:
        return None
    decision = _decided(base.median, new.median, _chunk_interval(a, b, alpha), alpha=alpha,
                        noise=band, n_base=base.num_processes, n_new=new.num_processes,
                        design=Design.RUNS,
                        note=f" (the machine was busy, up to x{slowdown:.2f} slower, so only a "
                             "change beyond that is judged; re-record at a quieter time for a "
                             "finer answer)")
    return decision if decision.verdict.is_claim else None


def _decide_pairs(base_median: float, new_median: float,
                  pairs: list[tuple[np.ndarray, np.ndarray]], alpha: float,
                  noise: float) -> Decision:
    """Separate runs whose processes pair up by layout: a t interval over the pairs' log
    ratios, so what a layout does to the time cancels within each pair."""
    if len(pairs) < MIN_ROUNDS:
        return _undecided(base_median, new_median,
                          f"{len(pairs)} process layouts ran at full speed in both runs; need "
                          f"{MIN_ROUNDS} (record again, raise --processes, or use benchkit ab)",
                          n_base=len(pairs), n_new=len(pairs), noise=noise, design=Design.RUNS)
    d = np.array([math.log(float(np.median(b)) / float(np.median(a))) for a, b in pairs])
    return _decided(base_median, new_median, mean_interval(d, alpha), alpha=alpha, noise=noise,
                    n_base=len(pairs), n_new=len(pairs), design=Design.RUNS)
