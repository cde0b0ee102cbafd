"""A step in a history series and the functions that moved across it (pure records)."""
from __future__ import annotations

import dataclasses
from typing import Any

from benchkit.core.history.series import Commit, HistoryMetric


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
    metric: HistoryMetric
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

    def to_json(self) -> dict[str, Any]:
        """The JSON object `benchkit history regressions --json` prints."""
        return {"benchmark": self.benchmark, "metric": str(self.metric),
                "machine": self.machine, "environment": self.environment,
                "confirmation": self.confirmation or None, "transient": self.transient,
                "commit": self.commit.sha,
                "previous_commit": self.previous.sha, "commit_date": self.commit.date,
                "message": self.commit.message, "before": self.before, "after": self.after,
                "change": self.change, "ci_low": self.ci_low, "ci_high": self.ci_high,
                "evidence": self.evidence,
                "functions": [{"function": f.function, "before": f.before, "after": f.after,
                               "delta": f.delta} for f in self.functions]}
