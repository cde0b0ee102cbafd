"""benchkit's own scripts (benchmarks/, examples/) run rarely and by hand: every name they
import from benchkit must exist, so a rename inside the package cannot leave one broken
until someone next measures with it."""
from __future__ import annotations

import ast
import json
import importlib
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted(p for folder in ("benchmarks", "examples") if (ROOT / folder).is_dir()
                 for p in (ROOT / folder).rglob("*.py"))


def _submodule(module, name: str) -> bool:
    """Whether package `module` has a module `name` (`from benchkit.core import metrics`)."""
    return hasattr(module, "__path__") and importlib.util.find_spec(
        f"{module.__name__}.{name}") is not None


def _missing(path: Path) -> list[str]:
    """`module.name` of every `from benchkit... import name` in `path` that does not exist."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("benchkit"):
            module = importlib.import_module(node.module)
            out += [f"{node.module}.{alias.name}" for alias in node.names
                    if not hasattr(module, alias.name) and not _submodule(module, alias.name)]
    return out


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_benchkit_name_a_script_imports_exists(path):
    assert _missing(path) == []


def test_the_script_check_can_fail(tmp_path):
    script = tmp_path / "old.py"
    script.write_text("from benchkit.core.history.series import Commit, HistoryMetric\n")
    assert _missing(script) == ["benchkit.core.history.series.HistoryMetric"]


def _script(name: str):
    """benchmarks/`name`.py, loaded as a module."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    return script


