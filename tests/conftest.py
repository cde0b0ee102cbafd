import shutil
import sys

import pytest

from benchkit.core.measure.measurement import Measurement
from benchkit.core.measure.task import TaskSpec


def make_measurement(times_us, number=1000, metadata=None, **spec):
    """A Measurement whose per-run times are `times_us` microseconds."""
    spec.setdefault("stmt", "x * y")
    spec.setdefault("setup", "pass")
    return Measurement(number, [t * 1e-6 * number for t in times_us], TaskSpec(**spec), metadata)


@pytest.fixture
def python():
    return sys.executable


# An --install command for a revision: a venv without pip that sees the checkout and the
# caller's packages, made in 0.1 s (the default `pip install` of each side takes seconds;
# tests of that default use it).
FAST_INSTALL = ("{python} -m venv --without-pip {env} && {python} -c \"import sys; "
                "open(sys.argv[1], 'w').write(sys.argv[2] + chr(10) + sys.argv[3])\" "
                "{env_pth} {src} {caller_site}")

requires_valgrind = pytest.mark.skipif(shutil.which("valgrind") is None,
                                       reason="valgrind is not installed")


pytest_plugins = ["pytester"]
