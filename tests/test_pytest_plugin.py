"""The pytest plugin driven through real pytest sessions (pytester, in subprocesses)."""
import json
import shutil

import pytest

import benchkit

# end to end: `make test` runs it, `make test-fast` leaves it out
pytestmark = pytest.mark.slow

NO_CACHE = ("-p", "no:cacheprovider")


@pytest.fixture(autouse=True)
def _without_hypothesis(pytester, monkeypatch):
    """The pytest sessions these tests start load every installed plugin, as a user's do,
    but hypothesis's: it takes 0.5 s of each session's 0.8 s start and no test here uses
    it. (After pytester, which clears PYTEST_ADDOPTS.)"""
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p no:hypothesispytest")


def test_fixture_measures_and_saves(pytester):
    pytester.makepyfile(test_speed="""
        def test_sum(benchkit):
            m = benchkit("sum(range(100))", min_run_time=0.05)
            assert m.median > 0 and m.label.endswith("test_sum")

        def test_plain():
            assert True
    """)
    out = pytester.runpytest_subprocess("--benchkit-save", "speed.json", *NO_CACHE)
    out.assert_outcomes(passed=2)
    out.stdout.fnmatch_lines(["*benchkit*", "*Times are in*"])
    results = benchkit.load(pytester.path / "speed.json")
    assert [m.stmt for m in results.measurements] == ["sum(range(100))"]
    assert results.measurements[0].metadata["benchmark"] == "test_speed.py::test_sum"


def test_plugin_stays_silent_and_imports_nothing_when_unused(pytester):
    pytester.makepyfile(test_plain="""
        import sys
        def test_nothing_loaded():
            assert "benchkit.api.timer" not in sys.modules
            assert "numpy" not in sys.modules
    """)
    out = pytester.runpytest_subprocess(*NO_CACHE)
    out.assert_outcomes(passed=1)
    printed = [line for line in out.stdout.lines if not line.startswith("plugins:")]
    assert "benchkit" not in "\n".join(printed).lower()


# A pytest-benchmark test file; only the fixture's name differs (FIXTURE is replaced).
PORTED = """
import os
import pytest

WORK = int(os.environ.get("WORK", "200"))


def work(n):
    return sum(i * i for i in range(n))


def test_call_with_args(FIXTURE):
    assert FIXTURE(work, WORK) == sum(i * i for i in range(WORK))


def test_keyword_args_and_extra_info(FIXTURE):
    FIXTURE.extra_info["n"] = WORK
    assert FIXTURE(work, n=WORK) > 0


def test_pedantic_with_setup(FIXTURE):
    def setup():
        return (WORK,), {}
    result = FIXTURE.pedantic(work, setup=setup, rounds=5, warmup_rounds=1, iterations=1)
    assert result == sum(i * i for i in range(WORK))


def test_decorator(FIXTURE):
    @FIXTURE
    def result():
        return work(10)
    assert result == 285


@pytest.mark.parametrize("n", [10, 20])
def test_parametrized(FIXTURE, n):
    assert FIXTURE(work, n) == sum(i * i for i in range(n))


def test_weave(FIXTURE_weave):
    FIXTURE_weave(work)
    assert work(WORK) == sum(i * i for i in range(WORK))


def test_the_weaving_is_undone_after_its_test():
    assert work(10) == 285      # through the woven fixture, it would say it was used
"""


