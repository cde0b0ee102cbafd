"""noise.nan_medians, the running medians of a history's steps, against numpy's nanmedian,
whose result it gives bit for bit (numpy's is about six times slower on short windows)."""
from __future__ import annotations

import warnings

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from benchkit.core.history.noise import nan_medians

# log values: a few levels, so that ties come often, or any finite floats; NaN anywhere
VALUES = st.one_of(st.sampled_from([-0.5, 0.0, 0.1, 0.25, 1.0, np.nan]),
                   st.floats(-5, 5), st.just(np.nan))


def numpys(values: np.ndarray) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)     # a row of NaN only
        return np.nanmedian(values, axis=-1)


@settings(max_examples=400, deadline=None)
@given(hnp.arrays(float, hnp.array_shapes(min_dims=1, max_dims=3, max_side=17), elements=VALUES))
def test_the_medians_are_numpys_bit_for_bit(values):
    assert np.array_equal(nan_medians(values), numpys(values), equal_nan=True)


def test_running_windows_padded_at_the_ends():
    # the shape faster_minority and runners._residuals give it: every window of a series
    # padded with NaN, so that the ends' windows hold fewer values, and the first none
    logs = np.log(np.random.default_rng(7).lognormal(0, 0.2, 40))
    windows = np.lib.stride_tricks.sliding_window_view(
        np.concatenate([np.full(12, np.nan), logs, np.full(12, np.nan)]), 12)
    got = nan_medians(windows)
    assert np.isnan(got[0]) and got[1] == logs[0] and got[2] == (logs[0] + logs[1]) / 2
    assert np.array_equal(got, numpys(windows), equal_nan=True)
