"""FunctionCounts / CallgrindStats arithmetic on real PyTorch counts (tests/fixtures)."""
import json
import pickle
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import benchkit
from benchkit import CallgrindStats, FunctionCount, FunctionCounts, TaskSpec
from benchkit.errors import CountsMismatchError
from benchkit.core.callgrind.callgrind_stats import estimated_cycles
from benchkit.core.callgrind.counts import diff_counts

ARTIFACTS = json.loads((Path(__file__).parent / "fixtures" / "torch_callgrind_artifacts.json")
                       .read_text())


def counts(key):
    rows = []
    for line in ARTIFACTS[key]:
        count, fn = line.split(" ", 1)
        rows.append(FunctionCount(int(count), fn))
    return FunctionCounts(tuple(rows), inclusive=key.endswith("inclusive"))


def stats(key, number=1000):
    return CallgrindStats(TaskSpec(f"y = torch.ones({key})", "pass"), number, True,
                          counts("baseline_inclusive"), counts("baseline_exclusive"),
                          counts(f"{key}_inclusive"), counts(f"{key}_exclusive"))


NO_DATA, WITH_DATA = stats("ones_no_data"), stats("ones_with_data")


def test_sum_len_iteration_indexing_and_slicing():
    ex = counts("ones_no_data_exclusive")
    assert len(ex) == 353 and ex.sum() == sum(c for c, _ in ex)
    first = ex[0]
    assert isinstance(first, FunctionCount) and first == (408000, "???:__tls_get_addr [/usr/lib64/ld-2.28.so]")
    top = ex[:5]
    assert isinstance(top, FunctionCounts) and len(top) == 5 and not top.inclusive
    assert "Total: " in repr(ex[2:4])


def test_repr_elides_long_names_truncates_rows_and_ends_with_total():
    text = re.sub(r"0x[0-9a-f]+", "0x0", repr(counts("ones_no_data_exclusive")))
    lines = text.splitlines()
    assert lines[0] == "<benchkit.FunctionCounts object at 0x0>"
    assert lines[1] == "  408000  ???:__tls_get_addr [/usr/lib64/ld-2.28.so]"
    assert len(lines) == 1 + 9 + 1 + 9 + 2 and lines[10] == "     ..."
    assert all(len(line) <= 80 for line in lines) and " ... " in text
    assert lines[-1] == f"Total: {counts('ones_no_data_exclusive').sum()}"
    assert "Total:" not in repr(counts("ones_no_data_inclusive"))


def test_subtraction_gives_the_changed_functions():
    delta = WITH_DATA.delta(NO_DATA)
    assert delta.sum() == WITH_DATA.counts() - NO_DATA.counts()
    assert all(c != 0 for c, _ in delta)
    assert (delta + counts("ones_no_data_exclusive")).as_dict() == {
        fn: c for c, fn in counts("ones_with_data_exclusive") if c}


def test_mixing_inclusive_and_exclusive_is_an_error():
    with pytest.raises(CountsMismatchError, match="inclusive and exclusive"):
        counts("baseline_inclusive") - counts("baseline_exclusive")


def test_transform_sums_collisions_and_filter_keeps_matches():
    ex = counts("ones_no_data_exclusive")
    by_object = ex.transform(lambda fn: re.sub(r"^.*\[(.*)\]$", r"\1", fn))
    assert by_object.sum() == ex.sum() and len(by_object) < len(ex)
    assert by_object[0].count >= ex[0].count
    only_malloc = ex.filter(lambda fn: "malloc" in fn)
    assert 0 < len(only_malloc) < len(ex) and all("malloc" in fn for _, fn in only_malloc)


def test_multiplication_scales():
    ex = counts("baseline_exclusive")
    assert (ex * 2).sum() == 2 * ex.sum() and (2 * ex).sum() == 2 * ex.sum()


def test_denoise_removes_unicode_dict_lookups_including_3_11_name():
    rows = (FunctionCount(100, "Objects/dictobject.c:unicodekeys_lookup_unicode [x]"),
            FunctionCount(50, "Objects/dictobject.c:lookdict_unicode [x]"),
            FunctionCount(7, "Python/ceval.c:_PyEval_EvalFrameDefault [x]"))
    assert FunctionCounts(rows, False).denoise().sum() == 7


def test_standardized_names_strip_prefixes_and_libraries():
    thorough = WITH_DATA.as_standardized(thorough=True).stats()
    names = [fn for _, fn in thorough]
    assert "Python/ceval.c:_PyEval_EvalFrameDefault" in names
    assert not any("[/" in fn or "/tmp/build" in fn or "conda-bld" in fn for fn in names)
    assert thorough.sum() == WITH_DATA.counts()
    # torch.utils.benchmark's rules (the default) keep conda toolchain paths
    default = [fn for _, fn in WITH_DATA.as_standardized().stats()]
    assert "Python/ceval.c:_PyEval_EvalFrameDefault" in default
    assert not any("[/" in fn for fn in default) and any("conda-bld" in fn for fn in default)