def test_detection_scoring_counts_a_span_that_misses_the_step_as_false(monkeypatch):
    """perf_history_detection.py's score: a step at the injected commit (within the
    tolerance) is found; a span holding it is neither found nor false; a span elsewhere is
    a false step, as a step at the wrong commit is."""
    import numpy as np
    script = _script("perf_history_detection")

    def injected(values):            # the first commit of the injected step, if any
        ratios = values[1:] / values[:-1]
        return int(np.argmax(ratios)) + 1 if ratios.max() > 1.01 else None

    def right(values):
        at = injected(values)
        return ([(at, 0.1)], []) if at is not None else ([], [])

    def spans(values):
        at = injected(values)
        return ([], [] if at is None else [(at - 3, at + 1, 0.1), (1, 3, 0.1)])
    monkeypatch.setattr(script, "DETECTORS", {"right": right, "spans": spans})
    flat = [("s", np.ones(40))]
    scored = script.score([], flat, 5, 6, 2, 6, seed=1)
    assert scored["recall"]["right"] == {"5%": 1.0, "10%": 1.0, "25%": 1.0, "50%": 1.0}
    assert scored["recall"]["spans"] == {"5%": 0.0, "10%": 0.0, "25%": 0.0, "50%": 0.0}
    # 21 runs (one null, 20 injected): the right one claims nothing false; the span at
    # 1..3 is false in each of the 20 runs with a step (the other holds it)
    assert scored["false_steps_per_series"] == {"right": 0.0, "spans": 20 / 21}
    assert scored["benchkit_unplaced"]["holding_the_injected_commit"] == 20 / 21
    # the span at 1..3 lies within --margin (6) of the first commit: a false step at an end
    assert scored["false_steps_at_ends"] == {"right": 0, "spans": 20}
    # --every-position: each series at each commit at least --margin (6) from either end,
    # weighted so that each series counts alike and a size's weights add up to --trials
    two = [("s", np.ones(40)), ("t", np.ones(20))]
    cases = list(script.injected_cases(two, 5, 6, None, every_position=True))
    assert len(cases) == 4 * (29 + 9)
    assert {at for size, label, _, at, _ in cases if label == "t"} == set(range(6, 15))
    for size in script.SIZES:
        weights = {label: sum(w for s, lab, _, _, w in cases if s == size and lab == label)
                   for label in ("s", "t")}
        assert weights == {"s": pytest.approx(2.5), "t": pytest.approx(2.5)}
    every = script.score([], flat, 5, 6, 2, 6, seed=1, every_position=True)
    assert every["recall"]["right"]["10%"] == pytest.approx(1.0)
    assert every["false_steps_per_series"]["spans"] == pytest.approx(20 / 21)
    assert every["false_cases"] == {"right": 0, "spans": 4 * 29}
    assert every["recall_95"] is None and scored["false_cases"]["spans"] <= 20
    # asv's regressions in the original series beside benchkit's steps: at the commit
    # (within the tolerance), in a span holding it, or missed; and benchkit's own extra
    steps = [{"series": "a", "tool": "asv", "index": 10, "change": 0.2, "points": 30},
             {"series": "a", "tool": "benchkit", "index": 12, "change": 0.19},
             {"series": "b", "tool": "asv", "index": 5, "change": 0.1, "points": 30},
             {"series": "b", "tool": "benchkit", "index": None, "span": [7, 9], "change": 0.1},
             {"series": "c", "tool": "asv", "index": 20, "change": 0.5, "points": 30},
             {"series": "c", "tool": "benchkit", "index": 20, "change": -0.3},
             {"series": "d", "tool": "benchkit", "index": 3, "change": 0.4}]
    agreed = script.agreement(steps, 2)
    assert (agreed["asv_regressions"], agreed["at_the_commit"], agreed["in_a_span"]) == (3, 1, 1)
    assert [m["series"] for m in agreed["missed"]] == ["c"]      # faster is not it
    assert agreed["benchkit_only"] == 1
    assert script.agreement(steps, 1)["in_a_span"] == 0         # 5 is 2 before the span
    # a series read beside its history's others as `regressions` reads it: the others built
    # once and kept, the series asked about made anew each time (its injected values)
    rng = np.random.default_rng(3)
    slow = rng.random(60) < 0.3
    group = [(f"m/e/b{k}", np.exp(rng.normal(0, 0.01, 60)) * np.where(slow, 1.3, 1.0))
             for k in range(8)]
    from benchkit.core.history.machine.runners import on_one_kind
    from benchkit.core.history.series import Commit, Point, Series
    fresh = [Series(name, "time", "m", tuple(Point(Commit(str(i), "", i), float(x), float(x),
                                                   float(x), 1, 1) for i, x in enumerate(v)),
                    "e") for name, v in group]
    expected = [p.value for p in on_one_kind(fresh)[0][2].points]
    assert list(script.on_one_kind_values(group, "m/e/b2", group[2][1])) == expected
    assert expected != list(group[2][1])               # the slower kind's values taken down
    doubled = script.on_one_kind_values(group, "m/e/b2", group[2][1] * 2)
    assert list(script.on_one_kind_values(group, "m/e/b2", group[2][1])) == expected
    assert list(doubled) != expected
    # --window 40 on a series of 100 commits: pieces of 40, one starting every 10 commits
    pieces = script.windows([("s", np.arange(100.0))], 40)
    assert [label for label, _ in pieces] == [f"s@{k}" for k in range(0, 61, 10)]
    assert all(len(v) == 40 and v[0] == int(label[2:]) for label, v in pieces)
    assert script.windows([("s", np.arange(30.0))], 40) == []
    # --join: the series every history holds, end to end in the order given
    one, two = [("a", np.ones(3)), ("b", np.zeros(2))], [("b", np.full(2, 5.0))]
    assert [(label, list(v)) for label, v in script.joined([one, two])] == [
        ("b", [0.0, 0.0, 5.0, 5.0])]
    # --join-no-steps: each history's part divided by its own median, nothing else
    quiet, busy = [("b", np.array([1.0, 2.0, 3.0]))], [("b", np.array([4.0, 4.0, 8.0]))]
    assert [list(v) for _, v in script.joined([script.by_own_median(quiet),
                                               script.by_own_median(busy)])] == [
        [0.5, 1.0, 1.5, 1.0, 1.0, 2.0]]
    # --seed 1 2: a run per seed, and their means per set
    runs = [dict(scored, directory="d", seed=seed) for seed in (1, 2)]
    runs[1] = dict(runs[1], false_steps_per_series={"right": 0.5, "spans": 0.0})
    means = script.over_seeds(runs)["d"]
    assert means["spans"]["false_steps_per_series"] == 10 / 21
    assert means["right"]["false_steps_per_series"] == 0.25
    assert means["right"]["recall"]["50%"] == 1.0 and means["right"]["seeds"] == [1, 2]
    # --runners 1.2 0.3: the same commits of every series slower, 1.2 times, about 30 % of them
    pooled = script.on_runners([("a", np.ones(400)), ("b", np.full(300, 2.0))], 1.2, 0.3, 1)
    slow_a, slow_b = pooled[0][1] > 1, pooled[1][1] > 2
    assert set(np.round(pooled[0][1], 9)) == {1.0, 1.2}
    assert 0.25 < slow_a.mean() < 0.35 and list(slow_b) == list(slow_a[:300])
    assert script.on_runners([("a", np.ones(50))], 1.2, 0.0, 1)[0][1].tolist() == [1.0] * 50


