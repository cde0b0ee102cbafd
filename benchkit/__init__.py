"""benchkit: micro-benchmarks for Python, PyTorch and NumPy code.

The public API mirrors torch.utils.benchmark. Names are loaded on first use, so
`import benchkit` is cheap and never imports torch (or numpy).
"""
import importlib

__version__ = "0.1.0"

_EXPORTS = {
    "BenchkitError": "benchkit.errors",
    "CallgrindStats": "benchkit.valgrind.callgrind_stats",
    "Colorize": "benchkit.compare",
    "Compare": "benchkit.compare",
    "CopyIfCallgrind": "benchkit.transfer",
    "FunctionCount": "benchkit.valgrind.counts",
    "FunctionCounts": "benchkit.valgrind.counts",
    "FuzzedParameter": "benchkit.fuzzer",
    "FuzzedSparseTensor": "benchkit.fuzzer",
    "FuzzedTensor": "benchkit.fuzzer",
    "Fuzzer": "benchkit.fuzzer",
    "Language": "benchkit.task",
    "Measurement": "benchkit.measurement",
    "ParameterAlias": "benchkit.fuzzer",
    "Results": "benchkit.results.schema",
    "TaskSpec": "benchkit.task",
    "benchmark": "benchkit.suite",
    "callgrind_session": "benchkit.valgrind.collector",
    "region": "benchkit.profile.regions",
    "RegionRecorder": "benchkit.profile.regions",
    "Timer": "benchkit.timing.timer",
    "collect_callgrind_many": "benchkit.timing.timer",
    "diff_counts": "benchkit.valgrind.counts",
    "from_torch": "benchkit.torch_compat",
    "load": "benchkit.results.store",
    "measure_processes": "benchkit.timing.timer",
    "merge": "benchkit.results.store",
    "ordered_unique": "benchkit.compare.table",
    "save": "benchkit.results.store",
    "select_unit": "benchkit.stats",
    "set_torch_threads": "benchkit.timing.threads",
    "timer": "benchkit.timing.clock",
    "trim_sigfig": "benchkit.stats",
    "unit_to_english": "benchkit.stats",
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
