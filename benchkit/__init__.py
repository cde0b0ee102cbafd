"""benchkit: micro-benchmarks for Python, PyTorch and NumPy code.

The public API mirrors torch.utils.benchmark. Importing benchkit never imports torch.
"""
from benchkit.compare import Compare
from benchkit.errors import BenchkitError
from benchkit.measurement import Measurement
from benchkit.results import Results, load, merge, save
from benchkit.task import Language, TaskSpec
from benchkit.timing.clock import timer
from benchkit.timing.timer import Timer

__version__ = "0.1.0"

__all__ = ["BenchkitError", "Compare", "Language", "Measurement", "Results", "TaskSpec",
           "Timer", "load", "merge", "save", "timer", "__version__"]