def test_a_pytest_benchmark_file_runs_with_the_fixture_renamed(pytester):
    pytest.importorskip("pytest_benchmark")
    pytester.makepyfile(test_ported=PORTED.replace("FIXTURE", "benchkit"))
    out = pytester.runpytest_subprocess("--benchkit-save", "ported.json",
                                        "--benchkit-min-run-time", "0.05", *NO_CACHE)
    out.assert_outcomes(passed=8)
    names = [m.metadata["benchmark"] for m in
             benchkit.load(pytester.path / "ported.json").measurements]
    assert names == ["test_ported.py::test_call_with_args",
                     "test_ported.py::test_keyword_args_and_extra_info",
                     "test_ported.py::test_pedantic_with_setup",
                     "test_ported.py::test_decorator",
                     "test_ported.py::test_parametrized[10]",
                     "test_ported.py::test_parametrized[20]",
                     "test_ported.py::test_weave"]
    results = benchkit.load(pytester.path / "ported.json")
    assert results.measurements[1].metadata["extra_info"] == {"n": 200}
    pedantic = results.measurements[2]
    assert pedantic.number_per_run == 1 and len(pedantic.raw_times) == 5
    # The same file, unchanged, under pytest-benchmark: the porting path is only the rename.
    pytester.makepyfile(test_ported=PORTED.replace("FIXTURE", "benchmark"))
    theirs = pytester.runpytest_subprocess("--benchmark-min-time",
                                           "0.001", "--benchmark-max-time", "0.05", *NO_CACHE)
    theirs.assert_outcomes(passed=8)


GATED = """
import os
import pytest

WORK = int(os.environ.get("WORK", "300"))


def work(n):
    return sum(i * i for i in range(n))


@pytest.mark.benchkit(fail_on="slower>10%")
def test_gated(benchkit):
    benchkit(work, WORK)


def test_ungated(benchkit):
    benchkit(work, 300)
"""


def test_baselines_and_gates_fail_the_session(pytester, monkeypatch):
    pytester.makepyfile(test_gated=GATED)
    first = pytester.runpytest_subprocess("--benchkit-autosave", *NO_CACHE)
    first.assert_outcomes(passed=2)
    saved = list((pytester.path / ".benchkit").glob("*.json"))
    assert len(saved) == 1
    # 100x the work in test_gated only: on a machine busy with the suite's other worker, a
    # speed probe that saw it 11x slower made a 10x change inconclusive (the gross-change
    # band covers the worst slowdown seen), and the gate rightly undecided
    monkeypatch.setenv("WORK", "30000")
    second = pytester.runpytest_subprocess("--benchkit-compare", *NO_CACHE)
    assert second.ret == 1
    second.stdout.fnmatch_lines(["*compared with*", "*FAILED test_gated.py::test_gated: "
                                 "slower>10%*"])
    assert "FAILED test_gated.py::test_ungated" not in second.stdout.str()


def test_identical_code_passes_its_gate(pytester, monkeypatch):
    pytester.makepyfile(test_gated=GATED)
    # 100x the work: a call of 20 us, timed while the suite's other worker started and
    # stopped heavy jobs between the two sessions, was once judged more than 10 % slower
    monkeypatch.setenv("WORK", "30000")
    pytester.runpytest_subprocess("--benchkit-save", "base.json", *NO_CACHE)
    again = pytester.runpytest_subprocess("--benchkit-compare", "base.json",
                                          "--benchkit-fail-on", "slower>10%", *NO_CACHE)
    again.assert_outcomes(passed=2)
    assert again.ret == 0
    again.stdout.fnmatch_lines(["*2 benchmarks compared:*"])


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_instruction_counts_per_test_and_a_deterministic_gate(pytester, monkeypatch):
    # No markers: the command line's gate applies to every benchmark.
    pytester.makepyfile(test_counts=GATED.replace('@pytest.mark.benchkit(fail_on="slower>10%")\n',
                                                  ""))
    first = pytester.runpytest_subprocess("--benchkit-callgrind", "--benchkit-save",
                                          "base.json", *NO_CACHE)
    first.assert_outcomes(passed=2)
    base = benchkit.load(pytester.path / "base.json")
    assert [s.metadata["benchmark"] for s in base.callgrind] == [
        "test_counts.py::test_gated", "test_counts.py::test_ungated"]
    assert base.callgrind[0].per_run() > 1000
    monkeypatch.setenv("WORK", "303")          # 1 % more work: counts see it
    second = pytester.runpytest_subprocess("--benchkit-callgrind", "--benchkit-compare",
                                           "base.json", "--benchkit-fail-on",
                                           "instructions>0.5%", *NO_CACHE)
    assert second.ret == 1
    text = second.stdout.str()
    assert "FAILED test_counts.py::test_gated: instructions>0.5%" in text
    assert "FAILED test_counts.py::test_ungated" not in text


