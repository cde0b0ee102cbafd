"""Every error benchkit raises, all under BenchkitError, in one place.

Each message names the bad input and says what to do about it. Standard library only: every
layer imports this, the callgrind server under valgrind included.
"""
from __future__ import annotations


class BenchkitError(Exception):
    """Base class of all benchkit errors."""


# ----------------------------------------------------------------------------- arguments


class InvalidArgumentError(BenchkitError, ValueError):
    """An argument has the wrong type, is not finite, or is out of range."""

    def __init__(self, name: str, value, accepted: str, where: str = "",
                 message: str | None = None):
        self.name, self.value = name, value
        shown = repr(value)
        if len(shown) > 80:
            shown = shown[:77] + "..."
        super().__init__(message or f"{where + ': ' if where else ''}{name}={shown} is not "
                                    f"accepted; pass {accepted}.")


class ArgumentCombinationError(BenchkitError, TypeError):
    """Arguments that cannot be given together (pytest-benchmark raises TypeError there)."""


class UnknownMetricError(BenchkitError, ValueError):
    """A metric name no registered metric has (core.metrics)."""


class GateError(BenchkitError, ValueError):
    """A regression gate is not of the form 'slower>5%' or 'instructions>1%'."""


# ----------------------------------------------------------------------------- snippets


class SnippetSyntaxError(BenchkitError, ValueError):
    """`stmt` or `setup` does not compile. Raised when the Timer is built."""

    def __init__(self, snippet: str, source: str, error: SyntaxError):
        self.snippet = snippet
        self.lineno = error.lineno
        self.offset = error.offset
        line = ""
        if error.lineno is not None:
            lines = source.splitlines()
            if 0 < error.lineno <= len(lines):
                line = lines[error.lineno - 1]
        where = f"line {error.lineno}" + (f", column {error.offset}" if error.offset else "")
        pointer = ""
        if line:
            pointer = f"\n    {line}"
            if error.offset:
                pointer += "\n    " + " " * (error.offset - 1) + "^"
        super().__init__(
            f"{snippet} has a syntax error at {where}: {error.msg}{pointer}\n"
            f"Fix the {snippet} snippet passed to Timer."
        )


class SnippetError(BenchkitError, RuntimeError):
    """The snippet raised while it was being measured. No Measurement is produced."""

    def __init__(self, snippet: str, error: BaseException, lineno: int | None = None,
                 line: str | None = None):
        self.snippet = snippet
        self.error = error
        where = f" at line {lineno}" if lineno else ""
        shown = f" ({line.strip()!r})" if line and line.strip() else ""
        super().__init__(
            f"{snippet} raised {type(error).__name__}{where}{shown}: {error}\n"
            f"The snippet must run without errors before it can be measured; "
            f"the original exception is chained above."
        )


class CppError(BenchkitError, RuntimeError):
    """A C++ exception thrown by a C++ snippet (the `error` of its SnippetError)."""


class CppToolchainError(BenchkitError, RuntimeError):
    """No C++ compiler, or no torch headers/libraries to compile against."""


class CppCompileError(BenchkitError, ValueError):
    """A C++ snippet does not compile; the message maps the compiler's errors to the
    snippet's own lines (`shown`: those lines, or the compiler's last lines)."""

    def __init__(self, errors: list[str], command: str, shown: str):
        self.errors = errors
        super().__init__(f"the C++ snippet does not compile:\n{shown}\n"
                         f"Fix the snippet passed to Timer(..., language='cpp'). "
                         f"(compiler: {command})")


# ----------------------------------------------------------------------------- files


class ResultsFileError(BenchkitError, ValueError):
    """A results file cannot be read or written: missing, corrupt, foreign or too new."""

    def __init__(self, path, problem: str):
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


class HistoryError(BenchkitError, ValueError):
    """A history database cannot be used: corrupt, foreign, too new, or asked for what it
    does not hold; the message names the database and what to do."""


class DependencyMissingError(BenchkitError, ImportError):
    """An optional library a feature needs is not installed; the message says what to install."""


class MemoryCountError(BenchkitError, RuntimeError):
    """Memory could not be counted (the counting allocator is not loaded, or its table of
    live blocks overflowed); the message says why."""


