"""Side by side with torch.utils.benchmark: same inputs, same seeds -> same output.

Differences allowed are the documented improvements (README, "Differences from
torch.utils.benchmark"); each has its own test at the end.
"""
import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")
tub = pytest.importorskip("torch.utils.benchmark")
from torch.utils.benchmark.utils import common as torch_common  # noqa: E402
from torch.utils.benchmark.utils.valgrind_wrapper import timer_interface as torch_cg  # noqa: E402

import benchkit  # noqa: E402
from benchkit.core.measure.measurement import Measurement  # noqa: E402
from benchkit.core.measure.task import TaskSpec  # noqa: E402
from benchkit.core.callgrind.counts import FunctionCounts  # noqa: E402


def _pair(times_us, number=100, **spec):
    """The same measurement as torch's and as benchkit's."""
    spec.setdefault("stmt", "x * y")
    spec.setdefault("setup", "pass")
    raw = [t * 1e-6 * number for t in times_us]
    return (torch_common.Measurement(number, list(raw), torch_common.TaskSpec(**spec)),
            Measurement(number, list(raw), TaskSpec(**spec)))


def _spread(center, rel, n, seed):
    return list(center * (1 + rel * np.random.default_rng(seed).standard_normal(n)))


def _cases():
    """(name, [(torch m, benchkit m)], Compare options)."""
    cases = []
    grid = []
    for threads in (1, 4):
        for i, sub in enumerate(["small", "medium", "large"]):
            for j, desc in enumerate(["float32", "float64"]):
                grid.append(_pair(_spread(1.5 * (i + 1) * (j + 1) / threads, 0.02, 30, i + j),
                                  label="matmul", sub_label=sub, description=desc,
                                  num_threads=threads))
    cases.append(("grid", grid))
    noisy = [_pair(_spread(3.0, 0.4, 40, 1), label="noisy", sub_label="a", description="x"),
             _pair(_spread(30.0, 0.01, 40, 2), label="noisy", sub_label="b", description="x"),
             _pair(_spread(300.0, 0.3, 40, 3), label="noisy", sub_label="b", description="y")]
    cases.append(("warnings and a missing cell", noisy))
    envs = [_pair(_spread(2.0, 0.01, 20, 4), label="env", sub_label="s", description="d",
                  env="base"),
            _pair(_spread(2.2, 0.01, 20, 5), label="env", sub_label="s", description="d",
                  env="new-build")]
    cases.append(("two envs", envs))
    multi = [_pair(_spread(1.0 + k, 0.01, 10, k), stmt=f"x = {k}\ny = x * {k}",
                   label="multi-line", description="d", num_threads=1 + k % 2) for k in range(6)]
    cases.append(("multi-line stmt rows", multi))
    units = [_pair(_spread(0.004, 0.01, 10, 7), label="units", sub_label="fast", description="d"),
             _pair(_spread(5000.0, 0.01, 10, 8), label="units", sub_label="slow",
                   description="d")]
    cases.append(("ns and ms in one table", units))
    two_labels = grid[:4] + envs
    cases.append(("two labels", two_labels))
    return cases


OPTIONS = [(), ("trim",), ("colorize",), ("colorize_rowwise",), ("highlight",),
           ("trim", "colorize", "highlight")]


def _configure(compare, options):
    if "trim" in options:
        compare.trim_significant_figures()
    if "colorize" in options:
        compare.colorize()
    if "colorize_rowwise" in options:
        compare.colorize(rowwise=True)
    if "highlight" in options:
        compare.highlight_warnings()
    return compare


@pytest.mark.parametrize("options", OPTIONS, ids=["+".join(o) or "plain" for o in OPTIONS])
@pytest.mark.parametrize("name, pairs", _cases(), ids=[c[0] for c in _cases()])
def test_compare_tables_are_identical_to_torchs(name, pairs, options):
    theirs = _configure(tub.Compare([t for t, _ in pairs]), options)
    ours = _configure(benchkit.Compare([b for _, b in pairs]), options)
    assert str(ours) == str(theirs)


