"""Measurement: raw block times are stored; every statistic is derived from them. Pure."""
from __future__ import annotations

import collections
import dataclasses
import functools
import statistics
from typing import Any, Iterable, Sequence

from benchkit.core.measure import stats
from benchkit.core.measure import throughput
from benchkit.core.measure.task import TASKSPEC_FIELDS, TaskSpec


@dataclasses.dataclass(frozen=True)
class Chunk:
    """Blocks timed back to back (`times`, seconds per block), after a speed probe that took
    `probe` seconds: how fast the machine ran just then."""

    probe: float
    times: tuple[float, ...]


@dataclasses.dataclass(frozen=True)
class ProcessSample:
    """The blocks one worker process timed, in chunks: `chunks[k]` blocks in chunk k, each
    chunk preceded by a speed probe that took `probes[k]` seconds (empty if not taken).
    `layout` numbers the process's reproducible layout (hash seed, stack position): processes
    of two runs with the same layout started alike and are compared as a pair."""

    chunks: tuple[int, ...]
    probes: tuple[float, ...] = ()
    layout: int | None = None

    @property
    def blocks(self) -> int:
        """Blocks timed by the process, in all its chunks."""
        return sum(self.chunks)

    @classmethod
    def from_chunks(cls, chunks: Sequence[Chunk], layout: int | None = None
                    ) -> tuple[list[float], "ProcessSample"]:
        """(block times in order, the sample describing them) of one process's chunks."""
        times = [t for c in chunks for t in c.times]
        return times, cls(tuple(len(c.times) for c in chunks), tuple(c.probe for c in chunks),
                          layout)


@dataclasses.dataclass(repr=False, eq=True)
class Measurement:
    """The result of a Timer measurement: `raw_times[i]` is the time of one block of
    `number_per_run` runs. Picklable; needs neither torch nor the original globals.

    `processes` is None for a measurement taken in one process (blocked_autorange and
    friends). Measurements sampled across worker processes keep one ProcessSample per
    process, in the order of `raw_times`.
    """

    number_per_run: int
    raw_times: list[float]
    task_spec: TaskSpec
    metadata: dict[Any, Any] | None = None
    processes: list[ProcessSample] | None = None

    def __post_init__(self) -> None:
        if self.processes is not None:
            blocks = sum(p.blocks for p in self.processes)
            if blocks != len(self.raw_times):
                raise ValueError(f"processes hold {blocks} blocks but raw_times has "
                                 f"{len(self.raw_times)}")

    # -- derived statistics -------------------------------------------------------------
    @property
    def times(self) -> list[float]:
        """Per-run times in seconds (block time / number_per_run)."""
        return [t / self.number_per_run for t in self.raw_times]

    def process_times(self) -> list[list[float]]:
        """Per-run times grouped by process (one group when taken in one process)."""
        times = self.times
        if self.processes is None:
            return [times]
        out, start = [], 0
        for p in self.processes:
            out.append(times[start:start + p.blocks])
            start += p.blocks
        return out

    def chunk_times(self) -> list[list[list[float]]]:
        """Per-run times grouped by process, then by chunk."""
        if self.processes is None:
            return [[self.times]]
        out = []
        for p, times in zip(self.processes, self.process_times()):
            chunks, start = [], 0
            for size in p.chunks:
                chunks.append(times[start:start + size])
                start += size
            out.append(chunks)
        return out

    @property
    def num_processes(self) -> int:
        """The processes the blocks were timed in (1 for in-process measurements)."""
        return 1 if self.processes is None else len(self.processes)

    @functools.cached_property
    def _summary(self) -> stats.Summary:
        return stats.summarize(self.times)

    @property
    def median(self) -> float:
        """Median per-run time, seconds."""
        return self._summary.median

    @property
    def mean(self) -> float:
        """Mean per-run time, seconds."""
        return self._summary.mean

    @property
    def iqr(self) -> float:
        """Interquartile range of the per-run times, seconds."""
        return self._summary.iqr

    @property
    def significant_figures(self) -> int:
        """Trustworthy significant figures of the median."""
        return stats.significant_figures(self.times, self.median)

    @property
    def _warnings(self) -> tuple[str, ...]:
        return stats.iqr_warnings(self._summary)

    @property
    def has_warnings(self) -> bool:
        """Whether the IQR is at least 10 % of the median."""
        return bool(self._warnings)

    def meets_confidence(self, threshold: float = stats.IQR_WARN_THRESHOLD) -> bool:
        """Whether IQR / median is below `threshold`."""
        return self.iqr / self.median < threshold

    # -- task fields ----------------------------------------------------------------------
    @property
    def title(self) -> str:
        """The task's title (label or stmt, with sub_label)."""
        return self.task_spec.title

    @property
    def env(self) -> str:
        """The task's env, or 'Unspecified env'."""
        return "Unspecified env" if self.task_spec.env is None else self.task_spec.env

    @property
    def as_row_name(self) -> str:
        """The row name in a Compare table: sub_label, else stmt."""
        return self.task_spec.sub_label or self.task_spec.stmt or "[Unknown]"

    # -- pickling: only the stored fields travel -------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update({"processes": None, **state})

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
        rates = throughput.rates(self.task_spec, s.median)
        if rates:
            lines.append(f"  Throughput: {', '.join(rates)}")
        per = " per measurement" if s.n > 1 else ""
        where = ""
        if self.processes is not None:
            n = len(self.processes)
            where = f" in {n} process{'es' if n > 1 else ''}"
        plural = "s" if threads > 1 else ""
        lines.append(f"  {s.n} measurement{'s' if s.n > 1 else ''}{where}, "
                     f"{self.number_per_run} runs{per}, {threads} thread{plural}")
        lines.extend(self._warnings)
        return "\n".join(lines)

    @staticmethod
    def merge(measurements: Iterable["Measurement"]) -> list["Measurement"]:
        """Merge replicates (equal TaskSpec) into one Measurement each, at number_per_run=1.

        Metadata is dropped, since it may differ between replicates. Process structure is
        kept when every replicate has it (a replicate's processes stay separate processes);
        pooling in-process measurements gives an in-process measurement, as in torch.
        """
        groups: dict[TaskSpec, list[Measurement]] = collections.defaultdict(list)
        for m in measurements:
            groups[m.task_spec].append(m)
        out = []
        for spec, group in groups.items():
            processes = None
            if all(m.processes is not None for m in group):
                processes = [p for m in group for p in m.processes]
            out.append(Measurement(1, [t for m in group for t in m.times], spec,
                                   processes=processes))
        return out