def test_detection_scoring_reads_a_pool_on_one_kind_for_the_machines_rules_too():
    """perf_history_detection.py's benchkit, in a pool of two kinds of runner: the machine's
    rules read the history with the slower kind taken down, as `history regressions` does;
    read as the runs ran, the slower kind's runs were a stretch the machine ran slower, and
    a step put in at one of them became a span to the stretch's end."""
    import numpy as np
    script = _script("perf_history_detection")
    rng = np.random.default_rng(3)
    slow = rng.random(60) < 0.3
    group = [(f"m/e/b{k}", np.exp(rng.normal(0, 0.01, 60)) * np.where(slow, 1.3, 1.0))
             for k in range(8)]
    assert slow[19] and slow[20]            # a stretch of the slower kind's runs
    values = group[2][1].copy()
    values[19:] *= 1.5
    placed, spans = script.benchkit_report(*script.read_for("benchkit", group, "m/e/b2",
                                                            values, None))
    assert ([i for i, _ in placed], spans) == ([19], [])


def test_runner_pool_slows_time_values_and_matches_steps_within_the_tolerance():
    script = _script("perf_history_runner_pool")
    document = {"result_columns": ["result", "params", "stats_q_25", "version"],
                "results": {"m.time_a": [[1.0, None], [["1", "2"]], [0.5, 2], "v"],
                            "m.track_b": [[3.0], [], [3.0], "v"]}}
    slowed = script.slowed(document, 2.0)["results"]
    assert slowed["m.time_a"] == [[2.0, None], [["1", "2"]], [1.0, 4.0], "v"]
    assert slowed["m.track_b"] == [[3.0], [], [3.0], "v"]      # not a time: unchanged
    order = {sha: i for i, sha in enumerate("abcdefgh")}
    truth = [("x", "e", list("abcdefgh"))]
    kind = list("bdfh")                      # a kind's series: every other commit
    assert script.scored(truth, [("x", "f", kind)], order, 0) == {
        "steps": 1, "kept": 1, "new": 0}     # e lies between d and f: f is its point
    assert script.scored(truth, [("x", "h", kind)], order, 0)["kept"] == 0
    assert script.scored(truth, [("x", "h", kind)], order, 1) == {
        "steps": 1, "kept": 1, "new": 0}
    assert script.scored(truth, [("y", "f", kind)], order, 1) == {
        "steps": 1, "kept": 0, "new": 1}


