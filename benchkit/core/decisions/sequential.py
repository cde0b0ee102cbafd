"""Sequential decisions for an interleaved A/B (pure): look at the rounds as they come, stop a
benchmark as soon as its verdict is clear, and keep the intervals valid under that stopping.

Validity comes from alpha spending (Lan & DeMets, "Discrete sequential boundaries for clinical
trials", Biometrika 1983): the error `alpha` is spent over the looks by the Pocock-type
spending function alpha * ln(1 + (e - 1) * t), t = rounds / max_rounds. Each look's interval
is taken at that look's increment of the spent error, so by the union bound the chance that
any look's interval misses the true ratio is at most `alpha`, however the stopping turned out
(conservative: the looks' correlation is not used, which would need normal increments that
round ratios with heavy tails do not have).

Each look's interval is Yuen's 20 %-trimmed-mean t interval over the rounds' log ratios
(Yuen 1974; Wilcox, "Introduction to Robust Estimation and Hypothesis Testing"): measured on
this machine, a round's ratio has a core a few tenths of a percent wide and tails out to +-6 %
(one process of a pair disturbed), which widen a mean's interval four-fold and a trimmed
mean's hardly.

"Unchanged" is the other way to stop, and it has an error of its own: the chance of calling a
benchmark unchanged when its true change is beyond the band. It is judged like an equivalence
test (two one-sided tests, Schuirmann 1987: the interval at 1 - 2 x 5 % = 90 % inside the band,
the bioequivalence rule), that error spent over the looks by the same function. Claims keep
`alpha` (0.01); a larger error for "unchanged" only stops benchmarks that would have made no
claim sooner, so it cannot add a false claim. Replayed on real 30-round A/As of the decisions
suite (benchmarks/replay_sequential.py), 10 % settled 17 of 18 identical-code benchmarks in a
median of 19 rounds where alpha for both settled 14 in 27, and caught the +2 % benchmarks
(5 of 6) at the same rounds.

The band a change must clear follows each benchmark's measured noise: the winsorized spread
of its round ratios, never below BAND_FLOOR (the floor at which 60+ A/A comparisons on this
machine made no false claim; benchmarks/perf_decisions.py).
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from benchkit.errors import SchemaError

TRIM = 0.2
BAND_FLOOR = 0.01
EQUIVALENCE_ERROR = 0.10


@dataclasses.dataclass(frozen=True)
class SequentialPlan:
    """When a sequential A/B looks at its rounds: first at `first_look` rounds, then each time
    the rounds have grown by `growth` (at least one more), and last at `max_rounds`. A
    verdict of "unchanged" spends `equivalence_error` (two one-sided tests), claims the
    A/B's alpha."""

    max_rounds: int
    first_look: int = 5
    growth: float = 1.25
    equivalence_error: float = EQUIVALENCE_ERROR

    def __post_init__(self):
        if self.first_look < 3 or self.max_rounds < self.first_look or self.growth <= 1 or not (
                0 < self.equivalence_error < 1):
            raise ValueError(f"a sequential plan needs 3 <= first_look <= max_rounds, "
                             f"growth > 1 and 0 < equivalence_error < 1, not {self}")

    def looks(self) -> tuple[int, ...]:
        """The round counts at which verdicts may stop a benchmark."""
        out = [self.first_look]
        while out[-1] < self.max_rounds:
            out.append(min(self.max_rounds, max(out[-1] + 1, round(out[-1] * self.growth))))
        return tuple(out)

    def is_look(self, rounds: int) -> bool:
        """Whether a verdict is taken after `rounds` rounds."""
        return rounds in self.looks()

    def alpha_at(self, rounds: int, alpha: float) -> float:
        """The error spent on the interval after `rounds` rounds: the spending function's
        increment since the previous look. `rounds` need not be a look (a time budget
        stopped the A/B between looks); no error is left before the first look."""
        if rounds < self.first_look:
            return 0.0
        earlier = [n for n in self.looks() if n < rounds]
        before = spent(earlier[-1] / self.max_rounds, alpha) if earlier else 0.0
        return spent(min(rounds, self.max_rounds) / self.max_rounds, alpha) - before

    def to_dict(self) -> dict:
        """The `sequential` entry of an A/B record."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d) -> "SequentialPlan":
        """Inverse of to_dict; a plan no A/B could have run is a SchemaError."""
        try:
            return cls(int(d["max_rounds"]), int(d["first_look"]), float(d["growth"]),
                       float(d.get("equivalence_error", EQUIVALENCE_ERROR)))
        except ValueError as error:
            raise SchemaError(f"ab.sequential: {error}") from None


def spent(t: float, alpha: float) -> float:
    """Pocock-type alpha spending (Lan & DeMets 1983): the error spent by information
    fraction t."""
    return alpha * math.log(1 + (math.e - 1) * min(max(t, 0.0), 1.0))


def trimmed(x: np.ndarray, trim: float = TRIM) -> tuple[float, float, int]:
    """Yuen's trimmed mean of x, its standard error (from the winsorized variance) and the
    degrees of freedom of its t interval."""
    from scipy import stats
    n = len(x)
    g = int(math.floor(trim * n))
    kept = n - 2 * g
    winsorized = np.asarray(stats.mstats.winsorize(np.asarray(x, float), limits=(trim, trim)))
    se = float(winsorized.std(ddof=1)) * math.sqrt(n - 1) / math.sqrt(kept * (kept - 1))
    return float(stats.trim_mean(x, trim)), se, kept - 1


def winsorized_spread(x: np.ndarray, trim: float = TRIM) -> float:
    """The spread of x with its tails pulled in: the standard deviation after winsorizing."""
    from scipy import stats
    return float(np.asarray(stats.mstats.winsorize(np.asarray(x, float),
                                                   limits=(trim, trim))).std(ddof=1))


def auto_band(log_ratios: np.ndarray) -> float:
    """The band a change must clear for a benchmark with these rounds: its winsorized round
    spread (as a relative change), never below BAND_FLOOR."""
    if len(log_ratios) < 2:
        return BAND_FLOOR
    return max(BAND_FLOOR, math.expm1(winsorized_spread(log_ratios)))
