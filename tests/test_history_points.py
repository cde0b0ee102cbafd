"""Points: a series' points held as columns behave as the tuple of Points they stand for."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchkit.core.history.series import (Commit, Point, Points, Series, commits_of,
                                          observations_of, relatives_of, values_of)
from benchkit.core.history.steps import steps_of

finite = st.floats(min_value=1e-9, max_value=1e9, allow_nan=False)


@st.composite
def point_lists(draw) -> list[Point]:
    n = draw(st.integers(0, 12))
    with_relatives = draw(st.sampled_from(["none", "all", "some"]))
    out = []
    for i in range(n):
        value = draw(finite)
        relative = {"none": None, "all": draw(finite),
                    "some": draw(st.none() | finite)}[with_relatives]
        out.append(Point(Commit(f"{i:040x}", "", i), value, value / 2, value * 2,
                         draw(st.integers(0, 5)), draw(st.integers(1, 3)), relative))
    return out


@settings(max_examples=200, deadline=None)
@given(point_lists(), st.integers(-15, 15), st.integers(-15, 15), st.sampled_from([1, 2, -1]))
def test_points_index_slice_and_iterate_as_their_tuple(points, i, j, step):
    held, plain = Points.of(points), tuple(points)
    assert len(held) == len(plain) and list(held) == list(plain)
    assert held == plain and plain == held and hash(held) == hash(plain)
    if -len(plain) <= i < len(plain):
        assert held[i] == plain[i]
    else:
        with pytest.raises(IndexError):
            held[i]
    assert list(held[i:j:step]) == list(plain[i:j:step])
    assert isinstance(held[i:j], Points)
    assert list(values_of(held)) == [p.value for p in plain] == list(values_of(plain))
    assert commits_of(held) == commits_of(plain)
    assert observations_of(held) == observations_of(plain) == sum(p.observations for p in plain)
    assert relatives_of(held) == relatives_of(plain)
    expected = ([p.relative for p in plain]
                if plain and all(p.relative for p in plain) else None)
    assert relatives_of(held) == expected


def test_values_are_a_read_only_column():
    held = Points.of([Point(Commit("a", ""), 2.0, 1.0, 3.0, 1, 1)])
    with pytest.raises(ValueError):
        values_of(held)[0] = 5.0
    assert values_of(Points.of([])).shape == (0,)
    assert held != [1, 2] and held != "ab" and held.__eq__(3) is NotImplemented


@settings(max_examples=40, deadline=None)
@given(st.integers(30, 90), st.integers(0, 2**32 - 1), st.sampled_from([0.0, 0.1, 0.3]))
def test_steps_are_the_same_on_columns_and_on_a_tuple(length, seed, size):
    rng = np.random.default_rng(seed)
    values = np.exp(rng.normal(0, 0.02, length))
    values[length // 2:] *= 1 + size
    points = tuple(Point(Commit(f"{i:040x}", "", i), float(v), float(v) * 0.99,
                         float(v) * 1.01, 1, 1) for i, v in enumerate(values))
    series = Series("b", "time", "m", points)
    as_columns = dataclasses.replace(series, points=Points.of(points))
    assert steps_of(as_columns) == steps_of(series)


@st.composite
def import_rows(draw):
    """One series' rows as an import reads them: a commit each, in file order (any), some
    commits without a place in the history (ordered by date then) and ties of date."""
    from array import array

    from benchkit.core.history.series_rows import _Rows
    n = draw(st.integers(2, 12))
    placed = draw(st.sampled_from(["all", "none", "some"]))
    commits = [Commit(f"{i:040x}", f"2026-01-0{draw(st.integers(1, 3))}",
                      {"all": draw(st.integers(1, 6)), "none": None,
                       "some": draw(st.none() | st.integers(1, 6))}[placed])
               for i in draw(st.permutations(range(n)))]
    values = [draw(finite) for _ in range(n)]
    return _Rows(commits, array("d", values), array("d", [v / 2 for v in values]),
                 array("d", [v * 2 for v in values]), array("q", [1] * n),
                 [draw(st.none() | finite) for _ in range(n)],
                 [f"2026-02-0{draw(st.integers(1, 3))}" for _ in range(n)])


@settings(max_examples=300, deadline=None)
@given(import_rows())
def test_an_imports_series_is_ordered_as_the_general_reading_orders_it(rows):
    """A commit each and no failures (an import) takes a shorter way (`_one_a_commit`): the
    same series as the general reading, which a failure at a commit with a value, measured
    after every run, takes and does not change."""
    from benchkit.core.history.series_rows import _series_from_rows
    key = ("b", "time", "m", "env")
    fast = _series_from_rows(key, rows)
    general = _series_from_rows(key, rows, [(rows.commits[0], "9999", "failed")])
    assert fast == general
    assert [p.commit for p in fast.points] == [p.commit for p in general.points]
