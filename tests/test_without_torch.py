"""benchkit installed without torch, in a virtualenv of its own (a real `pip install`, so
this test needs the package index or pip's cache): torch is not pulled in, Python and NumPy
suites run with instruction counts, and a torch snippet fails alone, saying what to
install."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

# end to end: `make test` runs it, `make test-fast` leaves it out
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
SUITE = textwrap.dedent('''
    from benchkit import Timer
    bench_sum = Timer("sum(range(100))")
    bench_numpy = Timer("a.sum()", "import numpy as np\\na = np.ones(1000)")
    bench_torch = Timer("torch.ones(3)")
''')


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    env = tmp_path_factory.mktemp("notorch") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(env)], check=True)
    source = tmp_path_factory.mktemp("src") / "benchkit"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".venv", ".git", "results", "tests", "*.egg-info", "__pycache__", ".benchkit",
        ".bench-data"))
    # no compiling at install: the run below compiles the few modules it imports
    done = subprocess.run([str(env / "bin" / "python"), "-m", "pip", "install", "--quiet",
                           "--no-compile", str(source)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"pip install without the index failed: {done.stderr[-400:]}")
    return env


def test_without_torch_python_and_numpy_suites_run_and_torch_snippets_say_what_to_install(
        venv, tmp_path):
    python = str(venv / "bin" / "python")
    assert subprocess.run([python, "-c", "import torch"], capture_output=True).returncode != 0
    (tmp_path / "bench_mixed.py").write_text(SUITE)
    args = [python, "-m", "benchkit", "run", "bench_mixed.py", "--fast", "--min-run-time",
            "0.01", "-o", "r.json"]
    if shutil.which("valgrind"):
        args.append("--callgrind")
    done = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 1, done.stdout + done.stderr        # one benchmark failed
    assert ("FAILED bench_mixed::bench_torch" in done.stdout
            and "pip install torch, or benchkit-perf[torch]" in done.stdout), done.stdout
    saved = json.loads((tmp_path / "r.json").read_text())
    names = {m["metadata"]["benchmark"] for m in saved["measurements"]}
    assert names == {"bench_mixed::bench_sum", "bench_mixed::bench_numpy"}
    if shutil.which("valgrind"):
        assert len(saved["callgrind"]) == 2
    shown = subprocess.run([python, "-m", "benchkit", "show", "r.json"], cwd=tmp_path,
                           capture_output=True, text=True)
    assert shown.returncode == 0 and "bench_sum" in shown.stdout
