"""Every error benchkit raises derives from BenchkitError.

Each message names the bad input and says what to do about it.
"""


class BenchkitError(Exception):
    """Base class of all benchkit errors."""


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


class ResultsFileError(BenchkitError, ValueError):
    """A results file cannot be read or written: missing, corrupt, foreign or too new."""

    def __init__(self, path, problem: str):
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


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
    """A global cannot be sent to the callgrind child process."""


class CountsMismatchError(BenchkitError, ValueError):
    """Inclusive and exclusive FunctionCounts were combined."""


class SuiteError(BenchkitError, ValueError):
    """A benchmark suite file cannot be loaded or holds no benchmarks."""


class TraceError(BenchkitError, ValueError):
    """A chrome trace cannot be read or is not a trace."""


class InvalidArgumentError(BenchkitError, ValueError):
    """An argument has the wrong type, is not finite, or is out of range."""

    def __init__(self, name: str, value, accepted: str, where: str = ""):
        self.name, self.value = name, value
        shown = repr(value)
        if len(shown) > 80:
            shown = shown[:77] + "..."
        super().__init__(f"{where + ': ' if where else ''}{name}={shown} is not accepted; "
                         f"pass {accepted}.")