MEMORY = """
import os
KEEP = []
N = int(os.environ.get("N", "100"))


def grow():
    KEEP.append(bytearray(N))


def build():
    return [0] * N


def test_leaky(benchkit):
    benchkit(grow)


def test_lists(benchkit):
    benchkit(build)
"""


def test_memory_per_test_and_memory_gates(pytester, monkeypatch):
    pytester.makepyfile(test_mem=MEMORY)
    first = pytester.runpytest_subprocess("--benchkit-memory", "--benchkit-save", "base.json",
                                          "--benchkit-min-run-time", "0.02", *NO_CACHE)
    first.assert_outcomes(passed=2)
    first.stdout.fnmatch_lines(["*allocs/run*", "*test_mem.py::test_leaky*"])
    leaky, lists = benchkit.load(pytester.path / "base.json").memory
    assert leaky.metadata["benchmark"] == "test_mem.py::test_leaky"
    assert leaky.retained_bytes_per_run > 100 and lists.retained_bytes_per_run == 0
    # A leak gate fails the leaking test only, on identical code.
    leak = pytester.runpytest_subprocess("--benchkit-memory", "--benchkit-compare", "base.json",
                                         "--benchkit-fail-on", "retained>0",
                                         "--benchkit-min-run-time", "0.02", *NO_CACHE)
    assert leak.ret == 1
    assert "FAILED test_mem.py::test_leaky: retained>0" in leak.stdout.str()
    assert "FAILED test_mem.py::test_lists" not in leak.stdout.str()
    monkeypatch.setenv("N", "1000")
    grown = pytester.runpytest_subprocess("--benchkit-memory", "--benchkit-compare", "base.json",
                                          "--benchkit-fail-on", "bytes>10%",
                                          "--benchkit-min-run-time", "0.02", *NO_CACHE)
    assert grown.ret == 1
    assert "FAILED test_mem.py::test_lists: bytes>10%" in grown.stdout.str()


def test_skip_and_disable(pytester):
    pytester.makepyfile(test_flags="""
        import os
        CALLS = []

        def work():
            CALLS.append(1)
            return 7

        def test_bench(benchkit):
            assert benchkit(work) == 7
            if os.environ.get("EXPECT_ONE"):
                assert len(CALLS) == 1

        def test_plain():
            assert True
    """)
    skipped = pytester.runpytest_subprocess("--benchkit-skip", *NO_CACHE)
    skipped.assert_outcomes(passed=1, skipped=1)
    disabled = pytester.runpytest_subprocess("--benchkit-disable", *NO_CACHE,
                                             "--benchkit-save", "d.json")
    disabled.assert_outcomes(passed=2)
    assert not (pytester.path / "d.json").exists()


@pytest.mark.parametrize("args, words", [
    (["--benchkit-fail-on", "bogus"], "gate 'bogus' is not of the form"),
    (["--benchkit-save", "a_file/r.json"], "is not a directory"),
    (["--benchkit-compare", "missing.json"], "no such results file"),
    (["--benchkit-min-run-time", "nan"], "must be a finite number > 0"),
])
def test_bad_options_are_usage_errors(pytester, args, words):
    (pytester.path / "a_file").write_text("x")
    pytester.makepyfile(test_x="def test_x(benchkit):\n    benchkit(len, [])\n")
    out = pytester.runpytest_subprocess(*args, *NO_CACHE)
    assert out.ret == pytest.ExitCode.USAGE_ERROR
    assert words in out.stderr.str()


def test_the_fixture_measures_one_thing_per_test(pytester):
    pytester.makepyfile(test_twice="""
        def test_twice(benchkit):
            benchkit(len, [])
            benchkit(len, [])
    """)
    out = pytester.runpytest_subprocess(*NO_CACHE)
    out.assert_outcomes(failed=1)
    out.stdout.fnmatch_lines(["*measures one thing per test*"])


