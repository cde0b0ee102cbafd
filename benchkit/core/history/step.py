"""A step in a history series and the functions that moved across it (pure records)."""
from __future__ import annotations

import dataclasses
from typing import Any

from benchkit.core.metrics.metric import history_metric
from benchkit.core.history.series import Commit


@dataclasses.dataclass(frozen=True)
class MovedFunction:
    """A function whose instructions per run changed across a step."""

    function: str
    before: float
    after: float

    @property
    def delta(self) -> float:
        """Instructions per run after minus before."""
        return self.after - self.before


@dataclasses.dataclass(frozen=True)
class Step:
    """A change in one series between two neighbouring commits. `change` is relative (+0.10:
    10 % slower or 10 % more instructions), `ci_low`/`ci_high` its interval (for
    instructions, the change from band edge to band edge)."""

    benchmark: str
    metric: str
    machine: str
    previous: Commit
    commit: Commit
    before: float
    after: float
    change: float
    ci_low: float
    ci_high: float
    functions: tuple[MovedFunction, ...] = ()
    evidence: str = ""
    environment: str = ""
    confirmation: str = ""       # "", or confirmed / rejected / not re-measurable (why)
    transient: bool = False      # a later step took it back: a slow spell or a revert
    # Not placed: the data fits the step anywhere after span[0] up to span[1] (commit is
    # only the best fit); None when it lies between previous and commit.
    span: tuple[Commit, Commit] | None = None
    # Wall time: fewer than MIN_LEVEL commits after it, at the newest end. A shared runner's
    # slow spell looks the same until it comes back; not a step to act on until more
    # commits hold it or `--confirm` re-measures it.
    pending: bool = False

    @property
    def to_act_on(self) -> bool:
        """Whether a team should act on it: not transient, and not pending unless
        `--confirm` confirmed it."""
        return not self.transient and (not self.pending or self.verdict == "confirmed")

    @property
    def awaiting(self) -> bool:
        """Pending and not confirmed: shown as "(pending)"."""
        return self.pending and not self.to_act_on

    @property
    def mark(self) -> str:
        """What a listing adds after the change: " (transient)", " (pending)" or nothing."""
        return " (transient)" if self.transient else " (pending)" if self.awaiting else ""

    @property
    def placed(self) -> bool:
        """Whether the step is at one commit (else `span` holds where it may be)."""
        return self.span is None

    @property
    def verdict(self) -> str:
        """What `--confirm` said, in a word (confirmed, rejected, ...; "" when nothing)."""
        return self.confirmation.split(":")[0].strip()

    @property
    def range(self) -> tuple[Commit, Commit]:
        """The commits the step lies between: after the first, at or before the second."""
        return self.span or (self.previous, self.commit)

    def to_json(self) -> dict[str, Any]:
        """The JSON object `benchkit history regressions --json` prints."""
        return {"benchmark": self.benchmark, "metric": str(self.metric),
                "machine": self.machine, "environment": self.environment,
                "confirmation": self.confirmation or None, "transient": self.transient,
                "pending": self.pending, "placed": self.placed,
                "span": None if self.span is None else [c.sha for c in self.span],
                "commit": self.commit.sha,
                "previous_commit": self.previous.sha, "commit_date": self.commit.date,
                "message": self.commit.message, "before": self.before, "after": self.after,
                "change": self.change, "ci_low": self.ci_low, "ci_high": self.ci_high,
                "evidence": self.evidence,
                "functions": [{"function": f.function, "before": f.before, "after": f.after,
                               "delta": f.delta} for f in self.functions]}


def _commit_record(commit: Commit) -> list[Any]:
    return [commit.sha, commit.date, commit.order, commit.message]


def _commit_of(record: Any) -> Commit:
    sha, date, order, message = record
    if not (isinstance(sha, str) and isinstance(date, str) and isinstance(message, str)
            and (order is None or type(order) is int)):
        raise ValueError("not a commit record")
    return Commit(sha, date, order, message)


def step_key(step: Step) -> tuple[str, str, str, str, str, str]:
    """What names a step across runs of the finder: its series (benchmark, metric, machine,
    environment) and its two commits."""
    return (step.benchmark, str(step.metric), step.machine, step.environment,
            step.previous.sha, step.commit.sha)


def with_confirmations(steps: list[Step], kept: dict[tuple, str]) -> list[Step]:
    """The steps, each with the verdict kept for it (`kept`: by step_key), where it has
    none of its own."""
    return [s if s.confirmation or step_key(s) not in kept else
            dataclasses.replace(s, confirmation=kept[step_key(s)]) for s in steps]


def steps_to_records(steps: list[Step]) -> list[list[Any]]:
    """Steps as JSON-ready lists (what the history database's cache keeps)."""
    return [[s.benchmark, str(s.metric), s.machine, _commit_record(s.previous),
             _commit_record(s.commit), s.before, s.after, s.change, s.ci_low, s.ci_high,
             [[f.function, f.before, f.after] for f in s.functions], s.evidence,
             s.environment, s.confirmation, s.transient,
             None if s.span is None else [_commit_record(c) for c in s.span], s.pending]
            for s in steps]


def steps_from_records(records: Any) -> list[Step]:
    """Steps back from `steps_to_records`; ValueError when the records are not that (the
    cache lives in a file that may have been damaged or written by someone else)."""
    if not isinstance(records, list):
        raise ValueError("not a list of steps")
    out = []
    for record in records:
        try:
            (benchmark, metric, machine, previous, commit, before, after, change, ci_low,
             ci_high, functions, evidence, environment, confirmation, transient,
             span, pending) = record
            numbers = (before, after, change, ci_low, ci_high)
            if not (all(isinstance(v, str) for v in (benchmark, machine, evidence,
                                                     environment, confirmation))
                    and all(isinstance(v, (int, float)) for v in numbers)
                    and isinstance(transient, bool) and isinstance(pending, bool)
                    and isinstance(functions, list)):
                raise ValueError("a field of the wrong type")
            moved = []
            for function, was, now in functions:
                if not (isinstance(function, str) and isinstance(was, (int, float))
                        and isinstance(now, (int, float))):
                    raise ValueError("a moved function of the wrong type")
                moved.append(MovedFunction(function, was, now))
            if span is not None:
                first, last = span
                span = (_commit_of(first), _commit_of(last))
            out.append(Step(benchmark, history_metric(metric), machine, _commit_of(previous),
                            _commit_of(commit), *(float(v) for v in numbers), tuple(moved),
                            evidence, environment, confirmation, transient, span, pending))
        except TypeError:
            raise ValueError("not a step record") from None
    return out