@pytest.mark.slow
def test_scale_measures_a_projects_own_results_directory_as_it_is(tmp_path):
    """perf_history_scale.py --asv-results: benchkit's steps and `asv publish` on a
    directory as a project keeps it, commit order from a bare clone of its repository, and
    nothing written into the directory."""
    import hashlib
    import shutil
    if shutil.which("asv", path=str(Path(sys.executable).parent)) is None:
        pytest.skip("asv is not installed (the [test] extra has it)")
    script = _script("perf_history_scale")
    recording = ROOT / "tests" / "fixtures" / "asv-real" / "scipy-releases"
    results, repo, files = script.build(recording, tmp_path / "project", 2, None,
                                        script.ONE_POINT)
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(bare)], check=True)

    def digest():
        return hashlib.sha256(b"".join(p.read_bytes() for p in sorted(results.rglob("*"))
                                       if p.is_file())).hexdigest()
    before, output = digest(), tmp_path / "scale.json"
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "perf_history_scale.py"),
                           "--asv-results", str(results), "--repo", str(bare), "--asv-conf",
                           str(repo / "asv.conf.json"), "--rounds", "1", "-o", str(output)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    doc = json.loads(output.read_text())
    assert (doc["files"], doc["machines"], doc["asv_results"]) == (files, 2, str(results))
    assert set(doc["seconds"]) == {"benchkit import-asv", "benchkit regressions",
                                   "benchkit report", "benchkit import-asv again",
                                   "asv publish"}
    assert doc["benchkit_site_bytes"] > 0 and doc["asv_site_bytes"] > 0
    assert digest() == before
    refused = subprocess.run([sys.executable, str(ROOT / "benchmarks" /
                                                  "perf_history_scale.py"),
                              "--asv-results", str(results), "--repo", str(tmp_path),
                              "--machines", "3"], capture_output=True, text=True)
    assert refused.returncode == 2 and "--machines scale out a RECORDING" in refused.stderr


def test_change_points_become_steps_between_the_medians_of_their_pieces():
    import numpy as np
    script = _script("perf_history_detection")
    values = np.array([1.0, 1.0, 1.2, 2.0, 2.0, 2.2, 1.0, 1.0])
    assert script.change_point_steps(values, [6, 3]) == [(3, 1.0), (6, -0.5)]
    assert script.change_point_steps(values, []) == []


def test_e_divisive_without_its_library_stops_the_run_saying_which_interpreter():
    """The worker runs in an interpreter of its own; this one has no
    signal-processing-algorithms, so its worker exits at once and the run says so."""
    import numpy as np
    script = _script("perf_history_detection")
    detector = script.EDivisive(sys.executable, 0.05)
    with pytest.raises(SystemExit) as stopped:
        detector(np.ones(20))
    assert f"--e-divisive: {sys.executable} stopped" in str(stopped.value)
    assert "signal-processing-algorithms" in str(stopped.value)


@pytest.mark.slow
def test_e_divisive_in_its_own_environment_finds_a_clear_step(tmp_path):
    """The real library in a virtualenv of its own (it pins numpy below 2), as
    benchmarks/e_divisive_worker.py says to make one: a clear step at 30 of 60 is a change
    point there, the same on a second run (its permutations are seeded)."""
    import numpy as np
    env = tmp_path / "edivisive"
    subprocess.run([sys.executable, "-m", "venv", str(env)], check=True)
    installed = subprocess.run([str(env / "bin" / "pip"), "install", "--quiet",
                                "signal-processing-algorithms==2.1.6"],
                               capture_output=True, text=True, timeout=600)
    if installed.returncode:
        pytest.skip("signal-processing-algorithms could not be installed from the package "
                    "index: " + installed.stderr.strip()[-300:])
    script = _script("perf_history_detection")
    values = np.exp(np.random.default_rng(1).normal(0, 0.02, 60))
    values[30:] *= 1.5
    first = script.EDivisive(str(env / "bin" / "python"), 0.05)
    placed, spans = first(values)
    assert spans == [] and [i for i, change in placed if change > 0.3] == [30]
    assert script.EDivisive(str(env / "bin" / "python"), 0.05)(values) == (placed, [])


def test_placement_calibration_runs_and_writes_its_three_measurements(tmp_path):
    out = tmp_path / "placement.json"
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "perf_history_placement.py"),
                          "--draws", "200", "--heavy-draws", "4", "-o", str(out)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    result = json.loads(out.read_text())
    one = result["calibration"]["1 noises"]
    assert one["placed"] + one["spans"] == 200
    # placed where 60 % of the likelihood is near the best cut: near at least that often
    assert one["placed_near"] >= result["settings"]["placed_mass"]
    near = result["least_squares_against_medians"]["1 noises"]
    assert near["least_squares"] > near["medians"]
    assert set(result["heavy_tails"]) == {"normal", "student_t3"}


