"""Pure statistics: quantiles, significant figures, units, geometric means.

No torch, no I/O. Everything works on plain sequences of floats (seconds).
"""
from __future__ import annotations

import dataclasses
import math
from typing import Sequence

import numpy as np

MAX_SIGNIFICANT_FIGURES = 4
MIN_CONFIDENCE_INTERVAL = 25e-9  # 25 ns: below this the clock itself is the noise
IQR_WARN_THRESHOLD = 0.1
IQR_GROSS_WARN_THRESHOLD = 0.25

_UNITS = (("ns", 1e-9), ("us", 1e-6), ("ms", 1e-3), ("s", 1.0))
_UNIT_NAMES = {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}


@dataclasses.dataclass(frozen=True)
class Summary:
    """Order statistics of a set of per-run times."""

    n: int
    median: float
    mean: float
    p25: float
    p75: float

    @property
    def iqr(self) -> float:
        """p75 - p25."""
        return self.p75 - self.p25


def summarize(times: Sequence[float]) -> Summary:
    """Median, mean and quartiles (linear interpolation, as numpy and torch.quantile)."""
    if len(times) == 0:
        nan = float("nan")
        return Summary(0, nan, nan, nan, nan)
    arr = np.asarray(times, dtype=np.float64)
    p25, median, p75 = np.quantile(arr, [0.25, 0.5, 0.75])
    return Summary(len(arr), float(median), float(arr.mean()), float(p25), float(p75))


def significant_figures(times: Sequence[float], median: float) -> int:
    """Rough number of trustworthy significant figures of `median`.

    Uses only the interquartile points (robust to tails) and a z of 1.645;
    clamped to 1..MAX_SIGNIFICANT_FIGURES.
    """
    n = len(times)
    if n == 0 or not median > 0:
        return 1
    ordered = np.sort(np.asarray(times, dtype=np.float64))
    middle = ordered[n // 4: math.ceil(3 * n / 4)]
    std = float(middle.std()) if len(middle) else 0.0
    ci = max(1.645 * std / math.sqrt(max(len(middle), 1)), MIN_CONFIDENCE_INTERVAL)
    figures = math.floor(math.log10(median / ci))
    return min(max(figures, 1), MAX_SIGNIFICANT_FIGURES)


def select_unit(t: float) -> tuple[str, float]:
    """Unit (ns/us/ms/s) and scale that show `t` seconds with 1-3 leading digits.

    Zero, negative, NaN and sub-nanosecond values are shown in ns.
    """
    if not t > 0 or not math.isfinite(t):
        return ("s", 1.0) if t == math.inf else ("ns", 1e-9)
    for unit, scale in reversed(_UNITS):
        if t >= scale:
            return unit, scale
    return "ns", 1e-9


def format_time(seconds: float) -> str:
    """Seconds as a short human string in the best unit: 1.21 us, 3.4 ms ('-' if unknown)."""
    if not math.isfinite(seconds):
        return "-"
    unit, scale = select_unit(seconds)
    return f"{seconds / scale:.3g} {unit}"


def unit_to_english(unit: str) -> str:
    """'us' -> 'microsecond'."""
    return _UNIT_NAMES[unit]


def trim_sigfig(x: float, n: int) -> float:
    """Round `x` to `n` significant figures in float64 (3.14159, 2 -> 3.1)."""
    if n != int(n) or n < 1:
        raise ValueError(f"number of significant figures must be a positive integer, got {n!r}")
    if x == 0 or not math.isfinite(x):
        return float(x)
    return float(f"{x:.{int(n)}g}")


def iqr_warnings(summary: Summary) -> tuple[str, ...]:
    """The noise warnings shown under a Measurement (empty when the spread is fine)."""
    if summary.n < 2 or not summary.median > 0:
        return ()
    rel = summary.iqr / summary.median
    if rel < IQR_WARN_THRESHOLD:
        return ()
    hint = ("This suggests significant environmental influence." if rel >= IQR_GROSS_WARN_THRESHOLD
            else "This could indicate system fluctuation.")
    return (f"  WARNING: Interquartile range is {rel * 100:.1f}% of the median measurement.\n"
            f"           {hint}",)


def geometric_mean(values: Sequence[float]) -> float:
    """Geometric mean of the positive finite values (NaN when there are none)."""
    arr = np.asarray([v for v in values if v > 0 and math.isfinite(v)], dtype=np.float64)
    if len(arr) == 0:
        return float("nan")
    return float(np.exp(np.log(arr).mean()))
