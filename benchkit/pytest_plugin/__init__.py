"""pytest plugin: the `benchkit` fixture, baselines and gates in the test run, instruction
counts per test.

    def test_parse(benchkit):                       # pytest-benchmark's `benchmark`, renamed
        result = benchkit(parse, "1 + 2")
        assert result == 3

    @pytest.mark.benchkit(group="parsing", fail_on="slower>10%")
    def test_parse_big(benchkit): ...

Options (pytest --help): --benchkit-save PATH, --benchkit-autosave, --benchkit-compare [PATH],
--benchkit-fail-on GATE, --benchkit-callgrind, --benchkit-processes N,
--benchkit-min-run-time S, --benchkit-skip, --benchkit-disable. benchkit itself is imported
only when the fixture is used or an option asks for it, so ordinary runs pay nothing.
"""
from __future__ import annotations

import math

import pytest

_STATE = pytest.StashKey[dict]()
AUTOSAVE_DIR = ".benchkit"


def pytest_addoption(parser):
    group = parser.getgroup("benchkit")
    group.addoption("--benchkit-save", metavar="PATH", default=None,
                    help="write this session's measurements (and counts) to PATH "
                         "(.json or .json.gz)")
    group.addoption("--benchkit-autosave", action="store_true",
                    help=f"also save under {AUTOSAVE_DIR}/ named by git commit and time")
    group.addoption("--benchkit-compare", metavar="PATH", nargs="?", const="latest",
                    default=None,
                    help="compare with a saved results file (default: the latest autosave) "
                         "and print verdicts")
    group.addoption("--benchkit-fail-on", metavar="GATE", action="append", default=[],
                    help="fail the session when a benchmark breaks GATE against the "
                         "--benchkit-compare baseline, e.g. 'slower>10%%', "
                         "'instructions>1%%' (repeatable; markers' fail_on take precedence)")
    group.addoption("--benchkit-callgrind", action="store_true",
                    help="also count instructions of each benchmark (valgrind; "
                         "deterministic gates for CI)")
    group.addoption("--benchkit-processes", type=int, default=0, metavar="N",
                    help="measure each benchmark in N fresh worker processes (needs "
                         "picklable targets; default: in this process, in chunks)")
    group.addoption("--benchkit-min-run-time", type=float, default=0.2, metavar="S",
                    help="seconds of measurement per benchmark (default 0.2)")
    group.addoption("--benchkit-skip", action="store_true",
                    help="skip the tests that use the benchkit fixture")
    group.addoption("--benchkit-disable", action="store_true",
                    help="run benchmarked code once, for correctness, without timing")


def pytest_configure(config):
    config.addinivalue_line("markers", "benchkit(group=None, fail_on=None, min_run_time=None):"
                                       " benchkit grouping, gates and length for this test")
    state = {"measurements": [], "targets": [], "problems": []}
    config.stash[_STATE] = state
    _check_numbers(config)
    if not _active(config):
        return
    from benchkit.pytest_plugin.session import check_options
    state["problems"] = check_options(config)


def _check_numbers(config) -> None:
    """Numeric options, checked whenever given (cheap, and nothing imported for it)."""
    processes = config.getoption("--benchkit-processes")
    min_run_time = config.getoption("--benchkit-min-run-time")
    if processes < 0:
        raise pytest.UsageError(f"--benchkit-processes {processes}: must be 0 or more")
    if not (math.isfinite(min_run_time) and min_run_time > 0):
        raise pytest.UsageError(f"--benchkit-min-run-time {min_run_time}: must be a finite "
                                "number > 0")


def _active(config) -> bool:
    opt = config.getoption
    return bool(opt("--benchkit-save") or opt("--benchkit-autosave")
                or opt("--benchkit-compare") or opt("--benchkit-fail-on")
                or opt("--benchkit-callgrind"))


def pytest_collection_modifyitems(config, items):
    if not config.getoption("--benchkit-skip"):
        return
    skip = pytest.mark.skip(reason="--benchkit-skip: benchmarks are not run")
    for item in items:
        if "benchkit" in getattr(item, "fixturenames", ()):
            item.add_marker(skip)


@pytest.fixture
def benchkit(request):
    """Time a callable (returns its result) or a string snippet (returns the Measurement);
    see benchkit.pytest_plugin.fixture."""
    from benchkit.pytest_plugin.fixture import BenchkitFixture
    config = request.config
    marker = request.node.get_closest_marker("benchkit")
    options = {"min_run_time": config.getoption("--benchkit-min-run-time"),
               "processes": config.getoption("--benchkit-processes"),
               "disable": config.getoption("--benchkit-disable")}
    state = config.stash[_STATE]

    def record(fixture, measurement, timer, target):
        state["measurements"].append(measurement)
        state["targets"].append((fixture.name, timer, measurement.metadata))

    return BenchkitFixture(request.node.nodeid, options, record,
                           dict(marker.kwargs) if marker else {})


def pytest_sessionfinish(session, exitstatus):
    state = session.config.stash.get(_STATE, None)
    if not state or not (state["measurements"] or state["problems"]):
        return
    from benchkit.pytest_plugin.session import finish
    failed = finish(session.config, state)
    if failed and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    state = config.stash.get(_STATE, None)
    if not state or not (state["measurements"] or state["problems"]):
        return
    from benchkit.pytest_plugin.session import summary_lines
    terminalreporter.section("benchkit")
    for line in summary_lines(state):
        terminalreporter.write_line(line)