def test_multi_line_stmt_keeps_every_row():
    (_, pairs), = [c for c in _cases() if c[0] == "multi-line stmt rows"]
    text = str(benchkit.Compare([b for _, b in pairs]))
    for k in range(6):
        assert f"y = x * {k}" in text
    assert text.count("threads: ") == 2


def _counts_data():
    rows = [(2000 - 97 * i, f"file_{i}.cpp:at::native::function_number_{i}(at::Tensor const&)")
            for i in range(25)]
    rows += [(-350, "aten/src/ATen/native/BinaryOps.cpp:at::native::mul_out(...) "
                    "[libtorch_cpu.so]"),
             (-12, "short"), (400, "x" * 150), (400, "y" * 30), (400, "a" * 30)]
    return rows


@pytest.mark.parametrize("inclusive", [False, True])
@pytest.mark.parametrize("width", [None, 60, 200])
def test_function_counts_repr_is_identical_after_the_first_line(inclusive, width):
    data = _counts_data()
    theirs = torch_cg.FunctionCounts._from_dict({fn: c for c, fn in data}, inclusive)
    ours = FunctionCounts.from_dict({fn: c for c, fn in data}, inclusive)
    assert [tuple(r) for r in ours] == [tuple(r) for r in theirs]
    if width is not None:
        theirs = torch_cg.FunctionCounts(theirs._data, inclusive, _linewidth=width)
        ours = FunctionCounts(ours._data, inclusive, _linewidth=width)
    for a, b in ((ours, theirs), (ours[:7], theirs[:7]),
                 (ours.transform(lambda fn: fn[:3]), theirs.transform(lambda fn: fn[:3]))):
        assert repr(a).splitlines()[1:] == repr(b).splitlines()[1:]


def test_function_counts_follow_torchs_print_options():
    ours = FunctionCounts.from_dict({"f" * 120: 5, "g": 3}, False)
    theirs = torch_cg.FunctionCounts._from_dict({"f" * 120: 5, "g": 3}, False)
    torch.set_printoptions(linewidth=150)
    try:
        assert repr(ours).splitlines()[1:] == repr(theirs).splitlines()[1:]
        assert "..." not in repr(ours)
    finally:
        torch.set_printoptions(profile="default")


def _fuzzers(seed, lib):
    P, T = lib.FuzzedParameter, lib.FuzzedTensor
    return lib.Fuzzer(
        parameters=[P("n", minval=1, maxval=16, distribution="loguniform"),
                    P("m", minval=1, maxval=64, distribution="uniform"),
                    P("scale", minval=0.5, maxval=2.0, distribution="uniform"),
                    P("d", minval=1, maxval=3, distribution="uniform", strict=True),
                    P("step", minval=1, maxval=3, distribution="uniform")],
        tensors=[T("x", size=("n", "m", 4), steps=("step", 1, 1), probability_contiguous=0.3,
                   dim_parameter="d", max_elements=4096),
                 T("idx", size=("m",), dtype=torch.int64)],
        constraints=[lambda p: p["n"] * p["m"] < 512],
        seed=seed)


@pytest.mark.parametrize("seed", [0, 1, 7, 12345])
def test_fuzzer_draws_the_same_parameters_and_tensors(seed):
    theirs = list(_fuzzers(seed, tub).take(12))
    ours = list(_fuzzers(seed, benchkit).take(12))
    for (t_tensors, t_props, t_params), (b_tensors, b_props, b_params) in zip(theirs, ours):
        assert b_params == t_params
        for name in t_tensors:
            assert torch.equal(b_tensors[name], t_tensors[name])
            assert b_tensors[name].stride() == t_tensors[name].stride()
            assert {k: (list(v) if isinstance(v, np.ndarray) else v)
                    for k, v in b_props[name].items()} == \
                   {k: (list(v) if isinstance(v, np.ndarray) else v)
                    for k, v in t_props[name].items()}


def test_first_loguniform_draw_matches_torchs():
    spec = {"minval": 1, "maxval": 16, "distribution": "loguniform"}
    theirs = next(tub.Fuzzer([tub.FuzzedParameter("n", **spec)], [], seed=0).take(1))[2]
    ours = next(benchkit.Fuzzer([benchkit.FuzzedParameter("n", **spec)], [], seed=0).take(1))[2]
    assert ours == theirs == {"n": 7}


