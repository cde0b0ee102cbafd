"""pytest plugin: the `benchkit` fixture, baselines and gates in the test run, instruction
counts per test.

    def test_parse(benchkit):                       # pytest-benchmark's `benchmark`, renamed
        result = benchkit(parse, "1 + 2")
        assert result == 3

    @pytest.mark.benchkit(group="parsing", fail_on="slower>10%")
    def test_parse_big(benchkit): ...

Options (pytest --help): --benchkit-save PATH, --benchkit-autosave, --benchkit-compare [PATH],
--benchkit-fail-on GATE, --benchkit-callgrind, --benchkit-memory, --benchkit-processes N,
--benchkit-min-run-time S, --benchkit-skip, --benchkit-disable. benchkit itself is imported
only when the fixture is used or an option asks for it, so ordinary runs pay nothing.
"""
from __future__ import annotations

import dataclasses
from typing import Any

import pytest

AUTOSAVE_DIR = ".benchkit"


@dataclasses.dataclass(frozen=True)
class FixtureOptions:
    """The command-line options every fixture of the session follows."""

    min_run_time: float
    processes: int
    disable: bool


@dataclasses.dataclass
class SessionState:
    """What the session measured and found: each benchmark's Measurement with its Benchmark
    and Timer (None for pedantic rounds, which counts cannot repeat), problems to report,
    and at the end the results, the files written and the comparison with a baseline."""

    measurements: list = dataclasses.field(default_factory=list)
    targets: list[tuple[Any, Any]] = dataclasses.field(default_factory=list)
    problems: list[str] = dataclasses.field(default_factory=list)
    received_counts: list = dataclasses.field(default_factory=list)    # from xdist workers
    received_memory: list = dataclasses.field(default_factory=list)    # from xdist workers
    interrupted: str | None = None
    results: Any = None
    written: list[str] = dataclasses.field(default_factory=list)
    baseline: str | None = None
    comparison: Any = None
    signals: Any = None                 # SIGTERM handling while the session runs

    @property
    def has_output(self) -> bool:
        """Whether the session has anything to save or report."""
        return bool(self.measurements or self.problems or self.received_counts
                    or self.received_memory)


_STATE = pytest.StashKey[SessionState]()


def pytest_addoption(parser):
    """The --benchkit-* options (those `benchkit run` and `ab` have too are declared once,
    in benchkit.cli.shared_options)."""
    from benchkit.cli import args as types
    from benchkit.cli import shared_options as shared
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
    shared.FAIL_ON.add(group, prefix="benchkit-",
                       help_suffix=" (needs --benchkit-compare: the baseline)")
    shared.ALLOW_MISSING.add(group, prefix="benchkit-")
    shared.STRICT.add(group, prefix="benchkit-")
    shared.CALLGRIND.add(group, prefix="benchkit-")
    shared.MEMORY.add(group, prefix="benchkit-",
                      help_suffix="; gates 'allocations>0', 'retained>0', ...")
    group.addoption("--benchkit-processes", type=types.non_negative_int, default=0,
                    metavar="N",
                    help="measure each benchmark in N fresh worker processes (needs "
                         "picklable targets; default 0: in this process, in chunks)")
    shared.MIN_RUN_TIME.add(group, prefix="benchkit-", default=0.2)
    group.addoption("--benchkit-skip", action="store_true",
                    help="skip the tests that use the benchkit fixture")
    group.addoption("--benchkit-disable", action="store_true",
                    help="run benchmarked code once, for correctness, without timing")
    group.addoption("--benchkit-as-benchmark", action="store_true",
                    help="also offer the fixture as `benchmark` (and read "
                         "@pytest.mark.benchmark(group=...)), so pytest-benchmark test files "
                         "run unchanged; only where pytest-benchmark is not active")
    parser.addini("benchkit_as_benchmark", type="bool", default=False,
                  help="as --benchkit-as-benchmark")


class _BenchmarkAlias:
    """The `benchmark` fixture name, for test files written for pytest-benchmark."""

    @pytest.fixture
    def benchmark(self, benchkit):
        """benchkit's fixture under pytest-benchmark's name."""
        return benchkit

    @pytest.fixture
    def benchmark_weave(self, benchkit):
        """`benchkit.weave` under pytest-benchmark's name."""
        return benchkit.weave


def _alias_wanted(config) -> bool:
    return bool(config.getoption("--benchkit-as-benchmark")
                or config.getini("benchkit_as_benchmark"))


