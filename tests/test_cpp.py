"""C++ snippets end to end: the real compiler, the installed torch, real valgrind."""
import os
import shutil
import subprocess
import sys
import time

import pytest

import benchkit
from benchkit import Language, Timer
from benchkit.engines.callgrind import workdir
from benchkit.engines.cpp import callgrind_program, source, toolchain
from benchkit.errors import SnippetError
from conftest import requires_valgrind

# end to end: `make test` runs it, `make test-fast` leaves it out
pytestmark = pytest.mark.slow

pytest.importorskip("torch")
if toolchain.shutil.which("c++") is None and toolchain.shutil.which("g++") is None:
    pytest.skip("no C++ compiler", allow_module_level=True)

SETUP = """
    auto x = torch::ones({128});
    auto y = torch::ones({128});
"""


def test_cpp_timer_times_the_seed_snippet():
    timer = Timer("x * y;", SETUP, language=Language.CPP, label="cpp")
    m = timer.blocked_autorange(min_run_time=0.2)
    assert 1e-8 < m.median < 1e-4 and m.number_per_run >= 100
    assert m.task_spec.setup == "auto x = torch::ones({128});\nauto y = torch::ones({128});"
    assert timer.timeit(1000).number_per_run == 1000
    assert timer.adaptive_autorange(max_run_time=0.1).median > 0


def test_second_timer_with_the_same_snippet_compiles_nothing():
    first = Timer("x * y;", SETUP, language="cpp")
    started = time.perf_counter()
    first.timeit(10)
    path = first._loop.path
    built = path.stat().st_mtime_ns
    second = Timer("x * y;", SETUP, language="c++")
    second.timeit(10)
    assert second._loop.path == path and path.stat().st_mtime_ns == built
    assert time.perf_counter() - started < 600


def test_compile_error_points_at_the_snippets_own_line():
    timer = Timer("x * y;\nundefined_name + 1;", SETUP, language="cpp")
    with pytest.raises(toolchain.CppCompileError) as info:
        timer.timeit(1)
    assert "stmt line 2" in str(info.value) and "undefined_name" in str(info.value)


def test_a_thrown_cpp_exception_is_a_snippet_error():
    timer = Timer('throw std::runtime_error("boom from C++");', language="cpp")
    with pytest.raises(SnippetError, match="boom from C\\+\\+"):
        timer.timeit(1)


def test_cpp_takes_no_globals_and_python_takes_no_global_setup():
    with pytest.raises(benchkit.BenchkitError, match="C\\+\\+ snippets take no globals"):
        Timer("x;", language="cpp", globals={"x": 1})
    with pytest.raises(benchkit.BenchkitError, match="global_setup is for C\\+\\+"):
        Timer("pass", global_setup="#include <vector>")


def test_diagnostics_map_to_snippet_lines():
    src = source.snippet_source("a;\nb;", "int a = 1;", "#include <vector>")
    lines = src.text.splitlines()
    stmt_line = next(i for i, line in enumerate(lines, 1) if line.strip() == "b;")
    text = (f"snippet.cpp:{stmt_line}:7: error: 'b' was not declared\n"
            "snippet.cpp:3:1: warning: ignored\n")
    assert source.map_diagnostics(text, src, "snippet.cpp") == [
        "stmt line 2, column 7: error: 'b' was not declared"]


def test_missing_compiler_is_one_clear_error(tmp_path):
    code = ("import benchkit\n"
            "try:\n"
            "    benchkit.Timer('1;', language='cpp').timeit(1)\n"
            "except benchkit.BenchkitError as e:\n"
            "    print(type(e).__name__, e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "PATH": str(tmp_path), "CXX": ""})
    assert "CppToolchainError" in out.stdout and "apt-get install g++" in out.stdout


@requires_valgrind
def test_cpp_instruction_counts_need_no_interpreter_and_repeat_exactly():
    timer = Timer("x * y;", SETUP, language="cpp")
    started = time.perf_counter()
    a = timer.collect_callgrind(number=100)
    elapsed = time.perf_counter() - started
    b = timer.collect_callgrind(number=100)
    assert a.counts() == b.counts() and a.per_run() > 1000
    assert a.metadata["controls"]["language"] == "cpp"
    assert a.metadata["controls"]["collector_revision"] == workdir.collector_revision(
        workdir.CPP_COLLECTOR_SOURCES) != workdir.collector_revision()
    assert a.baseline_exclusive_stats.sum() < 1000
    # the snippet's own lines, under a name that is the same in every compile
    assert any(fn.startswith("/benchkit-snippet/snippet.cpp:bk_callgrind_main")
               for _, fn in a.stmt_exclusive_stats)
    assert not any("python" in fn.lower() and "libpython" in fn for _, fn in a.stmt_exclusive_stats)
    assert elapsed < 600


@requires_valgrind
def test_counting_a_timed_snippet_compiles_nothing_more():
    timer = Timer("x + y;", SETUP, language="cpp")
    timer.timeit(10)
    library = timer._loop.path
    built = library.stat().st_mtime_ns
    driver, counted = callgrind_program(timer.task_spec)
    assert counted == library and library.stat().st_mtime_ns == built
    assert os.access(driver, os.X_OK)


def test_driver_names_a_library_built_without_callgrind_support():
    driver = toolchain.driver()
    out = subprocess.run([str(driver), "libm.so.6", "1", "1", "0", "1", "0"],
                         capture_output=True, text=True)
    assert out.returncode == 4 and "built without valgrind's callgrind.h" in out.stderr
    out = subprocess.run([str(driver), "/nonexistent.so", "1", "1", "0", "1", "0"],
                         capture_output=True, text=True)
    assert out.returncode == 3 and "/nonexistent.so" in out.stderr


@pytest.mark.compat
@requires_valgrind
def test_cpp_counts_do_not_depend_on_where_the_cache_lives(tmp_path, monkeypatch):
    timer = Timer("x * y;", SETUP, language="cpp")
    built = callgrind_program(timer.task_spec)
    counts = []
    for name in ("c", "a-much-longer-cache-directory-for-benchkit-artifacts"):
        cpp_cache = tmp_path / name / "benchkit" / "cpp"
        cpp_cache.mkdir(parents=True)
        for artifact in built:   # the same artifacts: nothing to compile
            shutil.copy2(artifact, cpp_cache / artifact.name)
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / name))
        assert callgrind_program(timer.task_spec)[1].parent == cpp_cache
        counts.append(timer.collect_callgrind(number=100).counts())
    assert counts[0] == counts[1]


def test_the_cxx_standard_follows_torchs_headers():
    from benchkit.engines.cpp.toolchain import cxx_standard
    assert [cxx_standard(v) for v in ("2.1.2", "2.13.0", "2.13.0+cpu", "2.14.1+cu130",
                                      "2.15.0", "3.0.0")] == [
        "c++17", "c++17", "c++17", "c++20", "c++20", "c++20"]