@pytest.fixture
def torch_fuzzers_with_the_check_fixed(monkeypatch):
    """torch 2.13 rejects normalised dict distributions (its check is inverted), so its own op
    fuzzers cannot be built; give it benchkit's (correct) check for the comparison."""
    from torch.utils.benchmark.utils import fuzzer as torch_fuzzer

    def check(self, distribution):
        return distribution
    monkeypatch.setattr(torch_fuzzer.FuzzedParameter, "_check_distribution", check)


OP_FUZZERS = ["BinaryOpFuzzer", "UnaryOpFuzzer", "SpectralOpFuzzer", "BinaryOpSparseFuzzer",
              "UnaryOpSparseFuzzer"]


@pytest.mark.parametrize("name", OP_FUZZERS)
@pytest.mark.parametrize("seed", [0, 3])
@pytest.mark.slow
def test_op_fuzzers_draw_torchs_cases(torch_fuzzers_with_the_check_fixed, name, seed):
    import importlib

    from benchkit import op_fuzzers
    module = {"BinaryOpFuzzer": "binary", "UnaryOpFuzzer": "unary",
              "SpectralOpFuzzer": "spectral", "BinaryOpSparseFuzzer": "sparse_binary",
              "UnaryOpSparseFuzzer": "sparse_unary"}[name]
    theirs_cls = getattr(importlib.import_module(f"torch.utils.benchmark.op_fuzzers.{module}"),
                         name)
    # The same module path as torch's (a script ports by its import line), and the package.
    ours_cls = getattr(importlib.import_module(f"benchkit.op_fuzzers.{module}"), name)
    assert getattr(op_fuzzers, name) is ours_cls
    kwargs = {"seed": seed}
    theirs = list(theirs_cls(**kwargs).take(4))
    ours = list(ours_cls(**kwargs).take(4))
    for (t_tensors, _, t_params), (b_tensors, _, b_params) in zip(theirs, ours):
        assert b_params == t_params
        for key, tensor in t_tensors.items():
            assert b_tensors[key].shape == tensor.shape
            if tensor.is_sparse:
                assert torch.equal(b_tensors[key].to_dense(), tensor.to_dense())
            else:
                assert b_tensors[key].stride() == tensor.stride()
                assert torch.equal(b_tensors[key], tensor)


def test_benchkits_fuzzer_keeps_the_normalisation_check_the_right_way_round():
    benchkit.FuzzedParameter("p", distribution={1: 0.5, 2: 0.5})
    with pytest.raises(benchkit.BenchkitError, match="sum to 0.9"):
        benchkit.FuzzedParameter("p", distribution={1: 0.5, 2: 0.4})


class _SeededFake:
    """A deterministic timeit.Timer stand-in: block time = overhead + number * per-run
    time drawn from a seeded stream."""

    seed = 0

    def __init__(self, stmt="pass", setup="pass", timer=None, globals=None):
        self._rng = np.random.default_rng(type(self).seed)

    def timeit(self, number):
        return 2e-7 + number * 3e-6 * (1 + 0.05 * self._rng.standard_normal())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_timer_cls_seam_gives_torchs_numbers(seed):
    class Fake(_SeededFake):
        pass
    Fake.seed = seed

    class TorchTimer(tub.Timer):
        _timer_cls = Fake

    class OurTimer(benchkit.Timer):
        _timer_cls = Fake

    for method, kwargs in (("blocked_autorange", {"min_run_time": 0.2}),
                           ("adaptive_autorange", {"threshold": 0.05}),
                           ("adaptive_autorange", {"max_run_time": 0.05}),
                           ("timeit", {"number": 1000})):
        theirs = getattr(TorchTimer("x"), method)(**kwargs)
        ours = getattr(OurTimer("x"), method)(**kwargs)
        assert ours.number_per_run == theirs.number_per_run, method
        assert ours.raw_times == theirs.raw_times, method


