"""Timer end to end: real snippets, real torch, the real compiled loop."""
import subprocess
import sys
import textwrap
import timeit

import pytest
import torch

import benchkit
from benchkit import Timer
from benchkit.errors import BenchkitError, SnippetError, SnippetSyntaxError
from benchkit.engines.wall.clock import accelerator_synchronizer, make_default_timer


def test_seed_snippet_gives_a_measurement():
    m = Timer("x * y", "x = torch.ones((128,))\ny = torch.ones((128,))").blocked_autorange(
        min_run_time=0.05)
    assert isinstance(m, benchkit.Measurement)
    assert m.number_per_run >= 1 and len(m.raw_times) >= 1 and m.median > 0
    assert m.stmt == "x * y" and m.num_threads == 1


def test_multiline_indented_snippets_are_dedented():
    t = Timer(stmt="""
        z = x + 1
        z = z * 2
        """, setup="""
        x = 3
        """)
    assert t.task_spec.stmt == "z = x + 1\nz = z * 2" and t.task_spec.setup == "x = 3"
    assert t.timeit(10).number_per_run == 10


def test_callables_as_stmt_and_setup():
    calls = []
    t = Timer(stmt=lambda: calls.append(1), setup=lambda: calls.append("setup"))
    m = t.timeit(number=50)
    assert calls.count(1) == 50 + 2  # warm-up of max(50 // 100, 2) runs, then 50
    assert calls.count("setup") == 2 and m.number_per_run == 50


def test_globals_are_copied_not_shared():
    g = {"x": 1}
    t = Timer("y = x + 1", globals=g)
    g["x"] = "not a number"
    t.timeit(5)
    assert g == {"x": "not a number"}


def test_torch_is_available_without_import_and_not_added_to_user_globals():
    g = {"n": 4}
    Timer("torch.empty((n,))", globals=g).timeit(3)
    assert "torch" not in g


def test_pure_python_snippet_does_not_import_torch():
    code = textwrap.dedent("""
        import sys, benchkit
        benchkit.Timer("sum(range(10))").blocked_autorange(min_run_time=0.01)
        print("torch" in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_syntax_error_names_the_snippet_and_position():
    with pytest.raises(SnippetSyntaxError) as info:
        Timer("x = 1\ny = (", setup="pass")
    assert info.value.snippet == "stmt" and info.value.lineno == 2
    assert "stmt has a syntax error at line 2" in str(info.value) and "y = (" in str(info.value)
    with pytest.raises(SnippetSyntaxError, match="setup has a syntax error at line 1"):
        Timer("pass", setup="def f(:")
    assert issubclass(SnippetSyntaxError, BenchkitError)


@pytest.mark.parametrize("method", ["timeit", "blocked_autorange", "adaptive_autorange",
                                    "repeat", "autorange"])
def test_exception_in_stmt_names_the_snippet(method):
    t = Timer("a = 1\nb = [][3]")
    with pytest.raises(SnippetError) as info:
        getattr(t, method)()
    err = info.value
    assert err.snippet == "stmt" and isinstance(err.error, IndexError)
    assert "stmt raised IndexError at line 2 ('b = [][3]')" in str(err)
    assert isinstance(err.__cause__, IndexError)


def test_exception_in_setup_names_the_setup():
    with pytest.raises(SnippetError, match=r"setup raised KeyError at line 1"):
        Timer("pass", setup="{}['missing']").blocked_autorange(min_run_time=0.01)


def test_exception_in_callable_stmt():
    def broken():
        raise ValueError("bad input")
    with pytest.raises(SnippetError, match="stmt raised ValueError.*bad input"):
        Timer(broken).timeit(3)


def test_num_threads_applied_while_measuring_and_restored():
    before = torch.get_num_threads()
    seen = []
    Timer("seen.append(torch.get_num_threads())", globals={"seen": seen},
          num_threads=2).timeit(3)
    assert set(seen) == {2} and torch.get_num_threads() == before
    with pytest.raises(SnippetError):
        Timer("seen.append(torch.get_num_threads()); 1 / 0", globals={"seen": seen},
              num_threads=3).blocked_autorange(min_run_time=0.01)
    assert seen[-1] == 3 and torch.get_num_threads() == before


def test_timeit_semantics_of_repeat_and_autorange():
    t = Timer("pass")
    times = t.repeat(repeat=3, number=1000)
    assert isinstance(times, list) and len(times) == 3 and all(isinstance(x, float) for x in times)
    seen = []
    number, taken = Timer("sum(range(100))").autorange(lambda n, t: seen.append(n))
    assert taken >= 0.2 and number == seen[-1] and seen[:3] == [1, 2, 5]


def test_blocked_autorange_callback_sees_every_block():
    seen = []
    m = Timer("pass").blocked_autorange(callback=lambda n, t: seen.append((n, t)),
                                        min_run_time=0.02)
    assert [t for _, t in seen] == m.raw_times and {n for n, _ in seen} == {m.number_per_run}


def test_adaptive_autorange_respects_max_run_time():
    m = Timer("pass").adaptive_autorange(threshold=0.0, max_run_time=0.05)
    assert sum(m.raw_times) < 0.5


def _python_calls(timer, number):
    calls = []
    loop = timer._loop  # compiled on first use: build it outside the profiled region

    def profiler(frame, event, arg):
        if event in ("call", "c_call"):
            calls.append(1)
    sys.setprofile(profiler)
    try:
        loop.time_block(number)
    finally:
        sys.setprofile(None)
    return len(calls)


def test_string_stmt_costs_no_python_call_per_iteration():
    t = Timer("x = 1", timer=timeit.default_timer)
    assert _python_calls(t, 10) == _python_calls(t, 10000)


def test_unknown_language_is_rejected_clearly():
    with pytest.raises(BenchkitError, match="language='rust' is not a language"):
        Timer("x * y;", language="rust")


class FakeAccelerator:
    def __init__(self, log):
        self.log = log

    def is_available(self):
        return True

    def synchronize(self):
        self.log.append("sync")


class FakeTorch:
    def __init__(self, log):
        self.accelerator = FakeAccelerator(log)


def test_default_timer_synchronises_a_present_accelerator_before_reading():
    log = []

    def now():
        log.append("now")
        return float(len(log))

    clock = make_default_timer(modules={"torch": FakeTorch(log)}, now=now)
    clock()
    clock()
    assert log == ["sync", "now", "sync", "now"]
    plain = make_default_timer(modules={}, now=now)
    log.clear()
    plain()
    assert log == ["now"]


def test_timer_with_fake_device_clock_syncs_around_every_block():
    log = []
    clock = make_default_timer(modules={"torch": FakeTorch(log)})
    m = Timer("pass", timer=clock).blocked_autorange(min_run_time=0.01)
    assert log.count("sync") >= 2 * len(m.raw_times)


def test_real_torch_on_cpu_has_no_synchronizer():
    assert accelerator_synchronizer(torch) is None


@pytest.mark.slow
def test_timer_for_a_torch_snippet_imports_torch_only_when_timing():
    code = textwrap.dedent("""
        import sys, benchkit
        t = benchkit.Timer("x * 2", "x = torch.ones(3)")
        print("torch" in sys.modules)
        t.timeit(5)
        print("torch" in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]