def test_autocorrelated_noise_carries_phi_of_each_commit_to_the_next():
    import numpy as np
    script = _script("perf_history_detection")
    drawn = script.autocorrelated(20, 400, 0.03, 0.6)
    logs = np.log(np.array([values for _, values in drawn]))
    lag1 = np.mean([np.corrcoef(row[:-1], row[1:])[0, 1] for row in logs])
    assert 0.55 < lag1 < 0.65
    # the fresh noise is NOISE: the stationary spread is NOISE / sqrt(1 - PHI^2)
    assert abs(np.std(logs) - 0.03 / np.sqrt(1 - 0.36)) < 0.004
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(
        drawn, script.autocorrelated(20, 400, 0.03, 0.6)))        # seeded
    independent = script.autocorrelated(20, 400, 0.03, 0.0)
    assert abs(np.mean([np.corrcoef(np.log(v)[:-1], np.log(v)[1:])[0, 1]
                        for _, v in independent])) < 0.05
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "perf_history_detection.py"),
                          "--autocorrelated", "2", "50", "0.03", "1.5"],
                         capture_output=True, text=True)
    assert out.returncode == 2 and "--autocorrelated 2 50 0.03 1.5" in out.stderr
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "perf_history_detection.py"),
                          "--join-no-steps", "--autocorrelated", "2", "50", "0.03", "0.5"],
                         capture_output=True, text=True)
    assert out.returncode == 2 and "--join-no-steps" in out.stderr and "give --join" in out.stderr


def test_first_quartiles_follow_a_series_into_pieces_and_joins():
    """perf_history_detection.py gives benchkit each commit's first quartile as a ratio
    to its value (a step scales both): a piece `label@start` takes its slice, a joined
    series the histories' end to end, and asv reads them only with --asv-first-quartile."""
    import numpy as np
    script = _script("perf_history_detection")
    ratios = {"m/e/b": np.array([0.9, 0.8, 0.7, 0.6, 0.5])}
    assert script.quartiles_of(ratios, "m/e/b@2", 3).tolist() == [0.7, 0.6, 0.5]
    assert script.quartiles_of(ratios, "m/e/b", 5).tolist() == [0.9, 0.8, 0.7, 0.6, 0.5]
    assert script.quartiles_of(ratios, "m/e/other", 5) is None
    own = {**ratios, "m/e/b@1": np.array([0.1, 0.2])}      # a piece's own is taken first
    assert script.quartiles_of(own, "m/e/b@1", 2).tolist() == [0.1, 0.2]
    joined = script.joined_quartiles([{"a": np.array([0.9]), "b": np.array([0.8])},
                                      {"a": np.array([0.7, 0.6])}], ["a", "b"])
    assert list(joined) == ["a"] and joined["a"].tolist() == [0.9, 0.7, 0.6]
    values = np.array([2.0, 4.0, 5.0, 5.0, 10.0])
    assert script.read_by("asv", values, ratios["m/e/b"]) is values
    script.ASV_AT_FIRST_QUARTILE[0] = True
    try:
        assert script.read_by("asv", values, ratios["m/e/b"]).tolist() == [1.8, 3.2, 3.5, 3.0,
                                                                            5.0]
        assert script.read_by("asv", values, None) is values
    finally:
        script.ASV_AT_FIRST_QUARTILE[0] = False


def test_benchkit_is_scored_on_the_first_quartile_where_it_is_quieter():
    """The real busy-neighbour series of tests/test_history_first_quartile.py: a +25 % step
    at commit 120 that the medians hide, found through benchkit_report's quartiles."""
    import numpy as np
    script = _script("perf_history_detection")
    data = json.loads((ROOT / "tests" / "fixtures" / "history" / "busy-vm-re-findall.json")
                      .read_text(encoding="utf-8"))["series"]["busy/time_re_findall"]
    values, lows = np.array(data["median"]), np.array(data["first_quartile"])
    values[120:] *= 1.25
    lows[120:] *= 1.25
    placed, _ = script.benchkit_report(values, lows / values)
    assert [i for i, change in placed if change > 0 and abs(i - 120) <= 2]
    placed, _ = script.benchkit_report(values)
    assert not [i for i, change in placed if change > 0 and abs(i - 120) <= 2]