def test_public_names_of_torch_utils_benchmark_exist():
    import importlib
    modules = ["common", "timer", "compare", "fuzzer", "valgrind_wrapper.timer_interface"]
    names = {"FuzzedSparseTensor"}   # sparse_fuzzer has no __all__; this is its one class
    for module in modules:
        names |= set(importlib.import_module(f"torch.utils.benchmark.utils.{module}").__all__)
    assert names <= set(dir(benchkit)), sorted(names - set(dir(benchkit)))
    for name in names:
        assert hasattr(benchkit, name), name
    from benchkit import op_fuzzers  # noqa: F401


@pytest.mark.parametrize("t", [2e-9, 3.5e-7, 4e-5, 0.7, 12.0])
def test_select_unit_and_unit_names_match(t):
    assert benchkit.select_unit(t) == torch_common.select_unit(t)
    unit = benchkit.select_unit(t)[0]
    assert benchkit.unit_to_english(unit) == torch_common.unit_to_english(unit)


@pytest.mark.parametrize("x, n", [(3.14159, 2), (1234.5, 3), (0.000123456, 2), (987.6, 1)])
def test_trim_sigfig_matches_where_float32_is_exact_enough(x, n):
    assert benchkit.trim_sigfig(x, n) == pytest.approx(torch_common.trim_sigfig(x, n),
                                                       rel=1e-6)


def test_documented_improvements():
    # select_unit below 1 ns: torch says seconds
    assert torch_common.select_unit(5e-10)[0] == "s"
    assert benchkit.select_unit(5e-10)[0] == "ns"
    # trim_sigfig rounds in float64, not float32
    assert benchkit.trim_sigfig(123456.789, 8) == 123456.79
    assert torch_common.trim_sigfig(123456.789, 8) != 123456.79
    # ordered_unique, set_torch_threads behave alike
    assert benchkit.ordered_unique([3, 1, 3, 2]) == torch_common.ordered_unique([3, 1, 3, 2])
    before = torch.get_num_threads()
    with benchkit.set_torch_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before


def test_old_torch_pickles_convert_and_sit_next_to_benchkits(tmp_path):
    t_m, _ = _pair(_spread(2.0, 0.01, 20, 1), label="mul", sub_label="torch 2.0",
                   description="d")
    fc = torch_cg.FunctionCounts._from_dict({"a.c:f": 100, "b.c:g": 50}, False)
    fci = torch_cg.FunctionCounts._from_dict({"a.c:f": 150, "b.c:g": 50}, True)
    t_cg = torch_cg.CallgrindStats(t_m.task_spec, 100, True, fci, fc, fci, fc, None)
    (tmp_path / "old.pkl").write_bytes(pickle.dumps([t_m, t_cg]))
    from benchkit.api.torch_compat import load_torch_pickle
    m, cg = load_torch_pickle(tmp_path / "old.pkl")
    assert m.raw_times == t_m.raw_times and m.task_spec == TaskSpec(**vars(t_m.task_spec))
    assert cg.counts() == 150 and cg.stmt_exclusive_stats.as_dict() == {"a.c:f": 100,
                                                                         "b.c:g": 50}
    assert benchkit.from_torch(t_m).median == pytest.approx(t_m.median)
    _, ours = _pair(_spread(2.5, 0.01, 20, 2), label="mul", sub_label="benchkit",
                    description="d")
    text = str(benchkit.Compare([m, ours]))
    assert "torch 2.0" in text and "benchkit" in text
    with pytest.raises(benchkit.BenchkitError, match="from_torch takes"):
        benchkit.from_torch(object())


