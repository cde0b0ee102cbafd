"""Files written by main before a change of the code that reads them load and give the same
tables and steps, character for character: tests/fixtures/before-regroup (made by its
make.py at ba89b74, before core/ was grouped into packages, the history CLI moved and exit
codes came from outcomes) and tests/fixtures/before-metric-seam (at 2637f55, before the
metric registry: asv values, a stored gate, a track series with a step)."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from test_cli import cli

pytestmark = pytest.mark.slow     # five CLI runs on a history database

FIXTURE_DIRS = [Path(__file__).parent / "fixtures" / name
                for name in ("before-regroup", "before-metric-seam")]
COMMANDS = [
    (("compare", "base.json", "new.json"), "compare.txt"),
    (("compare", "base.json", "new.json", "--json"), "compare.json.txt"),
    (("history", "regressions", "--db", "history.db"), "regressions.txt"),
    (("history", "regressions", "--db", "history.db", "--json"), "regressions.json.txt"),
    (("report", "--markdown", "--db", "history.db"), "report.md.txt"),
]


@pytest.fixture(params=FIXTURE_DIRS, ids=[d.name for d in FIXTURE_DIRS])
def fixtures(request) -> Path:
    return request.param


@pytest.fixture
def copied(tmp_path, fixtures) -> Path:
    for name in ("base.json", "new.json", "history.db"):
        shutil.copy(fixtures / name, tmp_path / name)
    return tmp_path


# Keys a step's JSON gained after the fixtures were written, with the value every step
# found in them must have (they were all placed at one commit, none in the newest few).
ADDED_TO_STEPS = {"placed": True, "span": None, "shared": None, "pending": False}


def without_added_keys(out: str) -> str:
    """`history regressions --json` output as the fixtures' main printed it: the keys added
    since checked and taken out, the rest printed again as the CLI prints it."""
    records = json.loads(out)
    for record in records:
        if "commit" in record and "change" in record:
            for key, value in ADDED_TO_STEPS.items():
                assert record.pop(key) == value, record
    return json.dumps(records, indent=1) + "\n"


# Changed on purpose since the fixtures were written: the interval of a step in a measured
# series (wall time, a track_ value; not instruction counts) is Moses' for the
# Hodges-Lehmann shift (it was Yuen's t). Both sides have it taken out; the output's must
# hold the step's change.
TEXT_INTERVAL = re.compile(r"(\[(?!instructions)\w+, [^\]]*\]: "
                           r"|\| (?!instructions)\w+ \| [^|]* \| )([+-][\d.]+)%"
                           r"( \(interval | \| )([+-][\d.]+)% \.\. ([+-][\d.]+)%")


def without_time_intervals(text: str, check: bool) -> str:
    """`text` (a CLI's output, or the fixture's when not `check`) with the intervals of
    measured steps taken out: as JSON (`ci_low`, `ci_high`) or as printed."""
    if text.lstrip().startswith("["):
        records = json.loads(text)
        for record in records:
            if record.get("metric") not in (None, "instructions") and "ci_low" in record:
                low, high = record.pop("ci_low"), record.pop("ci_high")
                assert not check or low <= record["change"] <= high, record
        return json.dumps(records, indent=1) + "\n"

    def masked(match: re.Match) -> str:
        change, low, high = (float(match.group(k)) for k in (2, 4, 5))
        assert not check or low <= change <= high, match.group(0)
        return f"{match.group(1)}{match.group(2)}%{match.group(3)}(interval)"
    return TEXT_INTERVAL.sub(masked, text)


# Changed on purpose since the fixtures were written: the markdown report names each row's
# environment beside its machine (`box · py3.11.7`); their main printed the machine alone.
MARKDOWN_PLACE = re.compile(r"^(\| [^|]+ \| \w+ \| [^|·]+?) · [^|]+ \|", re.M)


def without_environments(markdown: str) -> str:
    """The markdown report with each row's environment taken out of its machine cell."""
    rows = [line for line in markdown.splitlines() if line.startswith("| ") and "---" not in line
            and not line.startswith("| benchmark |")]
    assert rows and all(MARKDOWN_PLACE.match(row) for row in rows), rows
    return MARKDOWN_PLACE.sub(r"\1 |", markdown)


@pytest.mark.parametrize("command, expected", COMMANDS, ids=[e for _, e in COMMANDS])
def test_files_from_before_the_change_give_the_same_output(copied, fixtures, command,
                                                            expected):
    out = cli(*command, cwd=copied, check_code=0).stdout
    want = (fixtures / expected).read_text()
    if command[:2] == ("history", "regressions") and "--json" in command:
        out = without_added_keys(out)
    if command[0] == "report":
        out = without_environments(out)
    if command[0] in ("history", "report"):
        out, want = without_time_intervals(out, True), without_time_intervals(want, False)
    assert out == want


def test_the_steps_are_the_same_again_from_the_cache(copied, fixtures):
    command, expected = COMMANDS[3]
    first = cli(*command, cwd=copied, check_code=0).stdout
    again = cli(*command, cwd=copied, check_code=0).stdout
    assert first == again
    assert without_time_intervals(without_added_keys(first), True) == without_time_intervals(
        (fixtures / expected).read_text(), False)
