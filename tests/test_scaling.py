"""Complexity fits: exact on synthetic costs, right on real instruction counts, and the
`benchkit scaling` command (table, JSON, gate, plot)."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

import benchkit
from benchkit.core.measure.scaling import (Complexity, ComplexityGate, Point, fit, series_of)
from benchkit.errors import GateError
from conftest import make_measurement, requires_valgrind

SIZES = [64, 256, 1024, 4096, 16384]


@pytest.mark.parametrize("complexity, cost", [
    (Complexity.CONSTANT, lambda n: 700.0), (Complexity.LOG, lambda n: 30 * np.log2(n)),
    (Complexity.LINEAR, lambda n: 12 * n), (Complexity.N_LOG_N, lambda n: 20 * n * np.log2(n)),
    (Complexity.QUADRATIC, lambda n: 3 * n * n), (Complexity.CUBIC, lambda n: n ** 3)])
def test_exact_costs_fit_their_class_with_their_coefficient(complexity, cost):
    result = fit("b", "n", [Point(n, float(cost(n))) for n in SIZES])
    assert result.best.complexity is complexity
    assert result.best.rms == pytest.approx(0, abs=1e-9)
    if complexity is not Complexity.CONSTANT:
        assert result.best.coefficient == pytest.approx(
            {Complexity.LOG: 30, Complexity.LINEAR: 12, Complexity.N_LOG_N: 20,
             Complexity.QUADRATIC: 3, Complexity.CUBIC: 1}[complexity])
    assert result.jumps == ()


def test_a_step_in_cost_per_element_is_marked_between_its_sizes():
    # Linear, but each element costs 1.5x once n passes 1024 (a cache level left).
    points = [Point(n, 10.0 * n * (1.5 if n > 1024 else 1)) for n in SIZES + [65536]]
    (jump,) = fit("b", "n", points).jumps
    assert (jump.after, jump.before) == (1024, 4096) and jump.change == pytest.approx(0.5)
    # Within the points' own spread, no jump is claimed.
    noisy = [Point(p.n, p.cost, p.cost * 0.8, p.cost * 1.2) for p in points]
    assert fit("b", "n", noisy).jumps == ()


def test_too_few_sizes_or_sizes_below_one_are_refused():
    with pytest.raises(ValueError, match="2 sizes of n; a fit needs at least 3"):
        fit("b", "n", [Point(1, 1.0), Point(2, 2.0), Point(2, 2.0)])
    with pytest.raises(ValueError, match="n must be >= 1"):
        fit("b", "n", [Point(0, 1.0), Point(2, 2.0), Point(3, 2.0)])


def test_complexity_gates_and_class_names():
    assert Complexity.parse("o(nlogn)") is Complexity.N_LOG_N
    assert Complexity.parse("O(n^2)") is Complexity.QUADRATIC
    gate = ComplexityGate.parse("complexity > O(n log n)")
    assert str(gate) == "complexity>O(n log n)"
    quadratic = fit("b", "n", [Point(n, float(n * n)) for n in SIZES])
    linear = fit("b", "n", [Point(n, float(n)) for n in SIZES])
    assert gate.breaks(quadratic) and not gate.breaks(linear)
    with pytest.raises(GateError, match="not a complexity class"):
        ComplexityGate.parse("complexity>O(2^n)")


def test_series_group_by_function_and_the_other_parameters():
    items = [(f"s::f[n={n},dtype={d}]", {"n": n, "dtype": d}, Point(0, float(n)))
             for n in (1, 2, 3) for d in ("f32", "f64")]
    items.append(("s::plain", None, Point(0, 1.0)))
    found = {s.benchmark: s for s in series_of(items, None)}
    assert sorted(found) == ["s::f[dtype=f32]", "s::f[dtype=f64]"]
    assert [p.n for p in found["s::f[dtype=f32]"].points] == [1, 2, 3]
    assert series_of(items, "m") == []


@requires_valgrind
@pytest.mark.slow
def test_instruction_counts_fit_the_known_classes():
    from benchkit import Timer, collect_callgrind_many
    snippets = {
        "sum": (Complexity.LINEAR, SIZES, "sum(range(n))", "n = {n}"),
        "sorted": (Complexity.N_LOG_N, SIZES, "sorted(x)",
                   "import random; random.seed(0); x = [random.random() for _ in range({n})]"),
        "double loop": (Complexity.QUADRATIC, [16, 32, 64, 128, 256],
                        "for i in r:\n    for j in r:\n        pass", "r = range({n})"),
        "dict lookup": (Complexity.CONSTANT, SIZES, "d[7]", "d = dict.fromkeys(range({n}))"),
    }
    timers = [Timer(stmt, setup.format(n=n)) for _, sizes, stmt, setup in snippets.values()
              for n in sizes]
    counts = iter(collect_callgrind_many(timers, number=10))
    for name, (expected, sizes, _, _) in snippets.items():
        result = fit(name, "n", [Point(n, next(counts).per_run()) for n in sizes])
        assert result.best.complexity is expected, (name, result.candidates)
        assert result.margin > 1.5 or expected is Complexity.CONSTANT, (name, result.candidates)


def _grid_file(tmp_path, cost):
    items = [make_measurement([cost(n)] * 20, metadata={
        "benchmark": f"bench_s::grow[n={n}]", "params": {"n": n}}, label="bench_s::grow",
        sub_label=f"n={n}") for n in SIZES]
    return benchkit.save(tmp_path / "grid.json", items, environment={"python": "3.11"})


@pytest.mark.slow
def test_scaling_command_prints_fits_json_and_fails_a_gate(tmp_path):
    from test_cli import cli
    path = _grid_file(tmp_path, lambda n: 0.01 * n * n)
    out = cli("scaling", path, "--fail-on", "complexity>O(n log n)", "--plot", "s.png",
              cwd=tmp_path, check_code=1).stdout
    lines = out.splitlines()
    assert lines[0].split()[:4] == ["benchmark", "param", "sizes", "fit"]
    assert lines[2].split()[:4] == ["bench_s::grow", "n", "5", "O(n^2)"]
    assert "complexity>O(n log n)" in lines[2] and (tmp_path / "s.png").stat().st_size > 0
    (entry,) = json.loads(cli("scaling", path, "--json", cwd=tmp_path, check_code=0).stdout)
    assert (entry["benchmark"], entry["param"], entry["fit"]) == ("bench_s::grow", "n", "O(n^2)")
    assert entry["coefficient"] == pytest.approx(0.01e-6) and entry["rms"] < 1e-6
    assert math.isfinite(entry["rms"]) and entry["failures"] == []
    linear = _grid_file(tmp_path, lambda n: 0.5 * n)
    cli("scaling", linear, "--fail-on", "complexity>O(n log n)", cwd=tmp_path, check_code=0)


def test_scaling_says_why_there_is_nothing_to_fit(tmp_path):
    from test_cli import cli
    path = benchkit.save(tmp_path / "plain.json", [make_measurement([1.0] * 5)],
                         environment={"python": "3.11"})
    err = cli("scaling", path, cwd=tmp_path, check_code=2).stderr
    assert "no benchmark in" in err and "@benchmark(params=" in err
    err = cli("scaling", path, "--metric", "instructions", cwd=tmp_path, check_code=2).stderr
    assert "has no instruction counts; run with --callgrind" in err


@pytest.mark.slow
def test_output_cut_short_by_its_reader_exits_quietly(tmp_path):
    import subprocess
    import sys
    items = [make_measurement([float(n)] * 3, metadata={
        "benchmark": f"bench_s::grow{k}[n={n}]", "params": {"n": n}}, label=f"g{k}",
        sub_label=f"n={n}") for k in range(1500) for n in (1, 2, 4)]
    path = benchkit.save(tmp_path / "many.json", items, environment={})
    process = subprocess.Popen([sys.executable, "-m", "benchkit", "scaling", str(path)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.readline()
    process.stdout.close()                     # as `| head -1` does
    assert process.wait(timeout=300) == 141
    assert b"Traceback" not in process.stderr.read()


def _probed(n: int, slow: set[int]) -> "benchkit.Measurement":
    """Linear cost 10 ns * n, measured in 3 processes; processes in `slow` ran while the
    machine was 1.8x slower, which their speed probes (1 ms normally) saw too."""
    from benchkit.core.measure.measurement import Measurement, ProcessSample
    from benchkit.core.measure.task import TaskSpec
    times, processes = [], []
    for k in range(3):
        factor = 1.8 if k in slow else 1.0
        times += [10e-9 * n * factor] * 4
        processes.append(ProcessSample((4,), (1e-3 * factor,)))
    return Measurement(1, times, TaskSpec("x", "pass"), {
        "benchmark": f"bench_s::grow[n={n}]", "params": {"n": n}}, processes=processes)


def test_times_relative_to_the_speed_probe_straighten_a_machine_that_slowed(tmp_path):
    from test_cli import cli
    # The two largest sizes were measured mostly while the machine was slow.
    items = [_probed(n, {0, 1} if n >= 4096 else set()) for n in SIZES]
    path = benchkit.save(tmp_path / "probed.json", items, environment={})
    (relative,) = json.loads(cli("scaling", path, "--json", cwd=tmp_path, check_code=0).stdout)
    assert relative["fit"] == "O(n)" and relative["rms"] < 1e-9
    assert relative["coefficient"] == pytest.approx(10e-9)
    (raw,) = json.loads(cli("scaling", path, "--json", "--raw", cwd=tmp_path,
                            check_code=0).stdout)
    assert raw["rms"] > 0.04            # the raw medians bend where the machine slowed
