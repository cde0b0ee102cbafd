"""Files written by main before the layout change (core/ grouped into packages, the history
CLI moved, exit codes from outcomes) load and give the same tables and steps, character for
character: tests/fixtures/before-regroup, made by its make.py at ba89b74."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_cli import cli

pytestmark = pytest.mark.slow     # five CLI runs on a history database

FIXTURES = Path(__file__).parent / "fixtures" / "before-regroup"
COMMANDS = [
    (("compare", "base.json", "new.json"), "compare.txt"),
    (("compare", "base.json", "new.json", "--json"), "compare.json.txt"),
    (("history", "regressions", "--db", "history.db"), "regressions.txt"),
    (("history", "regressions", "--db", "history.db", "--json"), "regressions.json.txt"),
    (("report", "--markdown", "--db", "history.db"), "report.md.txt"),
]


@pytest.fixture
def copied(tmp_path) -> Path:
    for name in ("base.json", "new.json", "history.db"):
        shutil.copy(FIXTURES / name, tmp_path / name)
    return tmp_path


@pytest.mark.parametrize("command, expected", COMMANDS, ids=[e for _, e in COMMANDS])
def test_files_from_before_the_change_give_the_same_output(copied, command, expected):
    out = cli(*command, cwd=copied, check_code=0).stdout
    assert out == (FIXTURES / expected).read_text()


def test_the_steps_are_the_same_again_from_the_cache(copied):
    command, expected = COMMANDS[3]
    first = cli(*command, cwd=copied, check_code=0).stdout
    again = cli(*command, cwd=copied, check_code=0).stdout
    assert first == again == (FIXTURES / expected).read_text()
