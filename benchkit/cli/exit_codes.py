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
