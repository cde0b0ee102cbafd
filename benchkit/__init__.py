"""benchkit: micro-benchmarks for Python, PyTorch and NumPy code.

The public API mirrors torch.utils.benchmark. Names are loaded on first use, so
`import benchkit` is cheap and never imports torch (or numpy).
"""
import importlib
import importlib.abc
import importlib.util
import sys

__version__ = "0.1.0"

_EXPORTS = {
    "BenchkitError": "benchkit.errors",
    "CallgrindStats": "benchkit.core.callgrind.callgrind_stats",
    "Colorize": "benchkit.api.compare",
    "Compare": "benchkit.api.compare",
    "CopyIfCallgrind": "benchkit.engines.transfer",
    "FunctionCount": "benchkit.core.callgrind.counts",
    "FunctionCounts": "benchkit.core.callgrind.counts",
    "FuzzedParameter": "benchkit.api.fuzzer",
    "FuzzedSparseTensor": "benchkit.api.fuzzer",
    "FuzzedTensor": "benchkit.api.fuzzer",
    "Fuzzer": "benchkit.api.fuzzer",
    "Language": "benchkit.core.measure.task",
    "Measurement": "benchkit.core.measure.measurement",
    "MemoryStats": "benchkit.core.measure.memory",
    "ParameterAlias": "benchkit.api.fuzzer",
    "ProcessSample": "benchkit.core.measure.measurement",
    "Results": "benchkit.core.records.schema",
    "Task": "benchkit.core.measure.task",
    "TaskSpec": "benchkit.core.measure.task",
    "benchmark": "benchkit.orchestration.suite",
    "callgrind_session": "benchkit.orchestration.counting",
    "region": "benchkit.engines.profiler.regions",
    "RegionRecorder": "benchkit.engines.profiler.regions",
    "Timer": "benchkit.api.timer",
    "collect_callgrind_many": "benchkit.api.timer",
    "collect_memory_many": "benchkit.api.timer",
    "diff_counts": "benchkit.core.callgrind.counts",
    "from_torch": "benchkit.api.torch_compat",
    "load": "benchkit.system.results_files",
    "measure_processes": "benchkit.api.timer",
    "merge": "benchkit.system.results_files",
    "ordered_unique": "benchkit.core.compare.table",
    "save": "benchkit.system.results_files",
    "select_unit": "benchkit.core.measure.stats",
    "set_torch_threads": "benchkit.engines.wall.threads",
    "timer": "benchkit.engines.wall.clock",
    "trim_sigfig": "benchkit.core.measure.stats",
    "unit_to_english": "benchkit.core.measure.stats",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'benchkit' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return __all__


# Pickles name benchkit's classes by their public path (`benchkit.Measurement`). Pickles made
# before the layered packages named internal modules; these names still load them.
_PICKLED_MODULES = {
    "benchkit.measurement": "benchkit.core.measure.measurement",
    "benchkit.task": "benchkit.core.measure.task",
    "benchkit.valgrind": "benchkit.core.callgrind",
    "benchkit.valgrind.callgrind_stats": "benchkit.core.callgrind.callgrind_stats",
    "benchkit.valgrind.counts": "benchkit.core.callgrind.counts",
    "benchkit.results": "benchkit.core",
    "benchkit.results.schema": "benchkit.core.records.schema",
}


class _PickledModuleLoader(importlib.abc.Loader):
    def __init__(self, target: str):
        self.target = target

    def create_module(self, spec):
        return importlib.import_module(self.target)

    def exec_module(self, module):
        pass


class _PickledModuleFinder(importlib.abc.MetaPathFinder):
    """Finds the old module names of pickled classes (and only those)."""

    def find_spec(self, name, path=None, target=None):
        moved = _PICKLED_MODULES.get(name)
        if moved is None:
            return None
        return importlib.util.spec_from_loader(name, _PickledModuleLoader(moved))


# First: an old name inside an aliased package (benchkit.valgrind.counts) must not be found
# again as a second copy of the file by the path finder.
if not any(isinstance(f, _PickledModuleFinder) for f in sys.meta_path):
    sys.meta_path.insert(0, _PickledModuleFinder())
