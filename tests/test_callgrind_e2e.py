"""collect_callgrind end to end: real valgrind, real child processes."""
import math
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

import benchkit
from benchkit import Timer
from benchkit.errors import CallgrindError, GlobalNotTransferableError, ValgrindNotFoundError
from benchkit.engines.callgrind import workdir
from benchkit.system import machine
from benchkit.core.callgrind import parser
from conftest import requires_valgrind

# end to end: `make test` runs it, `make test-fast` leaves it out
pytestmark = [requires_valgrind, pytest.mark.slow]


def _leftover_dirs():
    return list(Path(tempfile.gettempdir()).glob(f"benchkit-cg-{os.getpid():010d}-*"))


def test_pure_python_snippet_counts_baseline_and_metadata():
    stats = Timer("sum(range(10))", label="sum").collect_callgrind(number=100)
    assert stats.counts() > stats.baseline_exclusive_stats.sum() > 0
    assert stats.per_run() > 100
    assert stats.stats(inclusive=True)[0].count >= stats.stats()[0].count
    controls = stats.metadata["controls"]
    assert controls["PYTHONHASHSEED"] == "0" and controls["instr_atstart"] is False
    assert controls["collector_revision"] == workdir.collector_revision()
    assert controls["site_packages"] == machine.site_packages_digest()
    assert "valgrind-3" in stats.metadata["valgrind"]
    text = repr(stats)
    assert "sum\n" in text and "Instructions:" in text and "100 runs per measurement, 1 thread" in text
    assert not _leftover_dirs()


def test_repeats_and_fresh_processes_give_identical_totals():
    first = Timer("d = {'a': 1}; d['a']").collect_callgrind(number=50, repeats=2)
    assert isinstance(first, tuple) and len(first) == 2
    second = Timer("d = {'a': 1}; d['a']").collect_callgrind(number=50)
    assert first[0].counts() == first[1].counts() == second.counts()
    assert second.stats().as_dict() == first[0].stats().as_dict()


def test_many_snippets_in_one_process_and_globals():
    class_free = {"n": 100, "m": math}
    timers = [Timer("sum(range(n))", globals=class_free), Timer("sum(range(10))"),
              Timer("m.sqrt(2.0)", globals=class_free)]
    small_n, ten, sqrt = benchkit.collect_callgrind_many(timers, number=20)
    assert small_n.per_run() > ten.per_run() > 0 and sqrt.per_run() > 0
    assert small_n.task_spec.stmt == "sum(range(n))"


def test_unpicklable_global_is_named():
    with pytest.raises(GlobalNotTransferableError, match="global 'gen' \\(generator\\)"):
        Timer("next(gen)", globals={"gen": (i for i in range(3))}).collect_callgrind(number=1)
    assert not _leftover_dirs()


class _OnlyHere:
    """Pickles as an import of a module that only this process has."""

    def __reduce__(self):
        import importlib
        return importlib.import_module, ("benchkit_module_only_in_the_parent",)


def test_global_that_cannot_be_rebuilt_in_the_child_is_named():
    with pytest.raises(GlobalNotTransferableError, match="global 'obj' could not be rebuilt"):
        Timer("obj", globals={"obj": _OnlyHere()}).collect_callgrind(number=1)


def test_what_the_running_script_defines_travels_by_value(monkeypatch):
    # A class of the script being run (__main__): the child cannot import it, so it is
    # shipped by value.
    Local = type("Local", (), {"v": 3})
    Local.__module__ = "__main__"
    monkeypatch.setattr(sys.modules["__main__"], "Local", Local, raising=False)
    stats = Timer("obj.v + 1", globals={"obj": Local()}).collect_callgrind(number=5)
    assert stats.per_run() > 0


def test_code_whose_module_cannot_be_imported_travels_by_value():
    # exec'd code (a docs runner, a notebook cell) names a module nobody can import.
    namespace = {"__name__": "benchkit_exec_only"}
    exec("def twice(x):\n    return 2 * x\n", namespace)
    stats = Timer("twice(3)", globals={"twice": namespace["twice"]}).collect_callgrind(number=5)
    assert stats.per_run() > 0


def test_snippet_error_under_callgrind_says_which_snippet():
    with pytest.raises(CallgrindError, match="stmt raised ZeroDivisionError"):
        Timer("1 / 0").collect_callgrind(number=1)
    assert not _leftover_dirs()


def test_timeout_kills_the_child_and_cleans_up():
    with pytest.raises(CallgrindError, match="within timeout=1"):
        Timer("while True: pass").collect_callgrind(number=1, timeout=1)
    assert not _leftover_dirs()


def test_missing_valgrind_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ValgrindNotFoundError, match="apt-get install valgrind"):
        Timer("pass").collect_callgrind()


def test_stale_temp_dirs_of_dead_processes_are_swept():
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    stale = Path(tempfile.gettempdir()) / f"benchkit-cg-{dead}-leftover"
    stale.mkdir(exist_ok=True)
    Timer("pass").collect_callgrind(number=1, collect_baseline=False)
    assert not stale.exists()


