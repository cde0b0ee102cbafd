"""core.report as a pure function: a Comparison built by hand, formatted to the exact text and
JSON kept in tests/fixtures/report."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from benchkit.core.decisions.bands import Band
from benchkit.core.compare.comparison import Comparison, Row
from benchkit.core.metrics.gates import Gate
from benchkit.core.records.records import Failure, FailureKind, Phase
from benchkit.core.compare.report import comparison_to_json, format_comparison, format_environment
from benchkit.core.decisions.verdicts import Decision, Design, Verdict

FIXTURES = Path(__file__).parent / "fixtures" / "report"
NAN = math.nan


def decision(verdict, ratio, low, high, p, reason, noise=0.02, n=8, design=Design.ROUNDS):
    return Decision(base_median=1e-6, new_median=ratio * 1e-6, ratio=ratio, ci_low=low,
                    ci_high=high, p_value=p, verdict=verdict, reason=reason, n_base=n, n_new=n,
                    noise=noise, detectable=0.05 if not math.isnan(low) else NAN,
                    design=design)


def comparison(design=Design.ROUNDS, alpha=0.01) -> Comparison:
    slower = Gate.parse("slower>5%")
    rows = (
        Row("bench::slow", decision(Verdict.SLOWER, 1.12, 1.08, 1.16, 1e-4, "CI above +2%"),
            Band(1000, 1000, 1000), Band(1100, 1100, 1100), (1, 1), (slower,),
            ("slower>5%: +12.0% (p=0.0001)",)),
        Row("bench::same", decision(Verdict.UNCHANGED, 1.001, 0.99, 1.01, 0.8,
                                    "CI within +-2%"),
            Band(990, 1000, 1010, 4), Band(995, 1001, 1005, 4), (1, 1), (slower,)),
        Row("bench::noisy", decision(Verdict.INCONCLUSIVE, 1.03, 0.95, 1.11, 0.3,
                                     "CI [0.950, 1.110] crosses the +-2% band"), threads=(1, 2),
            note="threads differ"),
        Row("bench::one process", decision(Verdict.FASTER, 0.5, 0.4, 0.6, 1e-3,
                                           "CI below -30% (one process a side)", noise=0.30,
                                           n=1)),
        Row("bench::counts only", None, Band(2000, 2000, 2000), Band(1500, 1500, 1500)),
        Row("bench::added", None, gates=(Gate.parse("instructions>1%"),),
            skipped=("instructions>1%: cannot be evaluated: not in BASE",)),
    )
    failed = Failure("bench::broken", Phase.WALL_TIME, FailureKind.RAISED,
                     "stmt raised ZeroDivisionError\x1b[2J: division by zero\ntraceback...",
                     "/suite/bench_x.py")
    return Comparison(rows, ("bench::gone",), ("bench::added",),
                      ("python: 3.11.7 vs 3.12.1",), 0.87, 0.93, design, alpha,
                      failed_new=(failed,), partial=("NEW stopped early: interrupted (SIGINT) "
                                                      "during instruction counts",))


@pytest.mark.parametrize("name, design, alpha, markdown, width", [
    ("rounds", Design.ROUNDS, 0.01, False, 100),
    ("rounds_wide", Design.ROUNDS, 0.01, False, None),
    ("runs_alpha_5", Design.RUNS, 0.05, False, 100),
    ("rounds_markdown", Design.ROUNDS, 0.01, True, 100),
])
def test_comparison_text_is_exactly_the_fixture(name, design, alpha, markdown, width):
    got = format_comparison(comparison(design, alpha), markdown=markdown, width=width)
    if width is not None and not markdown:
        assert max(len(line) for line in got.splitlines()) <= width
    assert got + "\n" == (FIXTURES / f"{name}.txt").read_text(encoding="utf-8")


def counts_only() -> Comparison:
    """Two `--callgrind --no-wall-time` runs: no wall-time column, summary or test line."""
    rows = (Row("bench::more", None, Band(1000, 1000, 1000), Band(1100, 1100, 1100)),
            Row("bench::same", None, Band(990, 1000, 1010, 4), Band(995, 1001, 1005, 4)),
            Row("bench::fewer", None, Band(2000, 2000, 2000), Band(1500, 1500, 1500),
                gates=(Gate.parse("instructions>0%"),)))
    return Comparison(rows, (), (), (), math.nan, 1.02, Design.RUNS, 0.01)


def test_a_counts_only_comparison_is_exactly_the_fixture():
    got = format_comparison(counts_only())
    assert got + "\n" == (FIXTURES / "counts_only.txt").read_text(encoding="utf-8")


def test_the_confidence_shown_follows_alpha():
    assert "| 99% CI" in format_comparison(comparison(alpha=0.01), markdown=True)
    text = format_comparison(comparison(alpha=0.05))
    assert " 95% CI " in text and "99%" not in text
    assert "the 99.9% CI lies outside" in format_comparison(comparison(alpha=0.001))


def test_comparison_json_is_exactly_the_fixture():
    got = json.dumps(comparison_to_json(comparison()), indent=1)
    assert got + "\n" == (FIXTURES / "rounds.json").read_text(encoding="utf-8")


def test_json_has_no_nan_and_names_the_verdicts():
    data = comparison_to_json(comparison())
    text = json.dumps(data, allow_nan=False)    # NaN would raise here
    assert [r["wall"]["verdict"] if r["wall"] else None for r in data["rows"]] == [
        "slower", "unchanged", "inconclusive", "faster", None, None]
    assert data["summary"]["regressions"] == ["bench::slow"] and "NaN" not in text


def test_environment_lines():
    env = {"python": "3.11.7", "benchkit": "0.1.0", "torch": "2.13.0", "numpy": "2.1.0",
           "cpu_model": "Xeon", "cpu_count": 2, "machine": "x86_64", "os": "Linux",
           "hostname": "box", "timestamp": "2026-11-23T10:00:00+00:00",
           "git": {"commit": "0123456789abcdef", "dirty": True},
           "threads": {"torch_num_threads": 2}}
    assert format_environment(env) == (
        "python 3.11.7, benchkit 0.1.0, torch 2.13.0, numpy 2.1.0\n"
        "Xeon x2 (x86_64), Linux\n"
        "host box, 2026-11-23T10:00:00+00:00\n"
        "git 0123456789ab (dirty)\n"
        "threads: torch_num_threads=2")
    merged = format_environment({"merged": [env, env]})
    assert merged.count("host box") == 2


def test_ab_says_which_rounds_would_settle_its_inconclusive_benchmarks():
    import dataclasses
    from benchkit.cli.ab_command import settle_advice
    comp = comparison()
    assert settle_advice(comp, 8, 30.0) == ""          # no estimate in the fixture's rows
    rows = tuple(dataclasses.replace(r, wall=dataclasses.replace(r.wall, to_settle=40.0))
                 if r.name == "bench::noisy" else r for r in comp.rows)
    assert settle_advice(dataclasses.replace(comp, rows=rows), 8, 30.0) == (
        "to settle 1 inconclusive benchmark at this spread: --rounds 40 (about 20.0 min at "
        "this A/B's pace)")
