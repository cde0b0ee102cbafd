"""The options that several commands and the pytest plugin share are declared once
(benchkit.cli.shared_options): the same type and the same help everywhere."""
from __future__ import annotations

import argparse

import pytest
from _pytest.config.argparsing import Parser

from benchkit.cli import shared_options as shared
from benchkit.cli.main import build_parser
from benchkit.pytest_plugin import pytest_addoption

SHARED = [o for o in vars(shared).values() if isinstance(o, shared.Option)]


def _subparser(parser: argparse.ArgumentParser, *path: str) -> argparse.ArgumentParser:
    for name in path:
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = action.choices[name]
    return parser


def _stem(option: shared.Option) -> str:
    """The help text before any default is filled in (argparse's %% unescaped)."""
    return option.help.split("{default}")[0].split(" (default")[0].replace("%%", "%")


COMMANDS = [("run",), ("ab",), ("compare",), ("history", "run"), ("profile",)]


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_a_command_declares_shared_options_with_the_shared_help_and_type(path):
    parser = _subparser(build_parser(), *path)
    found = 0
    for option in SHARED:
        flag = option.short or f"--{option.flag}"
        action = next((a for a in parser._actions if flag in a.option_strings), None)
        if action is None:
            continue
        found += 1
        assert (action.help % {}).startswith(_stem(option)), (path, flag, action.help)
        assert action.type is option.type, (path, flag)
    assert found, f"{path}: declares no shared option"


def test_the_pytest_plugin_declares_them_under_its_prefix_with_the_same_help():
    parser = Parser(_ispytest=True)
    pytest_addoption(parser)
    options = {o.names()[0]: o for o in parser.getgroup("benchkit").options}
    for option in (shared.FAIL_ON, shared.ALLOW_MISSING, shared.STRICT, shared.CALLGRIND,
                   shared.MEMORY, shared.MIN_RUN_TIME):
        declared = options[f"--benchkit-{option.flag}"]
        assert declared.attrs()["help"].replace("%%", "%").startswith(_stem(option))
        assert declared.attrs().get("type") is option.type


def test_a_default_a_command_sets_is_the_one_its_help_says():
    parser = _subparser(build_parser(), "run")
    action = next(a for a in parser._actions if "--min-run-time" in a.option_strings)
    assert action.default == 0.1 and action.help.endswith("(default 0.1)")
    history_run = _subparser(build_parser(), "history", "run")
    again = next(a for a in history_run._actions if "--min-run-time" in a.option_strings)
    assert again.default == action.default and again.help == action.help


def test_a_bad_value_of_a_shared_option_stops_every_command_the_same_way(capsys):
    for path in (("run",), ("history", "run")):
        with pytest.raises(SystemExit) as stop:
            build_parser().parse_args([*path, "--processes", "0", "x.py"])
        assert stop.value.code == 2
        assert "--processes" in capsys.readouterr().err