class TorchNotInstalledError(DependencyMissingError):
    """A snippet uses torch and torch is not installed in the environment that runs it."""


class ReportError(BenchkitError, ValueError):
    """The dashboard cannot be written: a taken output directory, bokeh missing, nothing to
    show."""


class RevisionError(BenchkitError, ValueError):
    """A revision of a history run or a bisect cannot be resolved, installed or measured."""


class SchemaError(BenchkitError, ValueError):
    """A document is not a valid results document; the message says where (the results
    file reader turns it into a ResultsFileError naming the file)."""


class TraceError(BenchkitError, ValueError):
    """A chrome trace cannot be read or is not a trace."""


class TorchConversionError(BenchkitError, ValueError):
    """An object or file that is not torch.utils.benchmark results, or needs torch to read."""


# ----------------------------------------------------------------------------- instruction counts


class CallgrindError(BenchkitError, RuntimeError):
    """Collecting instruction counts failed (valgrind missing, child failed, timeout)."""


class ValgrindNotFoundError(CallgrindError):
    """valgrind or its callgrind.h header is not installed."""


class CallgrindParseError(BenchkitError, ValueError):
    """A callgrind.out file is malformed. Names the file and line."""

    def __init__(self, source: str, lineno: int, problem: str):
        self.source = source
        self.lineno = lineno
        self.problem = problem
        super().__init__(f"{source}:{lineno}: {problem}")


class GlobalNotTransferableError(CallgrindError, ValueError):
    """A global cannot be sent to a child process (callgrind or wall-time worker)."""


class RebuildError(BenchkitError):
    """In a child process: a global or callable could not be rebuilt (`name` says which)."""

    def __init__(self, name: str, error: BaseException):
        self.name = name
        super().__init__(f"{type(error).__name__}: {error}")


class CollectorJobFailed(BenchkitError):
    """In the collector's child: a job failed; `info` is what the parent is told."""

    def __init__(self, info: dict):
        super().__init__(info.get("message"))
        self.info = info


class CountsMismatchError(BenchkitError, ValueError):
    """Inclusive and exclusive FunctionCounts were combined."""


class DistributedError(BenchkitError, RuntimeError):
    """dask.distributed is missing, the scheduler cannot be reached, or a worker failed."""


# ----------------------------------------------------------------------------- runs


class SuiteError(BenchkitError, ValueError):
    """A benchmark suite file cannot be loaded or holds no benchmarks."""


class AsvSkipped(BenchkitError, RuntimeError):
    """An asv benchmark's parameter combination that asv itself would skip (its `setup`
    raised NotImplementedError, or `skip_params` names it)."""


class ChannelError(BenchkitError, RuntimeError):
    """A child process's channel: the other end died, or did not answer in time
    (`timed_out`)."""

    def __init__(self, message: str, timed_out: bool = False):
        super().__init__(message)
        self.timed_out = timed_out


class WorkerError(BenchkitError, RuntimeError):
    """A worker process failed to start, died, or did not answer in time (`timed_out`)."""

    def __init__(self, message: str, timed_out: bool = False):
        super().__init__(message)
        self.timed_out = timed_out


class BenchmarkTimedOut(BenchkitError):
    """A benchmark measured in this process did not finish within its --timeout."""


class BenchmarkFailed(BenchkitError, RuntimeError):
    """A benchmark's snippet raised in a worker process (which lives on); the message holds
    the error and the worker's traceback."""


class BenchmarkSkipped(BenchmarkFailed):
    """A benchmark its suite skips (asv: its setup raised NotImplementedError): reported as
    skipped, not failed."""


class SideError(BenchkitError, ValueError):
    """A side of an A/B cannot be set up: no such interpreter, revision, or a failed install."""


class FuzzerError(BenchkitError, ValueError):
    """A Fuzzer's parameters or tensors are inconsistent."""


class FixtureAlreadyUsed(BenchkitError, RuntimeError):
    """The pytest fixture measures one thing per test."""


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread as Ctrl-C raises KeyboardInterrupt, so a run
    stopped either way saves what it measured and removes what it made. Like
    KeyboardInterrupt it is not a BenchkitError: nothing may catch it as an error."""