def test_results_file_is_the_open_format(pytester):
    pytester.makepyfile(test_speed="def test_s(benchkit):\n    benchkit(sum, [1, 2])\n")
    pytester.runpytest_subprocess("--benchkit-save", "r.json", *NO_CACHE)
    doc = json.loads((pytester.path / "r.json").read_text())
    assert doc["format"] == "benchkit-results" and doc["measurements"][0]["processes"]


def test_extra_info_stores_numpy_scalars_and_non_finite_numbers(pytester):
    pytester.makepyfile(test_info="""
        import math
        import numpy as np
        import pytest

        def test_numbers(benchkit):
            benchkit.extra_info["n"] = np.int64(3)
            benchkit.extra_info.update(ratio=np.float32(0.5), nan=math.nan, inf=-math.inf)
            benchkit(sum, [1, 2, 3])

        def test_an_object_is_refused_when_assigned(benchkit):
            with pytest.raises(Exception, match=r"test_info.py::test_an_object_is_refused_when_"
                                                r"assigned: extra_info\\['obj'\\] holds"):
                benchkit.extra_info["obj"] = object()
            benchkit(sum, [1])
    """)
    out = pytester.runpytest_subprocess("--benchkit-save", "r.json", "--benchkit-min-run-time",
                                        "0.02", *NO_CACHE)
    out.assert_outcomes(passed=2)
    results = benchkit.load(pytester.path / "r.json")
    info = {m.metadata["benchmark"].split("::")[1]: m.metadata["extra_info"]
            for m in results.measurements}
    assert info["test_numbers"] == {"n": 3, "ratio": 0.5, "nan": "NaN", "inf": "-Infinity"}
    assert info["test_an_object_is_refused_when_assigned"] == {}


XDIST_TESTS = """
    import pytest

    @pytest.mark.parametrize("n", [10, 20, 30, 40])
    def test_sum(benchkit, n):
        benchkit(sum, range(n))
"""


def test_under_xdist_every_workers_measurements_are_saved_and_gated(pytester):
    pytest.importorskip("xdist")
    pytester.makepyfile(test_x=XDIST_TESTS)
    names = {f"test_x.py::test_sum[{n}]" for n in (10, 20, 30, 40)}
    for attempt in range(2):
        out = pytester.runpytest_subprocess("-n", "2", "--benchkit-save", f"r{attempt}.json",
                                            "--benchkit-min-run-time", "0.02", *NO_CACHE)
        out.assert_outcomes(passed=4)
        results = benchkit.load(pytester.path / f"r{attempt}.json")
        assert {m.metadata["benchmark"] for m in results.measurements} == names
    pytester.makepyfile(test_x=XDIST_TESTS.replace("[10, 20, 30, 40]", "[10, 20, 30]"))
    out = pytester.runpytest_subprocess("-n", "2", "--benchkit-compare", "r0.json",
                                        "--benchkit-fail-on", "slower>1000%",
                                        "--benchkit-min-run-time", "0.02", *NO_CACHE)
    assert out.ret == 1      # test_sum[40] is in the baseline only: its gate cannot pass
    out.stdout.fnmatch_lines(["*test_sum?40?: slower>1000%: cannot be evaluated: not in NEW*"])
    out = pytester.runpytest_subprocess("-n", "2", "--benchkit-compare", "r0.json",
                                        "--benchkit-fail-on", "slower>1000%",
                                        "--benchkit-allow-missing",
                                        "--benchkit-min-run-time", "0.02", *NO_CACHE)
    assert out.ret == 0
    out.stdout.fnmatch_lines(["*3 benchmarks compared*"])


@pytest.mark.parametrize("how, code", [("raise KeyboardInterrupt", 130),
                                       ("os.kill(os.getpid(), signal.SIGTERM)", 143)])
def test_an_interrupted_session_saves_what_it_measured_marked_partial(pytester, how, code):
    pytester.makepyfile(test_stop=f"""
        import os, signal

        def test_first(benchkit):
            benchkit(sum, range(10))

        def test_stops(benchkit):
            benchkit(sum, range(10))
            {how}

        def test_never_runs(benchkit):
            benchkit(sum, range(10))
    """)
    out = pytester.runpytest_subprocess("--benchkit-save", "r.json", "--benchkit-min-run-time",
                                        "0.02", *NO_CACHE)
    assert out.ret == code, out.stdout.str()
    results = benchkit.load(pytester.path / "r.json")
    assert results.partial and results.partial.startswith("interrupted (SIG")
    assert [m.metadata["benchmark"] for m in results.measurements] == [
        "test_stop.py::test_first", "test_stop.py::test_stops"]


