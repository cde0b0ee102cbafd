import math

import numpy as np
import pytest

from benchkit.core.measure import stats
def test_summarize_matches_linear_quantiles():
    s = stats.summarize([4.0, 1.0, 3.0, 2.0, 5.0])
    assert (s.n, s.median, s.mean, s.p25, s.p75, s.iqr) == (5, 3.0, 3.0, 2.0, 4.0, 2.0)
    s = stats.summarize([1.0, 2.0, 3.0, 4.0])
    assert (s.median, s.p25, s.p75) == (2.5, 1.75, 3.25)


def test_summarize_empty_is_nan():
    assert math.isnan(stats.summarize([]).median)


@pytest.mark.parametrize("t, unit", [
    (0.0, "ns"), (-1e-6, "ns"), (float("nan"), "ns"), (4e-10, "ns"), (1e-9, "ns"),
    (999e-9, "ns"), (1e-6, "us"), (2.34e-6, "us"), (1e-3, "ms"), (0.5, "ms"), (1.0, "s"),
    (3600.0, "s"),
])
def test_select_unit(t, unit):
    assert stats.select_unit(t)[0] == unit


def test_trim_sigfig_is_exact_in_float64():
    assert stats.trim_sigfig(3.14159, 2) == 3.1
    assert stats.trim_sigfig(123456789.0, 9) == 123456789.0  # float32 would give 123456792
    assert stats.trim_sigfig(0.000123456, 3) == 0.000123
    assert stats.trim_sigfig(987.6, 1) == 1000.0
    assert stats.trim_sigfig(0.0, 3) == 0.0
    with pytest.raises(ValueError):
        stats.trim_sigfig(1.0, 0)


def test_significant_figures_bounds():
    tight = [1e-3 + i * 1e-12 for i in range(100)]
    assert stats.significant_figures(tight, 1e-3) == stats.MAX_SIGNIFICANT_FIGURES
    noisy = [1e-6 * (1 + (i % 10) / 10) for i in range(100)]
    assert stats.significant_figures(noisy, float(np.median(noisy))) == 1
    assert stats.significant_figures([], 0.0) == 1


def test_iqr_warnings_levels():
    assert stats.iqr_warnings(stats.summarize([1.0, 1.0, 1.01, 1.02])) == ()
    mild = stats.iqr_warnings(stats.summarize([1.0, 1.0, 1.15, 1.15]))
    assert "system fluctuation" in mild[0]
    gross = stats.iqr_warnings(stats.summarize([1.0, 1.0, 2.0, 2.0]))
    assert "66.7% of the median" in gross[0] and "environmental influence" in gross[0]


def test_geometric_mean():
    assert stats.geometric_mean([2.0, 8.0]) == pytest.approx(4.0)
    assert math.isnan(stats.geometric_mean([]))