def test_as_standardized_is_torchs_by_default_and_thorough_on_request():
    """The same counts through both: torch's rules by default (PyTorch's own test of them
    keeps conda toolchain paths), benchkit's thorough rules behind `thorough=True`."""
    from benchkit import CallgrindStats, FunctionCounts
    from benchkit.core.measure.task import TaskSpec
    names = ["/home/u/conda-bld/gcc_1/work/libstdc++-v3/libsupc++/del_op.cc:operator delete "
             "[/lib/libstdc++.so]",
             "/tmp/build/../aten/src/ATen/native/BinaryOps.cpp:at::mul [libtorch_cpu.so]",
             "/usr/src/Python-3.11/Objects/dictobject.c:lookdict [/usr/bin/python3.11]",
             "/root/.pyenv/Python-3.11/Python/ceval.c:_PyEval_EvalFrameDefault [/x]",
             "/build/glibc-abc/malloc/malloc.c:malloc [/lib/libc.so.6]",
             "/opt/venv/lib/site-packages/numpy/core/src/x.c:f [/opt/venv/lib/x.so]"]
    data = {fn: 1000 - 10 * i for i, fn in enumerate(names)}
    theirs = torch_cg.CallgrindStats(
        task_spec=torch_cg.common.TaskSpec("pass", "pass"), number_per_run=1,
        built_with_debug_symbols=True,
        baseline_inclusive_stats=torch_cg.FunctionCounts._from_dict({}, True),
        baseline_exclusive_stats=torch_cg.FunctionCounts._from_dict({}, False),
        stmt_inclusive_stats=torch_cg.FunctionCounts._from_dict(data, True),
        stmt_exclusive_stats=torch_cg.FunctionCounts._from_dict(data, False),
        stmt_callgrind_out=None).as_standardized()
    counts = FunctionCounts.from_dict(data, False)
    ours = CallgrindStats(
        task_spec=TaskSpec("pass", "pass"), number_per_run=1, built_with_debug_symbols=True,
        baseline_inclusive_stats=FunctionCounts.from_dict({}, True),
        baseline_exclusive_stats=FunctionCounts.from_dict({}, False),
        stmt_inclusive_stats=FunctionCounts.from_dict(data, True),
        stmt_exclusive_stats=counts, stmt_callgrind_out=None)
    assert [tuple(r) for r in ours.as_standardized().stats()] == [
        tuple(r) for r in theirs.stats()]
    thorough = [fn for _, fn in ours.as_standardized(thorough=True).stats()]
    assert "malloc/malloc.c:malloc" in thorough and "numpy/core/src/x.c:f" in thorough


def test_as_standardized_matches_torch_on_pytorchs_own_artifact():
    """PyTorch's callgrind artifact (the counts its test_manipulate_callgrind_stats uses,
    conda toolchain paths and all), standardized by both: the same rows, inclusive and
    exclusive, and the same difference between the two snippets."""
    import json
    from pathlib import Path

    from benchkit import CallgrindStats, FunctionCount, FunctionCounts
    from benchkit.core.measure.task import TaskSpec
    artifacts = json.loads((Path(__file__).parent / "fixtures" /
                            "torch_callgrind_artifacts.json").read_text())

    def rows(key):
        return [(int(c), fn) for c, fn in (line.split(" ", 1) for line in artifacts[key])]

    def both(key):
        base_in, base_ex = rows("baseline_inclusive"), rows("baseline_exclusive")
        stmt_in, stmt_ex = rows(f"{key}_inclusive"), rows(f"{key}_exclusive")

        def theirs_counts(r, inclusive):
            return torch_cg.FunctionCounts(tuple(sorted(
                (torch_cg.FunctionCount(c, fn) for c, fn in r), reverse=True)), inclusive)

        def ours_counts(r, inclusive):
            return FunctionCounts(tuple(sorted((FunctionCount(c, fn) for c, fn in r),
                                               reverse=True)), inclusive)
        theirs = torch_cg.CallgrindStats(
            torch_cg.common.TaskSpec("y = torch.ones(())", "pass"), 1000, True,
            theirs_counts(base_in, True), theirs_counts(base_ex, False),
            theirs_counts(stmt_in, True), theirs_counts(stmt_ex, False), None)
        ours = CallgrindStats(TaskSpec("y = torch.ones(())", "pass"), 1000, True,
                              ours_counts(base_in, True), ours_counts(base_ex, False),
                              ours_counts(stmt_in, True), ours_counts(stmt_ex, False), None)
        return theirs.as_standardized(), ours.as_standardized()

    (t0, o0), (t1, o1) = both("ones_no_data"), both("ones_with_data")
    for inclusive in (False, True):
        for t, o in ((t0, o0), (t1, o1)):
            assert [tuple(r) for r in o.stats(inclusive)] == [
                tuple(r) for r in t.stats(inclusive)]
        assert [tuple(r) for r in (o1.stats(inclusive) - o0.stats(inclusive))] == [
            tuple(r) for r in (t1.stats(inclusive) - t0.stats(inclusive))]