# numpy's bench_core.PackBits.time_packbits_axis1[dtype=bool] on its 39 releases from 1.24.0
# (benchmarks/record_release_history.py on this VM; seconds, 4 digits): medians, first
# quartiles. Both figures step down by 22 % at release 33; both have slow spells.
PACKBITS_MEDIANS = [
    1.704e-05, 1.724e-05, 1.698e-05, 1.818e-05, 1.769e-05, 2.581e-05, 1.714e-05, 1.727e-05,
    1.665e-05, 1.679e-05, 1.699e-05, 1.73e-05, 2.469e-05, 2.537e-05, 2.506e-05, 2.374e-05,
    2.081e-05, 2.212e-05, 1.722e-05, 1.685e-05, 1.752e-05, 2.51e-05, 1.709e-05, 1.723e-05,
    3.296e-05, 1.897e-05, 2.207e-05, 1.735e-05, 1.714e-05, 1.721e-05, 1.722e-05, 2.925e-05,
    1.718e-05, 1.372e-05, 2.533e-05, 1.334e-05, 1.324e-05, 1.33e-05, 1.337e-05]
PACKBITS_FIRST_QUARTILES = [
    1.689e-05, 1.694e-05, 1.678e-05, 1.751e-05, 1.739e-05, 2.136e-05, 1.697e-05, 1.699e-05,
    1.661e-05, 1.668e-05, 1.688e-05, 1.673e-05, 2.1e-05, 2.146e-05, 2.489e-05, 2.121e-05,
    2.067e-05, 1.765e-05, 1.668e-05, 1.652e-05, 1.687e-05, 1.705e-05, 1.688e-05, 1.691e-05,
    1.695e-05, 1.725e-05, 1.698e-05, 1.699e-05, 1.705e-05, 1.699e-05, 1.703e-05, 1.709e-05,
    1.711e-05, 1.347e-05, 1.327e-05, 1.324e-05, 1.322e-05, 1.326e-05, 1.329e-05]


def test_a_series_real_steps_come_out_of_both_figures_at_the_same_commits():
    """flatten_together finds the real levels on a series' medians and first quartiles at
    once and divides both at the same commits, so asv (reading the medians) and benchkit
    (reading the first quartiles here) are scored against the same levels. Flattened
    apart, the first quartiles of releases 6-11 were put 11 % below the rest and the
    medians' not: a step only benchkit was shown. A figure given twice (astropy's format-1
    results store a commit's value as its first quartile) is flattened as if given once."""
    import numpy as np
    script = _script("perf_history_detection")
    medians, lows = np.array(PACKBITS_MEDIANS), np.array(PACKBITS_FIRST_QUARTILES)
    flat_medians, flat_lows = script.flatten_together([medians, lows], keep_spells=6)
    # each figure is divided piece by piece: where the divisor changes, a new piece begins
    pieces = [np.flatnonzero(np.abs(np.diff(np.log(raw / flat))) > 1e-12) + 1
              for raw, flat in ((medians, flat_medians), (lows, flat_lows))]
    assert pieces[0].tolist() == pieces[1].tolist() and len(pieces[0]) >= 1
    # the real step at release 33 is out of both
    for flat in (flat_medians, flat_lows):
        assert np.all(np.abs(flat[35:] / np.median(flat) - 1) < 0.01)
    # releases 6-11 sit alike in both figures (11 % apart when flattened apart)
    assert np.all(np.abs(np.log(flat_lows[6:12] / np.median(flat_lows))
                         - np.log(flat_medians[6:12] / np.median(flat_medians))) < 0.03)
    once = script.flatten(medians, 6)
    assert [f.tolist() for f in script.flatten_together([medians, medians], 6)] == [
        once.tolist(), once.tolist()]


