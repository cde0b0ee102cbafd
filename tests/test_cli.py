"""The benchkit CLI end to end, as a subprocess."""
import shutil
import subprocess
import sys
import textwrap

import pytest

import benchkit
from conftest import requires_valgrind

SUITE = textwrap.dedent('''
    import os
    from benchkit import Timer, benchmark

    WORK = int(os.environ.get("WORK", "100"))

    @benchmark(fail_on=["slower>10%", "instructions>1%"])
    def work():
        return Timer(f"sum(range({WORK}))", label="work")

    @benchmark(fail_on=["slower>50%", "instructions>1%"])
    def stable():
        return Timer("sum(range(50))", label="stable")

    bench_other = Timer("[1, 2, 3][1]", label="other")
''')


def cli(*args, cwd, env=None, check_code=None):
    full_env = {"PATH": "/usr/bin:/bin", **(env or {})}
    out = subprocess.run([sys.executable, "-m", "benchkit", *map(str, args)], cwd=cwd,
                         capture_output=True, text=True, env=full_env, timeout=600)
    if check_code is not None:
        assert out.returncode == check_code, out.stdout + out.stderr
    return out


@pytest.fixture(scope="module")
def ab_runs(tmp_path_factory):
    """A base run, and a new run in which `work` does 4x the work (4 processes a benchmark:
    a 4x change is clear in far fewer than the default 10)."""
    if shutil.which("valgrind") is None:
        pytest.skip("valgrind is not installed")
    root = tmp_path_factory.mktemp("suite")
    (root / "bench_demo.py").write_text(SUITE)
    for name, work in (("base", "100"), ("new", "400")):
        cli("run", root, "--callgrind", "--processes", "4", "-o", root / f"{name}.json",
            cwd=root, env={"WORK": work}, check_code=0)
    return root


@requires_valgrind
@pytest.mark.slow
def test_run_writes_results_with_names_gates_and_counts(ab_runs):
    results = benchkit.load(ab_runs / "base.json")
    names = [m.metadata["benchmark"] for m in results.measurements]
    assert names == ["bench_demo::work", "bench_demo::stable", "bench_demo::bench_other"]
    assert results.measurements[0].metadata["gates"] == ["slower>10%", "instructions>1%"]
    assert [s.metadata["benchmark"] for s in results.callgrind] == names
    assert results.environment["python"] and results.callgrind[0].per_run() > 0


@requires_valgrind
@pytest.mark.slow
def test_compare_catches_the_slowed_benchmark_and_not_the_unchanged_one(ab_runs):
    out = cli("compare", ab_runs / "base.json", ab_runs / "new.json", cwd=ab_runs,
              check_code=1).stdout
    rows = {line.split()[0]: line for line in out.splitlines()
            if line.startswith("bench_demo::")}
    assert rows["bench_demo::work"].endswith("FAIL")
    broken = out.split("gates broken:")[1].split("\n\n")[0]
    # the counts catch it exactly; the wall time catches it unless the two runs were made
    # while the other test worker loaded the machine so that few chunks ran at full speed
    # (then the verdict is honestly inconclusive, never faster or unchanged)
    assert "bench_demo::work: instructions>1%" in broken
    row = rows["bench_demo::work"]
    # the CI column reads "-" when too few chunks ran at full speed: find the verdict by word
    verdicts = set(row.split()) & {"slower", "faster", "unchanged", "inconclusive"}
    assert len(verdicts) == 1, row
    wall = verdicts.pop()
    assert wall in ("slower", "inconclusive"), row
    assert ("bench_demo::work: slower>10%" in broken) == (wall == "slower")
    assert "FAIL" not in rows["bench_demo::stable"] and "FAIL" not in rows["bench_demo::bench_other"]
    assert "+0.00% same" in rows["bench_demo::stable"]  # identical instruction counts
    assert "REGRESSION: 1 benchmark(s) broke a gate: bench_demo::work" in out
    assert "geometric mean of time ratios" in out and "test: separate runs" in out


@requires_valgrind
@pytest.mark.slow
def test_compare_of_a_run_with_itself_passes_and_markdown(ab_runs):
    out = cli("compare", ab_runs / "base.json", ab_runs / "base.json", "--fail-on", "slower>5%",
              "--markdown", cwd=ab_runs, check_code=0).stdout
    assert out.startswith("| benchmark") and "REGRESSION" not in out


