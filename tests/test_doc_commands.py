"""Every `benchkit ...` command shown in the README and the docs' shell blocks parses with
the real command line (options renamed or removed would leave the docs lying). The python
blocks run as tests of their own (conftest.py)."""
import shlex
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from benchkit.cli.main import build_parser

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def shell_commands(page: Path) -> list[str]:
    """The `benchkit` command lines of a page's unlabeled, sh, bash and console fences,
    continuation lines joined, comments and prompts dropped."""
    commands = []
    for token in MarkdownIt().parse(page.read_text()):
        if token.type != "fence" or token.info.strip() not in ("", "sh", "bash", "console"):
            continue
        for line in token.content.replace("\\\n", " ").splitlines():
            line = line.strip().removeprefix("$ ")
            if line.startswith("benchkit "):
                commands.append(line)
    return commands


CASES = [(page.name, command) for page in PAGES for command in shell_commands(page)]


def test_the_docs_show_commands():
    assert len(CASES) >= 10, CASES


@pytest.mark.parametrize("page,command", CASES, ids=[f"{p}:{c[:40]}" for p, c in CASES])
def test_a_documented_command_parses(page, command):
    argv = shlex.split(command, comments=True)[1:]
    try:
        build_parser().parse_args(argv)
    except SystemExit as exit_:
        pytest.fail(f"{page}: `{command}` does not parse (exit {exit_.code})")


def documented_exit_codes(text: str) -> dict[int, set[str]]:
    """The rows `| code | outcomes | meaning |` of the exit-code table of a page: the
    outcomes each code is documented for."""
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[0].isdigit():
            rows[int(cells[0])] = {o.strip() for o in cells[1].split(",")}
    return rows


def test_the_exit_code_table_is_the_one_the_cli_uses():
    from benchkit.cli.exit_codes import Outcome, exit_code
    table = documented_exit_codes((ROOT / "docs" / "suites.md").read_text())
    used: dict[int, set[str]] = {}
    for outcome in Outcome:
        used.setdefault(int(exit_code(outcome)), set()).add(outcome.value)
    assert table == used


def test_the_exit_code_check_can_fail():
    assert documented_exit_codes("| code | outcome | meaning |\n| 0 | ok | done |\n"
                                 "| 7 | odd, even | odd |\n") == {0: {"ok"}, 7: {"odd", "even"}}