def test_a_two_speed_series_is_flattened_at_its_slower_speed():
    """This VM's noise histories run a snippet at 1x and, one commit in three to five, at
    0.55x; ruptures cuts such a series where the share of faster commits changes, and each
    piece divided by its own median put a piece where most commits ran faster a whole gap
    above the rest (the joined `time_re_findall`, real noise, code unchanged: its slower
    speed at +0.57 log in commits 425-475 and +0.10 in 525-575, steps the flattening made
    that both tools were then scored on). Each piece is divided by the median of its
    commits at the slower speed now; a series with one speed, or a real step (not
    interleaved), has no second speed and is flattened by the medians as before."""
    import numpy as np
    script = _script("perf_history_detection")
    data = json.loads((ROOT / "tests" / "fixtures" / "history" /
                       "sixth-vm-joined-re-findall.json").read_text())["series"]
    medians, lows = (np.array(data["joined/time_re_findall"][k])
                     for k in ("median", "first_quartile"))
    slower = script.slower_speed(np.log(medians))
    assert slower is not None and 0.25 < 1 - slower.mean() < 0.3
    flat = np.log(script.flatten_together([medians, lows], keep_spells=6)[0])
    level = np.median(flat[slower])
    blocks = [np.median(flat[a:a + 25][slower[a:a + 25]]) - level for a in range(0, 600, 25)]
    assert max(map(abs, blocks)) < 0.06
    rng = np.random.default_rng(3)
    assert script.slower_speed(rng.normal(0, 0.02, 120)) is None
    step = rng.normal(0, 0.02, 120) - 0.6 * (np.arange(120) < 40)
    assert script.slower_speed(step) is None
    scattered = rng.normal(0, 0.02, 120) - 0.6 * (rng.random(120) < 0.3)
    assert script.slower_speed(scattered) is not None


def test_release_recording_orders_pre_releases_between_the_finals_only_with_pre():
    """record_release_history.py --pre takes a project's release candidates and development
    snapshots as commits between its releases, in PEP 440 order (a dev snapshot before the
    candidates, these before the final; 0.20 is 0.20.0); without it only finals; a
    version it cannot order is refused, not put anywhere."""
    script = _script("record_release_history")
    wheel = lambda version: [{"filename": f"pkg-{version}-py3-none-any.whl",  # noqa: E731
                              "upload_time_iso_8601": "2024-01-01T00:00:00Z",
                              "packagetype": "bdist_wheel", "url": "x"}]
    versions = ["0.21.0", "0.20.0rc3", "0.20.1", "0.20.0.dev0", "0.20.0rc10", "0.20",
                "0.21.0b1", "0.21.0a2", "0.19.3"]
    files = {v: wheel(v) for v in versions}
    files["0.22.0"] = []                      # no wheel: not installable here
    assert [v for v, _, _ in script.releases(files, None)] == ["0.19.3", "0.20", "0.20.1",
                                                                 "0.21.0"]
    assert [v for v, _, _ in script.releases(files, "0.19.4", pre=True)] == [
        "0.20.0.dev0", "0.20.0rc3", "0.20.0rc10", "0.20", "0.20.1", "0.21.0a2", "0.21.0b1",
        "0.21.0"]
    assert script.version_key("0.20") == script.version_key("0.20.0")
    with pytest.raises(ValueError, match="0.20.post1"):
        script.version_key("0.20.post1")


@pytest.mark.slow
def test_nightly_scoring_judges_each_night_as_the_history_stood(tmp_path):
    """perf_history_nightly.py on the seventh VM's real busy night (written as asv results):
    the nights before it and through it, both tools side by side, and what the rule for a
    slow spell of the whole machine takes off."""
    from seventh_vm_busy import figures as busy_figures, write_as_asv_results
    write_as_asv_results(tmp_path / "results", busy_figures(158))
    output = tmp_path / "nightly.json"
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "perf_history_nightly.py"),
                           str(tmp_path / "results"), "--first", "140", "-o", str(output)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    (figures,) = json.loads(output.read_text())["histories"].values()
    assert (figures["series"], figures["nights"], figures["series_nights"]) == (8, 19, 152)
    assert figures["nights_with_a_machine_spell"] == 6
    assert figures["alerts"] == {"asv": 10, "benchkit": 0, "benchkit_without_machine_spell": 13,
                                 "benchkit_without_machine_share": 0}
    assert figures["nights_with_an_alert"] == {"asv": 10, "benchkit": 0,
                                               "benchkit_without_machine_spell": 3,
                                               "benchkit_without_machine_share": 0}
