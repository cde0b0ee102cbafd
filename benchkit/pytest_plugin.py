"""pytest plugin: the `benchkit` fixture times a snippet and returns a Measurement.

    def test_mul_speed(benchkit):
        m = benchkit("x * y", setup="x = torch.ones(128); y = torch.ones(128)")
        assert m.median > 0

`--benchkit-save PATH` writes every Measurement taken in the session to a results file.
benchkit itself is imported only when the fixture is used, so ordinary runs pay nothing.
"""
from __future__ import annotations

import pytest

_KEY = pytest.StashKey[list]()


def pytest_addoption(parser):
    group = parser.getgroup("benchkit")
    group.addoption("--benchkit-save", metavar="PATH", default=None,
                    help="write the Measurements taken by the `benchkit` fixture to PATH "
                         "(.json or .json.gz)")
    group.addoption("--benchkit-min-run-time", type=float, default=0.2, metavar="S",
                    help="min_run_time of blocked_autorange in the `benchkit` fixture")


def pytest_configure(config):
    config.stash[_KEY] = []


@pytest.fixture
def benchkit(request):
    """Call with (stmt, setup="pass", **Timer kwargs; min_run_time=...) -> Measurement."""
    from benchkit import Timer

    config = request.config
    default_min = config.getoption("--benchkit-min-run-time")

    def measure(stmt, setup="pass", *, min_run_time=None, **timer_kwargs):
        timer_kwargs.setdefault("label", request.node.nodeid)
        m = Timer(stmt, setup, **timer_kwargs).blocked_autorange(
            min_run_time=default_min if min_run_time is None else min_run_time)
        config.stash[_KEY].append(m)
        return m

    return measure


def pytest_sessionfinish(session, exitstatus):
    path = session.config.getoption("--benchkit-save", default=None)
    taken = session.config.stash.get(_KEY, [])
    if path and taken:
        import benchkit
        benchkit.save(path, taken)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    taken = config.stash.get(_KEY, [])
    if taken:
        from benchkit import Compare
        terminalreporter.section("benchkit")
        terminalreporter.write_line(str(Compare(taken)))