def pytest_configure(config):
    """Register the marker, check the options, and start the session's state."""
    config.addinivalue_line("markers", "benchkit(group=None, fail_on=None, min_run_time=None, "
                                       "cprofile=False): benchkit grouping, gates and length "
                                       "for this test; cprofile: one more call, profiled")
    state = SessionState()
    config.stash[_STATE] = state
    if _alias_wanted(config):
        if config.pluginmanager.hasplugin("benchmark"):
            raise pytest.UsageError(
                "--benchkit-as-benchmark: pytest-benchmark is active and owns the `benchmark` "
                "fixture; add `-p no:benchmark` to use benchkit's under that name")
        config.addinivalue_line("markers", "benchmark(group=None, **options): "
                                           "pytest-benchmark's marker, read by benchkit")
        config.pluginmanager.register(_BenchmarkAlias(), "benchkit-as-benchmark")
    if not _active(config):
        return
    from benchkit.pytest_plugin.session import check_options
    from benchkit.system.processes import sigterm_as_interrupt
    state.problems = check_options(config)
    if not _is_xdist_worker(config):
        # SIGTERM then ends the session as Ctrl-C does: what was measured is saved

        def note() -> None:
            state.interrupted = "interrupted (SIGTERM)"
        state.signals = sigterm_as_interrupt(note)
        state.signals.__enter__()


def pytest_unconfigure(config):
    """Give SIGTERM back its previous handler."""
    state = config.stash.get(_STATE, None)
    if state is not None and state.signals is not None:
        state.signals.__exit__(None, None, None)
        state.signals = None


def _is_xdist_worker(config) -> bool:
    return hasattr(config, "workerinput")


def _active(config) -> bool:
    opt = config.getoption
    return bool(opt("--benchkit-save") or opt("--benchkit-autosave")
                or opt("--benchkit-compare") or opt("--benchkit-fail-on")
                or opt("--benchkit-callgrind") or opt("--benchkit-memory"))


def pytest_collection_modifyitems(config, items):
    """--benchkit-skip: skip the tests that use the fixture."""
    if not config.getoption("--benchkit-skip"):
        return
    skip = pytest.mark.skip(reason="--benchkit-skip: benchmarks are not run")
    for item in items:
        names = getattr(item, "fixturenames", ())
        if "benchkit" in names or ("benchmark" in names and _alias_wanted(config)):
            item.add_marker(skip)


@pytest.fixture
def benchkit(request):
    """Time a callable (returns its result) or a string snippet (returns the Measurement);
    see benchkit.pytest_plugin.fixture."""
    from benchkit.pytest_plugin.fixture import BenchkitFixture
    config = request.config
    marker = request.node.get_closest_marker("benchkit")
    if marker is None and _alias_wanted(config):
        marker = request.node.get_closest_marker("benchmark")
    options = FixtureOptions(config.getoption("--benchkit-min-run-time"),
                             config.getoption("--benchkit-processes"),
                             config.getoption("--benchkit-disable"))
    state = config.stash[_STATE]

    def record(fixture, measurement, timer):
        state.measurements.append(measurement)
        state.targets.append((fixture.benchmark(), timer))

    fixture = BenchkitFixture(request.node.nodeid, options, record,
                              dict(marker.kwargs) if marker else {})
    yield fixture
    fixture._teardown()


@pytest.fixture
def benchkit_weave(benchkit):
    """`benchkit.weave`, as pytest-benchmark's `benchmark_weave` fixture."""
    return benchkit.weave


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """pytest-xdist: a worker's measurements and counts join the controller's."""
    text = getattr(node, "workeroutput", {}).get("benchkit")
    state = node.config.stash.get(_STATE, None)
    if not text or state is None:
        return
    from benchkit.pytest_plugin.session import receive
    receive(state, text)


def pytest_sessionfinish(session, exitstatus):
    """Count, save and compare (in an xdist worker: hand everything to the controller); a
    broken gate fails the session, an interrupted one exits 130 (SIGINT) or 143 (SIGTERM)."""
    state = session.config.stash.get(_STATE, None)
    if state is None or not state.has_output:
        return
    if exitstatus == pytest.ExitCode.INTERRUPTED and state.interrupted is None:
        state.interrupted = "interrupted (SIGINT)"
    if _is_xdist_worker(session.config):
        from benchkit.pytest_plugin.session import hand_over
        hand_over(session.config, state)
        return
    from benchkit.pytest_plugin.session import finish
    failed = finish(session.config, state)
    if state.interrupted:
        from benchkit.cli.exit_codes import Outcome, exit_code
        session.exitstatus = int(exit_code(Outcome.TERMINATED if "SIGTERM" in state.interrupted
                                           else Outcome.INTERRUPTED))
    elif failed and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """The benchkit section of the summary."""
    state = config.stash.get(_STATE, None)
    if state is None or not state.has_output:
        return
    from benchkit.pytest_plugin.session import summary_lines
    terminalreporter.section("benchkit")
    for line in summary_lines(state):
        terminalreporter.write_line(line)