def test_baseline_subtracted_counts_and_per_run():
    s = NO_DATA
    assert s.counts(subtract_baseline=True) == s.counts() - s.baseline_exclusive_stats.sum()
    assert s.per_run() == s.counts(subtract_baseline=True) / 1000
    assert s.stats(subtract_baseline=True).sum() == s.counts(subtract_baseline=True)


def test_callgrind_stats_repr_has_the_seed_layout():
    text = re.sub(r"0x[0-9a-f]+", "0x0", repr(NO_DATA))
    all_, base = NO_DATA.counts(), NO_DATA.baseline_exclusive_stats.sum()
    assert text.splitlines()[:5] == [
        "<benchkit.CallgrindStats object at 0x0>",
        "y = torch.ones(ones_no_data)",
        "                           All          Noisy symbols removed",
        f"    Instructions: {all_:>12}{'':>15}{NO_DATA.counts(denoise=True):>12}",
        f"    Baseline:     {base:>12}{'':>15}{NO_DATA.baseline_exclusive_stats.denoise().sum():>12}"]
    assert text.splitlines()[-1] == "1000 runs per measurement, 1 thread"


def test_diff_view_tells_only_a_only_b_and_both_apart():
    a = FunctionCounts((FunctionCount(10, "f"), FunctionCount(5, "g")), False)
    b = FunctionCounts((FunctionCount(12, "f"), FunctionCount(3, "h")), False)
    d = diff_counts(a, b)
    assert d.only_a == (FunctionCount(5, "g"),) and d.only_b == (FunctionCount(3, "h"),)
    assert d.both == (("f", 10, 12),) and d.total == 0
    text = d.format()
    assert "-only A  g" in text and "+only B  h" in text and "1 changed in both" in text


def test_estimated_cycles():
    ev = dict(Ir=100, Dr=50, Dw=50, I1mr=10, D1mr=5, D1mw=5, ILmr=2, DLmr=1, DLmw=1)
    assert estimated_cycles(ev) == (200 - 20) + 5 * (20 - 4) + 35 * 4
    assert estimated_cycles({"Ir": 5}) is None


def test_pickle_and_results_file_round_trip_without_torch(tmp_path):
    path = benchkit.save(tmp_path / "cg.json.gz", [WITH_DATA])
    loaded = benchkit.load(path).callgrind[0]
    assert loaded.stats().as_dict() == WITH_DATA.stats().as_dict()
    assert loaded.counts() == WITH_DATA.counts() and loaded.task_spec == WITH_DATA.task_spec
    blocked = tmp_path / "blocked" / "torch"
    blocked.mkdir(parents=True)
    (blocked / "__init__.py").write_text("raise ImportError('no torch here')\n")
    (tmp_path / "s.pkl").write_bytes(pickle.dumps(WITH_DATA))
    code = textwrap.dedent(f"""
        import pickle, benchkit
        s = pickle.load(open({str(tmp_path / 's.pkl')!r}, "rb"))
        r = benchkit.load({str(path)!r}).callgrind[0]
        print(s.counts() == r.counts(), s.delta(r).sum())
        print(r.stats()[:3])
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(tmp_path / "blocked")}).stdout
    assert out.startswith("True 0\n") and "Total:" in out


def _with_layouts(per_run):
    import dataclasses
    return dataclasses.replace(NO_DATA, metadata={"layouts": {"per_run": per_run}})


def test_instruction_band_and_changes_outside_both_bands():
    from benchkit.core.decisions.bands import Band, instruction_change
    base = Band.of(_with_layouts([100.0, 104.0, 98.0]))
    assert (base.low, base.median, base.high, base.layouts) == (98.0, 100.0, 104.0, 3)
    assert str(base) == "100 [98..104]"
    overlapping = Band.of(_with_layouts([103.0, 106.0, 101.0]))
    assert instruction_change(base, overlapping) == 0.0
    above = Band.of(_with_layouts([110.0, 112.0, 109.0]))
    assert instruction_change(base, above) == pytest.approx(109 / 104 - 1)
    below = Band.of(_with_layouts([90.0, 91.0, 92.0]))
    assert instruction_change(base, below) == pytest.approx(92 / 98 - 1)
    single = Band.of(NO_DATA)
    assert single.low == single.high == NO_DATA.per_run() and single.layouts == 1


def test_instructions_gate_fires_only_beyond_the_bands():
    from benchkit.core.decisions.bands import Band
    from benchkit.core.compare.comparison import Row, _check, _Side
    from benchkit.core.metrics.gates import Gate
    gate = Gate.parse("instructions>1%")
    sides = [_Side(label, {}, {"x": object()}, {}) for label in ("BASE", "NEW")]
    base = Band(98.0, 100.0, 104.0, 3)
    inside = Row("x", None, base, Band(103.0, 106.0, 105.0, 3))
    assert _check(inside, [gate], *sides, False).failures == ()
    beyond = Row("x", None, base, Band(106.0, 107.0, 108.0, 3))
    assert ("instructions>1%: +1.92% instructions beyond the layout band"
            in _check(beyond, [gate], *sides, False).failures)