def test_retained_out_file_opens_in_callgrind_annotate():
    stats = Timer("sorted([3, 1, 2])").collect_callgrind(number=10, retain_out_file=True)
    path = Path(stats.stmt_callgrind_out)
    try:
        (profile,) = parser.parse(path.read_text(), str(path))
        assert profile.totals[0] == stats.counts()
        if shutil.which("callgrind_annotate"):
            out = subprocess.run(["callgrind_annotate", str(path)], capture_output=True,
                                 text=True, check=True).stdout
            assert f"{stats.counts():,}" in out
    finally:
        shutil.rmtree(path.parent)


def test_cache_simulation_reports_misses_and_cycles():
    stats = Timer("sorted(range(50))").collect_callgrind(number=10, cache_sim=True)
    summary = stats.cache_summary()
    assert summary["instructions"] == stats.counts(subtract_baseline=True)
    assert summary["estimated cycles"] >= summary["instructions"]
    assert "D1mr" in stats.event_totals() and "Cache sim:" in repr(stats)


def test_ctrl_c_kills_the_child_and_removes_temp_files(tmp_path):
    # Ctrl-C once the statement runs under valgrind (a fixed delay landed in start-up
    # phases on a loaded machine; Ctrl-C during start-up is a separate, known window).
    script = textwrap.dedent("""
        import os, signal, threading, tempfile, pathlib, time, benchkit
        # a shell that started us in the background may have left SIGINT ignored
        signal.signal(signal.SIGINT, signal.default_int_handler)

        def interrupt_when_counting():
            mine = f"benchkit-cg-{os.getpid():010d}-"
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                for proc in pathlib.Path("/proc").glob("[0-9]*"):
                    try:
                        if (mine in os.readlink(proc / "cwd")
                                and b"valgrind" in (proc / "cmdline").read_bytes()):
                            time.sleep(1.0)
                            os.kill(os.getpid(), signal.SIGINT)
                            return
                    except OSError:
                        pass
                time.sleep(0.05)
            os.kill(os.getpid(), signal.SIGINT)
        threading.Thread(target=interrupt_when_counting, daemon=True).start()
        try:
            benchkit.Timer("while True: pass").collect_callgrind(number=1)
        except KeyboardInterrupt:
            mine = f"benchkit-cg-{os.getpid():010d}-"
            children = []
            for proc in pathlib.Path("/proc").glob("[0-9]*"):
                try:
                    if mine in os.readlink(proc / "cwd"):
                        children.append(proc)
                except OSError:
                    pass
            left = list(pathlib.Path(tempfile.gettempdir()).glob(f"benchkit-cg-{os.getpid():010d}-*"))
            print("interrupted", len(children), len(left))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120)
    assert out.stdout.strip() == "interrupted 0 0", out.stderr


def test_torch_tensors_modules_and_scripted_functions_travel():
    torch = pytest.importorskip("torch")

    @torch.jit.script
    def scaled(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    g = {"x": torch.ones(8), "lin": torch.nn.Linear(8, 2), "f": scaled}
    lin, fn = benchkit.collect_callgrind_many(
        [Timer("lin(x)", globals=g), Timer("f(x)", globals=g)], number=10)
    assert lin.per_run() > 0 and fn.per_run() > 0
    assert any("libtorch" in name for _, name in lin.stats())


def test_indented_multiline_snippets_are_collected():
    stats = Timer(stmt="""
        total = 0
        for i in items:
            total += i
        """, setup="""
        items = list(range(5))
        """).collect_callgrind(number=5)
    assert stats.per_run() > 0


def test_callers_import_path_does_not_change_the_counts(monkeypatch, tmp_path):
    before = Timer("[str(i) for i in range(20)]").collect_callgrind(number=20).counts()
    for i in range(3):
        extra = tmp_path / ("x" * (i + 1))
        extra.mkdir()
        monkeypatch.syspath_prepend(str(extra))
    after = Timer("[str(i) for i in range(20)]").collect_callgrind(number=20)
    assert after.counts() == before
    assert "GLIBC_TUNABLES" in after.metadata["controls"]


def test_global_from_a_module_only_the_caller_can_import(monkeypatch, tmp_path):
    (tmp_path / "caller_only_mod.py").write_text(
        "class Box:\n    def __init__(self, v):\n        self.v = v\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import caller_only_mod
    stats = Timer("box.v + 1", globals={"box": caller_only_mod.Box(3)}).collect_callgrind(number=5)
    assert stats.per_run() > 0


def test_a_checkout_on_the_path_holding_the_venv_adds_no_import_path(monkeypatch, tmp_path):
    # `python -m pytest` in a checkout puts the checkout first, and a .venv inside it holds
    # torch: torch still comes from the default site-packages, so nothing is added.
    import torch
    from benchkit.engines.callgrind.workdir import extra_sys_path
    site = Path(torch.__file__).resolve().parents[1]
    monkeypatch.syspath_prepend(str(site.parents[2]))
    (tmp_path / "caller_only_mod2.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert extra_sys_path(tmp_path, {"torch", "caller_only_mod2"}) == [str(tmp_path)]
