"""What benchkit's exit codes mean, the same in every command (and the pytest plugin's
session status follows them)."""
from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    """Exit codes of the `benchkit` command."""

    OK = 0              # done; no gate broken, no problem found
    FAILED = 1          # a gate caught a regression, or a check found problems
    USAGE = 2           # a usage or input error: the message names it and says what to do
    INTERRUPTED = 130   # Ctrl-C (SIGINT)
    BROKEN_PIPE = 141   # the reader of the output went away (`| head`), as a shell reports it
    TERMINATED = 143    # SIGTERM


def comparison_exit(compared, *, allow_missing: bool) -> ExitCode:
    """One rule for `ab` and `compare`: 1 when a gate breaks, or when a benchmark could not
    be measured on a side, unless --allow-missing (then it is listed, not failed); else 0."""
    failed = bool(compared.failed_base or compared.failed_new)
    if compared.regressions or (failed and not allow_missing):
        return ExitCode.FAILED
    return ExitCode.OK