def test_parametrized_tests_of_one_group_are_separate_rows(pytester):
    """boost-histogram's parametrized benchmarks share a group: each id is its own row in the
    end-of-session table (they used to collapse into one row per group)."""
    pytester.makepyfile(test_grid="""
        import pytest

        @pytest.mark.benchkit(group="fill")
        @pytest.mark.parametrize("n", [10, 1000])
        @pytest.mark.parametrize("kind", ["list", "tuple"])
        def test_fill(benchkit, n, kind):
            build = list if kind == "list" else tuple
            benchkit(build, range(n))

        @pytest.mark.benchkit(group="fill")
        @pytest.mark.parametrize("n", [5, 50])
        def test_snippet(benchkit, n):
            benchkit("sum(range(n))", globals={"n": n})
    """)
    out = pytester.runpytest_subprocess("--benchkit-min-run-time", "0.01", *NO_CACHE)
    out.assert_outcomes(passed=6)
    text = out.stdout.str()
    for row in ("[list-10]", "[tuple-10]", "[list-1000]", "[tuple-1000]", "[5]", "[50]"):
        assert sum(row in line for line in text.splitlines()) == 1, (row, text)


PEDANTIC = """
import pytest

calls = []


def target(*args, **kwargs):
    calls.append((args, kwargs))
    return len(calls)


def test_iterations_make_one_more_call_for_the_result(benchkit):
    calls.clear()
    result = benchkit.pedantic(target, args=(1,), rounds=5, warmup_rounds=2, iterations=10)
    assert len(calls) == (5 + 2) * 10 + 1 and result == len(calls)


def test_one_iteration_returns_the_last_timed_call(benchkit):
    calls.clear()
    assert benchkit.pedantic(target, rounds=3) == 3 and len(calls) == 3


def test_teardown_gets_the_arguments_setup_made(benchkit):
    seen = []
    counter = iter(range(100))
    benchkit.pedantic(target, setup=lambda: ((next(counter),), {"k": 1}),
                      teardown=lambda *a, **k: seen.append((a, k)), rounds=3, warmup_rounds=1)
    assert seen == [((0,), {"k": 1}), ((1,), {"k": 1}), ((2,), {"k": 1}), ((3,), {"k": 1})]


def test_setup_arguments_and_args_together_are_a_type_error(benchkit):
    with pytest.raises(TypeError, match="setup returned arguments"):
        benchkit.pedantic(target, args=(1,), setup=lambda: ((2,), {}))


def test_setup_with_iterations_is_a_value_error(benchkit):
    with pytest.raises(ValueError, match="iterations"):
        benchkit.pedantic(target, setup=lambda: None, iterations=2)


@pytest.mark.parametrize("bad", [{"rounds": 0}, {"iterations": 0}, {"warmup_rounds": -1},
                                 {"rounds": 1.5}])
def test_counts_are_checked(benchkit, bad):
    with pytest.raises(ValueError):
        benchkit.pedantic(target, **bad)


def test_enabled(benchkit):
    assert benchkit.enabled and not benchkit.disabled
    benchkit(target)
"""


def test_pedantic_calls_setup_teardown_and_errors_as_pytest_benchmark_does(pytester):
    pytester.makepyfile(test_pedantic_semantics=PEDANTIC)
    out = pytester.runpytest_subprocess("--benchkit-min-run-time", "0.01", *NO_CACHE)
    out.assert_outcomes(passed=10)
    disabled = pytester.runpytest_subprocess("--benchkit-disable", "-k", "not enabled",
                                             *NO_CACHE)
    disabled.assert_outcomes(passed=6, failed=3)      # the call-count tests: one call each
    pytester.makepyfile(test_disabled="""
        def test_disabled(benchkit):
            assert benchkit.disabled and not benchkit.enabled
    """)
    pytester.runpytest_subprocess("--benchkit-disable", "test_disabled.py",
                                  *NO_CACHE).assert_outcomes(passed=1)


