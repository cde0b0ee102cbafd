"""Measurement: raw block times are stored; every statistic is derived from them."""
from __future__ import annotations

import collections
import dataclasses
import functools
from typing import Any, Iterable

from benchkit import stats
from benchkit.task import TASKSPEC_FIELDS, TaskSpec


@dataclasses.dataclass(repr=False, eq=True)
class Measurement:
    """The result of a Timer measurement: `raw_times[i]` is the time of one block of
    `number_per_run` runs. Picklable; needs neither torch nor the original globals."""

    number_per_run: int
    raw_times: list[float]
    task_spec: TaskSpec
    metadata: dict[Any, Any] | None = None

    # -- derived statistics -------------------------------------------------------------
    @property
    def times(self) -> list[float]:
        """Per-run times in seconds (block time / number_per_run)."""
        return [t / self.number_per_run for t in self.raw_times]

    @functools.cached_property
    def _summary(self) -> stats.Summary:
        return stats.summarize(self.times)

    @property
    def median(self) -> float:
        return self._summary.median

    @property
    def mean(self) -> float:
        return self._summary.mean

    @property
    def iqr(self) -> float:
        return self._summary.iqr

    @property
    def significant_figures(self) -> int:
        return stats.significant_figures(self.times, self.median)

    @property
    def _warnings(self) -> tuple[str, ...]:
        return stats.iqr_warnings(self._summary)

    @property
    def has_warnings(self) -> bool:
        return bool(self._warnings)

    def meets_confidence(self, threshold: float = stats.IQR_WARN_THRESHOLD) -> bool:
        return self.iqr / self.median < threshold

    # -- task fields ----------------------------------------------------------------------
    @property
    def title(self) -> str:
        return self.task_spec.title

    @property
    def env(self) -> str:
        return "Unspecified env" if self.task_spec.env is None else self.task_spec.env

    @property
    def as_row_name(self) -> str:
        return self.task_spec.sub_label or self.task_spec.stmt or "[Unknown]"

    # -- pickling: only the stored fields travel -------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def __repr__(self) -> str:
        s = self._summary
        unit, scale = stats.select_unit(s.median)
        threads = self.task_spec.num_threads
        lines = [f"<benchkit.Measurement object at {hex(id(self))}>", self.task_spec.summarize()]
        if s.n > 1:
            lines.append(f"  Median: {s.median / scale:.2f} {unit}")
        else:
            lines.append(f"  {s.median / scale:.2f} {unit}")
        if s.n >= 4:
            lines.append(f"  IQR:    {s.iqr / scale:.2f} {unit} "
                         f"({s.p25 / scale:.2f} to {s.p75 / scale:.2f})")
        per = " per measurement" if s.n > 1 else ""
        lines.append(f"  {s.n} measurement{'s' if s.n > 1 else ''}, {self.number_per_run} runs"
                     f"{per}, {threads} thread{'s' if threads > 1 else ''}")
        lines.extend(self._warnings)
        return "\n".join(lines)

    @staticmethod
    def merge(measurements: Iterable["Measurement"]) -> list["Measurement"]:
        """Merge replicates (equal TaskSpec) into one Measurement each, at number_per_run=1.

        Metadata is dropped, since it may differ between replicates.
        """
        groups: dict[TaskSpec, list[Measurement]] = collections.defaultdict(list)
        for m in measurements:
            groups[m.task_spec].append(m)
        return [Measurement(1, [t for m in group for t in m.times], spec)
                for spec, group in groups.items()]


def _forward(name: str) -> property:
    return property(lambda self: getattr(self.task_spec, name),
                    doc=f"`task_spec.{name}`")


# Explicit properties, not __getattr__ forwarding, so a typo is an AttributeError.
for _name in TASKSPEC_FIELDS:
    if not hasattr(Measurement, _name):
        setattr(Measurement, _name, _forward(_name))