def _forward(name: str) -> property:
    return property(lambda self: getattr(self.task_spec, name),
                    doc=f"`task_spec.{name}`")


# Explicit properties, not __getattr__ forwarding, so a typo is an AttributeError.
for _name in TASKSPEC_FIELDS:
    if not hasattr(Measurement, _name):
        setattr(Measurement, _name, _forward(_name))


# Pickles name the public path, so they survive moves inside the package.
for _cls in (ProcessSample, Measurement):
    _cls.__module__ = "benchkit"


def probe_relative_times(m: Any) -> list[list[float]] | None:
    """Per process, each run's time over the speed probe taken just before its chunk: times
    in units of the machine's speed at that moment. None unless every process has probes."""
    if not m.processes or not all(p.probes and min(p.probes) > 0 for p in m.processes):
        return None
    return [[t / probe for probe, chunk in zip(sample.probes, chunks) for t in chunk]
            for sample, chunks in zip(m.processes, m.chunk_times())]


def speed_relative(m: Any) -> float | None:
    """The median of probe_relative_times: a machine that ran 1.6x slower for a while (seen
    on this VM) does not look like a step. None without probes."""
    relative = probe_relative_times(m)
    flat = [t for process in relative or [] for t in process]
    return statistics.median(flat) if flat else None


def pooled_measurement(ms: Sequence[Measurement], reference: float | None) -> Measurement:
    """One Measurement holding the processes of several (per-run times). With speed probes
    on every process, times are taken at the `reference` probe's speed: a commit measured
    while the machine ran slow counts at the speed of the others."""
    relative = [probe_relative_times(m) for m in ms]
    scale = reference is not None and None not in relative
    times, processes = [], []
    for m, over_probes in zip(ms, relative):
        per_process = ([[t * reference for t in process] for process in over_probes]
                       if scale else m.process_times())
        for sample, process_times in zip(m.processes, per_process):
            times += process_times
            processes.append(ProcessSample(sample.chunks, (), None))
    return Measurement(1, times, ms[0].task_spec, None, processes)
