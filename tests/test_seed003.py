"""The seed-003 Timer tutorial runs with only the import changed."""
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import benchkit

# end to end: `make test` runs it, `make test-fast` leaves it out
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent


def test_seed_timer_section_with_import_changed():
    code = textwrap.dedent('''
        import benchkit as benchmark_utils
        from benchkit import Timer, Measurement, Compare

        timer = Timer(
            stmt="x * y",
            setup="""
                x = torch.ones((128,))
                y = torch.ones((128,))
            """,
            num_threads=1,
        )
        m: Measurement = timer.blocked_autorange(min_run_time=0.2)
        print(m)
        g = benchmark_utils.Timer(stmt="x * y", globals={"x": torch.ones((128,)),
                                                         "y": torch.ones((1,))})
        print(g.timeit(100))
        Compare([m, g.blocked_autorange(min_run_time=0.1)]).print()
        print(benchmark_utils.Timer("torch.empty(())").timeit(10).number_per_run)
        print(benchmark_utils.Timer("np.zeros(())", "import numpy as np").timeit(10).median > 0)
    ''')
    out = subprocess.run([sys.executable, "-c", "import torch\n" + code], capture_output=True,
                         text=True, check=True).stdout
    assert "x * y\nsetup:\n  x = torch.ones((128,))\n  y = torch.ones((128,))\n" in out
    # several blocks, or one when a loaded machine stretched the first block over the whole
    # 0.2 s (as torch prints a single measurement)
    assert (("Median: " in out and "runs per measurement, 1 thread" in out)
            or ("  1 measurement, " in out and " runs, 1 thread" in out)), out
    assert "Times are in" in out and out.strip().endswith("10\nTrue")


def test_public_names_mirror_torch_utils_benchmark():
    for name in ("Timer", "Measurement", "TaskSpec", "Language", "Compare"):
        assert hasattr(benchkit, name)


def test_demo_prints_measurements_and_table_and_writes_results(tmp_path):
    target = tmp_path / "tour.json"
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "tour_seed003.py"),
                          str(target)], capture_output=True, text=True, check=True,
                         cwd=tmp_path).stdout
    assert out.count("Median: ") == 3 and "{128} x {1}" in out and "threads: " in out
    assert "# 3. C++ snippets" in out and "x * y;" in out
    loaded = benchkit.load(target)
    assert [m.sub_label for m in loaded.measurements] == ["{128} x {128}", "{128} x {1}", None]
    assert loaded.measurements[2].stmt == "x * y;"
