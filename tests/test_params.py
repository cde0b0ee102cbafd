"""Parameter grids: points, names, -k by parameter, results keep the point, Compare layout."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

import benchkit
from benchkit.core.measure import params
from benchkit.core.records.keywords import keyword_filter
from benchkit.errors import SuiteError
from benchkit.orchestration.suite import discover


def test_points_vary_the_last_parameter_fastest():
    grid = {"n": (1, 2), "kind": ("a", "b")}
    assert [params.point_name(p) for p in params.points(grid)] == [
        "n=1,kind=a", "n=1,kind=b", "n=2,kind=a", "n=2,kind=b"]


@pytest.mark.parametrize("value, text", [
    (1024, "1024"), (0.5, "0.5"), (True, "True"), (None, "None"), ("float32", "float32"),
    (np.float32, "float32"), (np.dtype("int64"), "int64"), (sorted, "sorted"),
    ("a b,c]", "a_b_c_"), ("", "''"), (float("inf"), "inf")])
def test_values_read_plainly_in_names(value, text):
    assert params.format_value(value) == text


def test_torch_dtypes_read_without_their_module():
    torch = pytest.importorskip("torch")
    assert params.point_name({"dtype": torch.float32}) == "dtype=float32"


def test_the_last_parameter_makes_the_columns():
    assert params.table_place({"n": 8}) == ("n=8", None)
    assert params.table_place({"n": 8, "m": 2, "dtype": "f4"}) == ("n=8,m=2", "dtype=f4")
    assert params.stored({"n": 8, "dtype": np.float32}) == {"n": 8, "dtype": "float32"}


@pytest.mark.parametrize("grid, message", [
    ({}, "non-empty dict"), ([1, 2], "non-empty dict"), ({"n": []}, "non-empty list"),
    ({"n": "abc"}, "non-empty list"), ({"2n": [1]}, "must be an identifier"),
    ({"x": [1.0, "1.0"]}, "read the same")])
def test_bad_grids_say_what_is_wrong(grid, message):
    with pytest.raises(SuiteError, match=message):
        params.check_grid(grid, "here")


def test_keyword_with_equals_matches_a_parameter_exactly():
    matches = keyword_filter("build and n=10")
    assert matches("s::build[n=10,kind=list]") and matches("s::build[kind=list,n=10]")
    assert not matches("s::build[n=100,kind=list]") and not matches("s::total[n=10]")


def test_a_word_with_parentheses_is_asvs_spelling_of_a_grid_point():
    from benchkit.core.records.keywords import _tokens
    assert _tokens("time_sum(100, 'float64') or not(a and b)") == [
        "time_sum(100, 'float64')", "or", "not", "(", "a", "and", "b", ")"]
    assert _tokens("x.time_r(10, 'a (b)', (1, 2)) and y") == [
        "x.time_r(10, 'a (b)', (1, 2))", "and", "y"]
    name = "m.T.time_sum[n=100,kind='float64']\nm.T.time_sum(100, 'float64')"
    assert keyword_filter("time_sum(100, 'float64')")(name)
    assert not keyword_filter("time_sum(10, 'float64')")(name)
    assert not keyword_filter("not T.time_sum(100, 'float64')")(name)
    # a value holding `=` (numpy's suite: operator='!=') is still asv's spelling, not a
    # parameter named `S.time_eq(100, '!`
    name = "S.time_eq[n=100,operator='!=']\nS.time_eq(100, '!=')"
    assert keyword_filter("S.time_eq(100, '!=')")(name)
    assert not keyword_filter("S.time_eq(100, '==')")(name)


SUITE = """
from benchkit import Timer, benchmark

@benchmark(params={"n": [10, 100], "kind": ["list", "tuple"]}, fail_on="slower>5%")
def build(n, kind):
    if n == 100 and kind == "tuple":
        raise ValueError("not this one")
    return Timer(f"{kind}(range(n))", setup=f"n = {n}")

@benchmark(params={"n": [8]})
def labelled(n):
    return Timer("sum(x)", setup=f"x = list(range({n}))", label="mine", sub_label=f"size {n}")

@benchmark(params={"n": [1]})
def two(n):
    return [Timer("pass"), Timer("pass")]
"""


def test_a_grid_makes_one_named_benchmark_per_point(tmp_path):
    path = tmp_path / "bench_grid.py"
    path.write_text(textwrap.dedent(SUITE))
    failures = []
    found = {b.name: b for b in discover([path], lambda f, e: failures.append(f))}
    assert list(found) == ["bench_grid::build[n=10,kind=list]",
                           "bench_grid::build[n=10,kind=tuple]",
                           "bench_grid::build[n=100,kind=list]", "bench_grid::labelled[n=8]"]
    point = found["bench_grid::build[n=10,kind=tuple]"]
    assert point.params == {"n": 10, "kind": "tuple"}
    assert [str(g) for g in point.gates] == ["slower>5%"]
    spec = point.task.spec
    assert (spec.stmt, spec.label, spec.sub_label, spec.description) == (
        "tuple(range(n))", "bench_grid::build", "n=10", "kind=tuple")
    mine = found["bench_grid::labelled[n=8]"].task.spec     # the user's labels are kept
    assert (mine.label, mine.sub_label, mine.description) == ("mine", "size 8", None)
    assert [f.benchmark for f in failures] == ["bench_grid::build[n=100,kind=tuple]",
                                               "bench_grid::two[n=1]"]
    assert "ValueError: not this one" in failures[0].error
    assert "a grid point must return one Timer, got 2" in failures[1].error


@pytest.mark.slow
def test_results_keep_the_point_and_k_selects_by_parameter(tmp_path):
    from test_cli import cli
    (tmp_path / "bench_grid.py").write_text(textwrap.dedent(SUITE))
    out = cli("run", "bench_grid.py", "--fast", "-k", "build and n=10", "-o", "r.json",
              cwd=tmp_path, check_code=0).stdout
    assert "kind=list  |  kind=tuple" in out and "n=100" not in out
    loaded = benchkit.load(tmp_path / "r.json")
    assert [(m.metadata["benchmark"], m.metadata["params"]) for m in loaded.measurements] == [
        ("bench_grid::build[n=10,kind=list]", {"n": 10, "kind": "list"}),
        ("bench_grid::build[n=10,kind=tuple]", {"n": 10, "kind": "tuple"})]
    assert benchkit.core.records.records.Benchmark.of(loaded.measurements[0]).params == {
        "n": 10, "kind": "list"}


def test_k_on_a_grid_of_100000_points_builds_only_the_points_it_selects(tmp_path):
    """Issue 38 §5: -k on a 10^5-point grid hung (every point's Timer built, names checked
    pairwise). The factory of a point -k refuses is never called: one call here."""
    calls = tmp_path / "calls.txt"
    (tmp_path / "bench_wide.py").write_text(textwrap.dedent(f'''
        from benchkit import Timer, benchmark

        @benchmark(params={{"a": list(range(1000)), "b": list(range(100))}})
        def wide(a, b):
            with open({str(calls)!r}, "a") as f:
                f.write(f"{{a}},{{b}}\\n")
            return Timer("pass")
    '''))
    found = discover([tmp_path / "bench_wide.py"], wanted=keyword_filter("a=7 and b=42"))
    assert [b.name for b in found if keyword_filter("a=7 and b=42")(b.name)] == [
        "bench_wide::wide[a=7,b=42]"]
    assert calls.read_text() == "7,42\n"
