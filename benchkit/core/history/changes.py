"""Environment changes (pure): where a machine's benchmark moved from one environment (a
Python, a library version, an asv environment) to another. Series never pool two
environments, so such a move is never a step; it is listed as what it is."""
from __future__ import annotations

import dataclasses
import itertools
from typing import Any, Sequence

from benchkit.core.history.series import Commit, Series


@dataclasses.dataclass(frozen=True)
class EnvironmentChange:
    """A benchmark on one machine measured in environment `after` from `commit` on, where
    it was measured in `before` up to `previous`."""

    benchmark: str
    metric: str
    machine: str
    before: str
    after: str
    previous: Commit
    commit: Commit
    value_before: float
    value_after: float

    def to_json(self) -> dict[str, Any]:
        """As `history regressions --json` lists it (kind "environment")."""
        return {"kind": "environment", "benchmark": self.benchmark, "metric": self.metric,
                "machine": self.machine, "environment_before": self.before,
                "environment_after": self.after, "previous_commit": self.previous.sha,
                "commit": self.commit.sha, "before": self.value_before,
                "after": self.value_after,
                "change": (self.value_after / self.value_before - 1
                           if self.value_before else None)}


def _point_key(point, series: Series) -> tuple:
    """Where a point stands in history order (first-parent position, else UTC date)."""
    c = point.commit
    return (c.order if not series.by_date and c.order is not None else -1, c.date, c.sha)


def _first_key(series: Series) -> tuple:
    return _point_key(series.points[0], series)


def environment_changes(series_list: Sequence[Series]) -> list[EnvironmentChange]:
    """Each point where a (benchmark, metric, machine) moved to another environment: one
    environment's last commit comes before the next one's first (environments measured
    side by side, as an asv matrix does, overlap and are no change)."""
    out = []
    keyed = sorted((s for s in series_list if s.points),
                   key=lambda s: (s.benchmark, str(s.metric), s.machine))
    for (benchmark, metric, machine), group in itertools.groupby(
            keyed, key=lambda s: (s.benchmark, str(s.metric), s.machine)):
        ordered = sorted(group, key=_first_key)
        for old, new in zip(ordered, ordered[1:]):
            last = old.points[-1]
            # not after it by position or date: side by side (a tie of dates says nothing
            # of which came first; the commit ids only keep the sort stable)
            if _point_key(last, old)[:2] >= _first_key(new)[:2]:
                continue
            out.append(EnvironmentChange(benchmark, metric, machine, old.environment,
                                         new.environment, last.commit, new.points[0].commit,
                                         last.value, new.points[0].value))
    return out
