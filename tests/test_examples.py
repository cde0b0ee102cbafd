"""The scripts in examples/ run as a user runs them: a fresh interpreter, from the checkout."""
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import requires_valgrind
from test_cli import cli

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _run(script: str) -> str:
    done = subprocess.run([sys.executable, str(EXAMPLES / script)], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.mark.slow
def test_timer_compare_prints_a_table_with_every_row():
    out = _run("timer_compare.py")
    assert "x * y" in out and "2 threads:" in out
    assert all(f"n={n}" in out for n in (64, 1024, 16384))


@requires_valgrind
@pytest.mark.slow
def test_callgrind_diff_names_the_functions_that_changed():
    out = _run("callgrind_diff.py")
    assert "instructions per run:" in out and "Total:" in out


@pytest.mark.slow
def test_the_example_suite_runs_and_shows_one_table(tmp_path):
    out = cli("run", EXAMPLES / "bench_example.py", "--fast", "-o", tmp_path / "r.json",
              cwd=tmp_path, check_code=0).stdout
    assert out.count("[") >= 1 and "bench_example" in out
    for name in ("bench_join", "sort_reversed", "total n=100"):
        assert name in out, out
    shown = cli("show", tmp_path / "r.json", cwd=tmp_path, check_code=0).stdout
    assert shown.count("Times are in") == 1, shown
    scaled = cli("scaling", tmp_path / "r.json", "--json", cwd=tmp_path, check_code=0).stdout
    assert "bench_example::total" in scaled


@pytest.mark.parametrize("script", sorted(p.name for p in EXAMPLES.glob("*.py")
                                          if not p.name.startswith("bench_")))
def test_every_example_script_has_a_test(script):
    assert script in Path(__file__).read_text()
