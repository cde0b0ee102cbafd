"""Pickles of benchkit's records name only the public path (`benchkit.Measurement`), so they
survive moves inside the package; pickles made before the layered packages still load."""
from __future__ import annotations

import pickle
import pickletools
from pathlib import Path

import benchkit
from benchkit import CallgrindStats, FunctionCount, FunctionCounts, Language, Measurement
from benchkit import ProcessSample, TaskSpec
from benchkit.engines.transfer import pickled_modules

OLD = Path(__file__).parent / "fixtures" / "pickles" / "made_before_layered_packages.pkl"


def _globals(data: bytes) -> set[str]:
    """module.name of every class the pickle refers to."""
    out, strings = set(), []
    for op, arg, _ in pickletools.genops(data):
        if op.name in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE"):
            strings.append(arg)
        elif op.name == "STACK_GLOBAL":
            out.add(f"{strings[-2]}.{strings[-1]}")
    return out


def _records():
    spec = TaskSpec("x * y", "x = 1\ny = 2", label="mul", num_threads=2)
    m = Measurement(10, [1e-6, 1.2e-6, 1.1e-6], spec, {"benchmark": "b::mul"},
                    processes=[ProcessSample((2,), (3e-4,), 0), ProcessSample((1,), (3.1e-4,), 1)])
    ex = FunctionCounts((FunctionCount(900, "a.c:f"), FunctionCount(100, "b.c:g")), False)
    inc = FunctionCounts((FunctionCount(1000, "a.c:f"),), True)
    base = FunctionCounts((FunctionCount(50, "a.c:f"),), False)
    stats = CallgrindStats(spec, 100, True, FunctionCounts((), True), base, inc, ex, None,
                           {"controls": {}})
    return {"measurement": m, "stats": stats, "counts": ex, "language": Language.CPP,
            "spec": spec, "task": benchkit.Timer("1 + 1").task()}


def test_pickles_name_only_the_public_path():
    data = pickle.dumps(_records())
    named = _globals(data)
    assert {name.rpartition(".")[0] for name in named if name.startswith("benchkit")} == {
        "benchkit"}, named
    assert pickled_modules(data) <= {"benchkit", "builtins", "copyreg"}
    again = pickle.loads(data)
    assert again["measurement"] == _records()["measurement"]
    assert again["stats"].per_run() == 9.5 and again["language"] is Language.CPP


def test_pickles_made_before_the_layered_packages_load():
    old = pickle.loads(OLD.read_bytes())
    new = _records()
    assert old["measurement"] == new["measurement"]
    assert old["measurement"].processes == new["measurement"].processes
    assert old["spec"] == new["spec"] and old["language"] is Language.CPP
    assert old["counts"] == new["counts"]
    assert old["stats"].per_run() == new["stats"].per_run() == 9.5
    assert type(old["stats"]) is CallgrindStats
    # the fixture names the old internal modules: the check above is not vacuous
    assert "benchkit.measurement.Measurement" in _globals(OLD.read_bytes())


def test_the_modules_a_pickle_names_are_found_through_the_memo_at_every_protocol():
    import collections
    import decimal
    import fractions
    value = [collections.OrderedDict(a=1), decimal.Decimal("1.5"), fractions.Fraction(1, 3),
             {"again": [collections.OrderedDict(), decimal.Decimal(2)]}, _records()]
    for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):
        assert pickled_modules(pickle.dumps(value, protocol=protocol)) == {
            "collections", "decimal", "fractions", "benchkit"}, protocol


def test_a_pickle_of_values_made_while_kinds_were_an_enum_loads_with_plain_names():
    # written by main at 2637f55, when ValueStats.kind was a ValueKind enum member
    old = Path(__file__).parent / "fixtures" / "pickles" / "values_made_before_metric_names.pkl"
    (value,) = pickle.loads(old.read_bytes()).values
    assert (value.kind, type(value.kind), value.unit, value.values) == (
        "track", str, "items", [10.0, 12.0])
    assert benchkit.Results(values=[value]).values[0].median == 11.0