@requires_valgrind
@pytest.mark.slow
def test_diff_shows_the_changed_functions(ab_runs):
    out = cli("diff", ab_runs / "base.json", ab_runs / "new.json", "--benchmark",
              "bench_demo::work", "--top", "5", cwd=ab_runs, check_code=0).stdout
    assert out.startswith("== bench_demo::work: ")
    lines = out.splitlines()
    assert lines[1].split()[:3] == ["delta", "A", "B"]
    assert int(lines[2].split()[0]) > 0  # the biggest change is an increase
    assert "Total delta: +" in out and "functions" in out


@requires_valgrind
@pytest.mark.slow
def test_show_and_merge_and_plot(ab_runs):
    out = cli("show", ab_runs / "base.json", cwd=ab_runs, check_code=0).stdout
    assert "[---" in out and "instructions/run" in out and "python 3." in out
    merged = ab_runs / "merged.json.gz"
    cli("merge", merged, ab_runs / "base.json", ab_runs / "new.json", cwd=ab_runs, check_code=0)
    assert len(benchkit.load(merged).measurements) == 6
    png = ab_runs / "ab.png"
    cli("plot", ab_runs / "base.json", ab_runs / "new.json", "-o", png, cwd=ab_runs,
        check_code=0)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_run_with_keyword_filter_and_thread_override(tmp_path):
    (tmp_path / "bench_demo.py").write_text(SUITE)
    out = cli("run", tmp_path, "-k", "stable or other", "--num-threads", "2", "--min-run-time",
              "0.05", "-o", tmp_path / "r.json", cwd=tmp_path, check_code=0)
    results = benchkit.load(tmp_path / "r.json")
    assert [m.metadata["benchmark"] for m in results.measurements] == [
        "bench_demo::stable", "bench_demo::bench_other"]
    assert {m.num_threads for m in results.measurements} == {2}
    assert "2 threads: " in out.stdout


@pytest.mark.parametrize("args, message", [
    (["compare", "missing.json", "missing.json"], "missing.json: no such file"),
    (["compare", "a.json", "a.json", "--fail-on", "faster>5%"], "is not of the form"),
    (["run", "nowhere"], "nowhere: no such file or directory"),
    (["run", ".", "-k", "zzz"], "no benchmarks in . match -k 'zzz'"),
    (["diff", "a.json", "a.json"], "holds no instruction counts; run with --callgrind"),
    (["show", "corrupt.json"], "is not valid JSON"),
])
@pytest.mark.slow
def test_usage_and_input_errors_exit_2(tmp_path, args, message):
    (tmp_path / "bench_demo.py").write_text(SUITE)
    benchkit.save(tmp_path / "a.json", [], environment={})
    (tmp_path / "corrupt.json").write_text('{"format": "benchkit-res')
    out = cli(*args, cwd=tmp_path, check_code=2)
    assert message in out.stderr


def test_broken_suite_is_reported(tmp_path):
    (tmp_path / "bench_bad.py").write_text("import no_such_module_xyz\n")
    out = cli("run", tmp_path, cwd=tmp_path, check_code=2)
    assert "bench_bad.py: importing the suite failed: ModuleNotFoundError" in out.stderr


def test_shipped_suites_are_discoverable():
    from pathlib import Path
    from benchkit.orchestration.suite import discover
    names = [b.name for b in discover([Path(__file__).parent.parent / "benchmarks"])]
    assert "bench_seed::mul" in names and "bench_seed::mask_indices[3]" in names
    assert any(n.startswith("bench_torch_ops::matmul_threads") for n in names)
    assert "bench_python::bench_sum_range" in names and any("bench_numpy" in n for n in names)


@pytest.mark.slow
def test_version_and_help(tmp_path):
    from importlib.metadata import version
    shown = cli("--version", cwd=tmp_path, check_code=0).stdout
    assert shown.startswith(f"benchkit {version('benchkit-perf')} (Python ")
    helped = cli("--help", cwd=tmp_path, check_code=0).stdout
    assert "Micro-benchmarks for Python" in helped and "Exit status: 0" in helped
    assert "the only place" not in helped
    for command in ("report", "history", "run", "ab", "compare"):
        assert cli(command, "--help", cwd=tmp_path, check_code=0).stdout.startswith("usage:")
