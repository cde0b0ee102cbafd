"""Exit codes are decided in one place: every command ends with an Outcome, and
`exit_code` alone turns outcomes into the code."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from benchkit.cli.exit_codes import ExitCode, Outcome, comparison_outcome, exit_code

PACKAGE = Path(__file__).resolve().parent.parent / "benchkit"


@pytest.mark.parametrize("outcomes, code", [
    ((), ExitCode.OK),
    ((Outcome.OK,), ExitCode.OK),
    ((Outcome.REGRESSION,), ExitCode.FAILED),
    ((Outcome.MEASUREMENT_FAILED,), ExitCode.FAILED),
    ((Outcome.PROBLEMS,), ExitCode.FAILED),
    ((Outcome.BAD_INPUT,), ExitCode.USAGE),
    ((Outcome.NOT_SAVED,), ExitCode.USAGE),
    ((Outcome.REGRESSION, Outcome.NOT_SAVED), ExitCode.USAGE),
    ((Outcome.OK, Outcome.REGRESSION), ExitCode.FAILED),
    ((Outcome.INTERRUPTED,), ExitCode.INTERRUPTED),
    ((Outcome.BROKEN_PIPE,), ExitCode.BROKEN_PIPE),
    ((Outcome.TERMINATED, Outcome.BAD_INPUT), ExitCode.TERMINATED),
])
def test_exit_code_of_outcomes(outcomes, code):
    assert exit_code(*outcomes) is code


def test_every_outcome_has_a_code():
    assert {exit_code(o) for o in Outcome} == set(ExitCode)


class _Compared:
    def __init__(self, regressions=(), failed_base=(), failed_new=()):
        self.regressions, self.failed_base, self.failed_new = regressions, failed_base, failed_new


@pytest.mark.parametrize("compared, allow_missing, outcome", [
    (_Compared(), False, Outcome.OK),
    (_Compared(regressions=["x"]), False, Outcome.REGRESSION),
    (_Compared(regressions=["x"], failed_new=["y"]), True, Outcome.REGRESSION),
    (_Compared(failed_new=["y"]), False, Outcome.MEASUREMENT_FAILED),
    (_Compared(failed_base=["y"]), True, Outcome.OK),
])
def test_comparison_outcome(compared, allow_missing, outcome):
    assert comparison_outcome(compared, allow_missing=allow_missing) is outcome


def exit_code_members_used(source: str) -> list[str]:
    """`ExitCode.X` written anywhere in the source (a code picked outside exit_code)."""
    return sorted(f"ExitCode.{node.attr}" for node in ast.walk(ast.parse(source))
                  if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                  and node.value.id == "ExitCode")


@pytest.mark.parametrize("path", sorted(p for p in PACKAGE.rglob("*.py")
                                        if p.name != "exit_codes.py"),
                         ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_but_exit_codes_picks_a_code(path):
    assert exit_code_members_used(path.read_text(encoding="utf-8")) == []


def test_the_one_place_check_can_fail():
    assert exit_code_members_used("def f():\n    return ExitCode.FAILED\n") == [
        "ExitCode.FAILED"]
