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


requires_valgrind = pytest.mark.skipif(shutil.which("valgrind") is None,
                                       reason="valgrind is not installed")


pytest_plugins = ["pytester"]
