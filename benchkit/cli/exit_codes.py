"""What benchkit's exit codes mean, the same in every command (and the pytest plugin's
session status follows them): a command ends with a typed `Outcome`, and `exit_code` is the
one place that turns outcomes into a code."""
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


class Outcome(enum.Enum):
    """How a command ended."""

    OK = "ok"
    REGRESSION = "regression"                  # a gate caught one
    MEASUREMENT_FAILED = "measurement failed"  # a benchmark or a revision could not be measured
    PROBLEMS = "problems"                      # a check (validate-trace) found problems
    BAD_INPUT = "bad input"                    # a usage or input error, named in the message
    NOT_SAVED = "not saved"                    # results not written where the user asked
    INTERRUPTED = "interrupted"                # SIGINT
    TERMINATED = "terminated"                  # SIGTERM
    BROKEN_PIPE = "broken pipe"                # the reader of the output went away


_CODES = {
    Outcome.OK: ExitCode.OK,
    Outcome.REGRESSION: ExitCode.FAILED,
    Outcome.MEASUREMENT_FAILED: ExitCode.FAILED,
    Outcome.PROBLEMS: ExitCode.FAILED,
    Outcome.BAD_INPUT: ExitCode.USAGE,
    # CI must notice a file that is not where its next step will look
    Outcome.NOT_SAVED: ExitCode.USAGE,
    Outcome.INTERRUPTED: ExitCode.INTERRUPTED,
    Outcome.TERMINATED: ExitCode.TERMINATED,
    Outcome.BROKEN_PIPE: ExitCode.BROKEN_PIPE,
}


def exit_code(*outcomes: Outcome) -> ExitCode:
    """The exit code of a command that ended with these outcomes: the most serious one's
    (a usage error outranks a regression, an interruption outranks both); OK for none."""
    return max((_CODES[o] for o in outcomes), default=ExitCode.OK)


def comparison_outcome(compared, *, allow_missing: bool) -> Outcome:
    """One rule for `ab` and `compare`: a regression when a gate breaks; a failed
    measurement when a benchmark could not be measured on a side, unless --allow-missing
    (then it is listed, not failed); else OK."""
    if compared.regressions:
        return Outcome.REGRESSION
    if (compared.failed_base or compared.failed_new) and not allow_missing:
        return Outcome.MEASUREMENT_FAILED
    return Outcome.OK