def test_a_pytest_benchmark_file_runs_unchanged_with_the_alias(pytester):
    """--benchkit-as-benchmark: the `benchmark` fixture and marker of pytest-benchmark test
    files, served by benchkit (pytest-benchmark itself switched off with -p no:benchmark)."""
    pytester.makepyfile(test_unchanged=PORTED.replace("FIXTURE", "benchmark") + """

@pytest.mark.benchmark(group="grouped")
def test_marked(benchmark):
    benchmark(work, 5)
""")
    out = pytester.runpytest_subprocess("-p", "no:benchmark", "--benchkit-as-benchmark",
                                        "--benchkit-save", "same.json",
                                        "--benchkit-min-run-time", "0.02", *NO_CACHE)
    out.assert_outcomes(passed=9)
    results = benchkit.load(pytester.path / "same.json")
    assert len(results.measurements) == 8
    assert results.measurements[-1].metadata["group"] == "grouped"
    if _has_pytest_benchmark():
        clash = pytester.runpytest_subprocess("--benchkit-as-benchmark", *NO_CACHE)
        assert clash.ret != 0 and "-p no:benchmark" in clash.stderr.str()


def _has_pytest_benchmark() -> bool:
    import importlib.util
    return importlib.util.find_spec("pytest_benchmark") is not None


def test_stats_and_cprofile_as_pytest_benchmark_has_them(pytester):
    pytester.makepyfile(test_stats="""
        import pytest

        def work(n=300):
            return sorted(range(n, 0, -1))

        def test_stats(benchkit):
            benchkit(work)
            s = benchkit.stats.stats
            assert 0 < s.min <= s.q1 <= s.median <= s.q3 <= s.max
            assert s.rounds == len(benchkit.measurement.raw_times) and s.ops > 0
            assert benchkit.cprofile_stats is None

        @pytest.mark.benchkit(cprofile=True)
        def test_profiled_pedantic(benchkit):
            calls = []
            benchkit.pedantic(lambda: calls.append(1) or work(), teardown=lambda: calls.append(
                "teardown"), rounds=2)
            # two timed rounds, then one profiled call, each with its teardown
            assert calls == [1, "teardown", 1, "teardown", 1, "teardown"]
            assert any("work" in str(key) for key in benchkit.cprofile_stats.stats)
    """)
    out = pytester.runpytest_subprocess("--benchkit-min-run-time", "0.01", *NO_CACHE)
    out.assert_outcomes(passed=2)


def test_pytest_benchmarks_own_test_files_pass_with_the_fixture_renamed(pytester):
    """pytest-benchmark's test_pedantic.py, test_normal.py, test_sample.py and test_skip.py,
    from its sdist on the package index (read at test time, not kept here), with
    `benchmark` renamed to `benchkit` and pytest-benchmark switched off."""
    import re
    import subprocess
    import sys
    import tarfile
    download = pytester.path / "sdist"
    got = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                          "--no-binary", ":all:", "pytest-benchmark==5.3.1", "-d",
                          str(download)], capture_output=True, text=True, timeout=300)
    if got.returncode != 0:
        pytest.skip(f"pytest-benchmark's sdist could not be downloaded: {got.stderr[-300:]}")
    names = ("test_pedantic.py", "test_normal.py", "test_sample.py", "test_skip.py")
    with tarfile.open(next(download.glob("*.tar.gz"))) as sdist:
        for member in sdist.getmembers():
            if member.name.split("/")[-2:-1] == ["tests"] and member.name.endswith(names):
                text = sdist.extractfile(member).read().decode()
                (pytester.path / member.name.split("/")[-1]).write_text(
                    re.sub(r"\bbenchmark\b", "benchkit", text))
    out = pytester.runpytest_subprocess("-p", "no:benchmark", "--benchkit-min-run-time",
                                        "0.01", *names, *NO_CACHE)
    out.assert_outcomes(passed=36, skipped=1)
