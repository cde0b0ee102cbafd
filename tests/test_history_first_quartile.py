"""A wall-time series is judged on each commit's first quartile where that is quieter than
its median (time_steps, series.at_first_quartile): a shared machine's steals slow some of a
commit's runs, and its median moves with them where its first quartile does not."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from benchkit.core.history.series import Commit, Point, Points, Series, at_first_quartile
from benchkit.core.history.steps import steps_of, time_steps

# Real: the fifth VM's noise history beside a busy neighbour, 200 commits of
# `time_re_findall`: each commit's median and first quartile (asv's result and stats_q_25).
# The code never changed.
_SERIES = json.loads((Path(__file__).parent / "fixtures" / "history" /
                      "busy-vm-re-findall.json").read_text(encoding="utf-8")
                     )["series"]["busy/time_re_findall"]
MEDIAN = np.array(_SERIES["median"])
QUARTILE = np.array(_SERIES["first_quartile"])


def _points(values, lows, relatives=None) -> tuple[Point, ...]:
    return tuple(Point(Commit(f"c{i}", f"2026-01-01T{i:05d}"), float(v), float(low), float(v),
                       1, 1, None if relatives is None else relatives[i])
                 for i, (v, low) in enumerate(zip(values, lows)))


def _slower_placed(values, lows, metric: str = "time") -> list:
    found = time_steps(Series("b", metric, "m", _points(values, lows)))
    return [s for s in found if s.change > 0 and s.to_act_on and s.placed]


def test_the_recording_is_quieter_at_its_first_quartile():
    from benchkit.core.history.noise import noise_of
    assert noise_of(np.log(QUARTILE)) < 0.8 * noise_of(np.log(MEDIAN))


@pytest.mark.parametrize("at", [50, 120, 150])
def test_a_step_the_median_hides_is_named_at_its_commit(at):
    values, lows = MEDIAN.copy(), QUARTILE.copy()
    values[at:] *= 1.25
    lows[at:] *= 1.25
    # the medians alone: the busy neighbour's steals hide it
    assert not [s for s in _slower_placed(values, values)
                if abs(int(s.commit.sha[1:]) - at) <= 2]
    (step,) = [s for s in _slower_placed(values, lows) if abs(int(s.commit.sha[1:]) - at) <= 2]
    assert 0.15 < step.change < 0.4          # the levels either side, in its noise
    assert "; judged on each commit's first quartile (noise " in step.evidence
    assert "its median's " in step.evidence


def test_no_step_where_the_code_never_changed():
    assert _slower_placed(MEDIAN, QUARTILE) == []
    assert [s for s in time_steps(Series("b", "time", "m", _points(MEDIAN, QUARTILE)))
            if s.to_act_on] == []


def test_the_median_is_kept_where_it_is_the_quieter():
    # the medians as first quartiles and the first quartiles as medians: now the median
    # is the quieter, and the series is judged as before, without the note
    values = QUARTILE.copy()
    values[120:] *= 1.25
    lows = np.minimum(MEDIAN, values)     # a first quartile is never above its median
    lows[120:] = np.minimum(MEDIAN[120:] * 1.25, values[120:])
    plain = _slower_placed(values, values)
    kept = _slower_placed(values, lows)
    assert [(s.commit, s.change) for s in kept] == [(s.commit, s.change) for s in plain]
    assert all("first quartile" not in s.evidence for s in kept)


def test_only_times_are_read_at_a_first_quartile():
    # a track_'s or peakmem's low is its least value, not a quartile
    values, lows = MEDIAN.copy(), QUARTILE.copy()
    values[120:] *= 1.25
    lows[120:] *= 1.25
    for metric in ("track", "peakmem"):
        found = steps_of(Series("b", metric, "m", _points(values, lows)))
        assert all("first quartile" not in s.evidence for s in found)


def test_at_first_quartile_gives_the_quartiles_as_values():
    points = _points([2.0, 3.0, 4.0], [1.5, 2.5, 3.5])
    read = at_first_quartile(points)
    assert isinstance(read, Points)
    assert list(read.values) == [1.5, 2.5, 3.5]
    assert [p.low for p in read] == [1.5, 2.5, 3.5]
    assert [p.high for p in read] == [2.0, 3.0, 4.0]
    assert [p.commit for p in read] == [p.commit for p in points]
    assert at_first_quartile(Points.of(points)) == read


@pytest.mark.parametrize("values, lows, relatives", [
    ([2.0, 3.0], [2.0, 3.0], None),              # no quartile apart from the value
    ([2.0, 3.0], [0.0, 2.5], None),              # a quartile of zero
    ([2.0, -1.0], [1.5, -2.0], None),            # a value below zero
    ([2.0, 3.0], [1.5, 2.5], [1.1, 1.2]),        # a speed probe: its relative is the median's
    ([], [], None),
])
def test_at_first_quartile_none(values, lows, relatives):
    assert at_first_quartile(_points(values, lows, relatives)) is None
