"""Typed records that travel between benchkit's parts and into results files: a benchmark's
identity and gates, and the `ab` section of an interleaved A/B. Each has one build and one
parse (to/from the JSON a results file holds). Pure."""
from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from benchkit.core.metrics.gates import Gate
from benchkit.core.decisions.sequential import SequentialPlan
from benchkit.core.enums import TextEnum
from benchkit.core.measure.task import Task


class Side(TextEnum):
    """The two sides of an A/B."""

    BASE = "base"
    NEW = "new"


@dataclasses.dataclass(frozen=True)
class Benchmark:
    """A named benchmark: its name in a suite (`file::function`), a pytest node id or a
    results file, its regression gates, and for pytest its group and extra_info. `task` is
    what to measure and `file` the suite file defining it, where known (a suite entry);
    `side` marks one side of an A/B."""

    name: str
    gates: tuple[Gate, ...] = ()
    task: Task | None = dataclasses.field(default=None, compare=False, repr=False)
    group: str | None = None
    extra_info: Mapping[str, Any] | None = None     # pytest's; a dict there, None elsewhere
    side: Side | None = None
    file: str | None = dataclasses.field(default=None, compare=False)
    params: Mapping[str, Any] | None = None     # a grid point's values (core.params.stored)
    # other names it answers to in -k: an asv benchmark's `name(values)`, as asv spells it
    aliases: tuple[str, ...] = dataclasses.field(default=(), compare=False)
    # what the benchmark itself fixes (asv's `number` and `timeout` attributes): runs per
    # block instead of benchkit's autorange, and seconds a worker may take per request
    number: int | None = dataclasses.field(default=None, compare=False)
    timeout: float | None = dataclasses.field(default=None, compare=False)

    def selector(self) -> str:
        """What `-k` matches: the name, then its aliases, one per line."""
        return "\n".join((self.name, *self.aliases))

    def with_threads(self, num_threads: int) -> "Benchmark":
        """The same benchmark with its task measured at `num_threads` torch threads."""
        return dataclasses.replace(self, task=self.task.with_threads(num_threads))

    def metadata(self) -> dict[str, Any]:
        """What a Measurement's or CallgrindStats' metadata holds about the benchmark."""
        out: dict[str, Any] = {"benchmark": self.name, "gates": [str(g) for g in self.gates]}
        if self.extra_info is not None:
            out["group"] = self.group
            out["extra_info"] = dict(self.extra_info)
        if self.side is not None:
            out["side"] = self.side.value
        if self.params is not None:
            out["params"] = dict(self.params)
        return out

    @classmethod
    def of(cls, item: Any) -> "Benchmark":
        """The benchmark a Measurement/CallgrindStats belongs to: from its metadata, else
        named by its task (label or stmt, sub_label, description)."""
        meta = _metadata(item)
        side = meta.get("side")
        return cls(benchmark_name(item), tuple(Gate.parse(g) for g in meta.get("gates") or []),
                   group=meta.get("group"), extra_info=meta.get("extra_info"),
                   side=Side(side) if side in ("base", "new") else None,
                   params=meta.get("params"))


def _metadata(item: Any) -> Mapping[str, Any]:
    meta = getattr(item, "metadata", None) or {}
    return meta if isinstance(meta, dict) else {}


def benchmark_name(item: Any) -> str:
    """Name of a Measurement/CallgrindStats: its suite name, else its task's label (or
    stmt), sub_label and description."""
    name = _metadata(item).get("benchmark")
    if name:
        return name
    spec = item.task_spec
    parts = [spec.label or spec.stmt, spec.sub_label, spec.description]
    return " / ".join(p for p in parts if p)


@dataclasses.dataclass(frozen=True)
class AbSide:
    """How one side of an A/B ran: its interpreter, extra environment variables, the git
    revision installed (if any) and its worker's environment fingerprint."""

    python: str | None
    env: Mapping[str, str]
    rev: str | None
    environment: Mapping[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """The JSON form in a results file."""
        out = {"python": self.python} if self.python is not None else {}
        return {**out, "env": dict(self.env), "rev": self.rev,
                "environment": dict(self.environment)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "AbSide":
        """Inverse of to_dict."""
        return cls(d.get("python"), dict(d.get("env") or {}), d.get("rev"),
                   dict(d.get("environment") or {}))


@dataclasses.dataclass(frozen=True)
class AbRecord:
    """The `ab` section of a results file: an interleaved A/B's design and both sides."""

    rounds: int | None
    trials: int | None
    trial_time: float | None
    seed: int | None
    sides: Mapping[Side, AbSide]
    only_base: tuple[str, ...] = ()
    only_new: tuple[str, ...] = ()
    design: str = "interleaved"
    sequential: SequentialPlan | None = None    # None: every benchmark ran all rounds

    def to_dict(self) -> dict[str, Any]:
        """The `ab` section of a results file."""
        sizes = {"rounds": self.rounds, "trials": self.trials, "trial_time": self.trial_time}
        return {"design": self.design, **{k: v for k, v in sizes.items() if v is not None},
                "seed": self.seed,
                "sides": {side.value: self.sides[side].to_dict() for side in Side},
                "only_base": list(self.only_base), "only_new": list(self.only_new),
                **({"sequential": self.sequential.to_dict()} if self.sequential else {})}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "AbRecord":
        """Inverse of to_dict (absent fields stay absent)."""
        return cls(rounds=d.get("rounds"), trials=d.get("trials"),
                   trial_time=d.get("trial_time"), seed=d.get("seed"),
                   sides={side: AbSide.from_dict(d["sides"][side.value]) for side in Side},
                   only_base=tuple(d.get("only_base") or ()),
                   only_new=tuple(d.get("only_new") or ()),
                   design=d.get("design", "interleaved"),
                   sequential=(SequentialPlan.from_dict(d["sequential"])
                               if d.get("sequential") else None))


class Phase(TextEnum):
    """Where a benchmark failed."""

    LOAD = "load"
    WALL_TIME = "wall time"
    INSTRUCTIONS = "instruction counts"
    MEMORY = "memory"
    VALUE = "value"             # an asv track_, mem_ or peakmem_ benchmark's value


class FailureKind(TextEnum):
    """How a benchmark failed."""

    RAISED = "raised"           # the snippet (or the function returning it) raised
    CRASHED = "crashed"         # its process died
    TIMED_OUT = "timed out"     # it did not finish within --timeout
    SKIPPED = "skipped"         # not measured by the suite's own rule (asv: setup raised
                                # NotImplementedError); not a failure of the run


@dataclasses.dataclass(frozen=True)
class Failure:
    """A benchmark that could not be measured, kept in the results file: its name, its suite
    file, the phase and how it failed, and the error."""

    benchmark: str
    phase: Phase
    kind: FailureKind
    error: str
    file: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form in a results file."""
        return {"benchmark": self.benchmark, "file": self.file, "phase": self.phase.value,
                "kind": self.kind.value, "error": self.error}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Failure":
        """Inverse of to_dict."""
        return cls(d["benchmark"], Phase(d["phase"]), FailureKind(d["kind"]), d["error"],
                   d.get("file"))

    def summary(self) -> str:
        """One line: the benchmark, its file, the phase and the error's first line."""
        first = (self.error.strip().splitlines() or [""])[0]
        where = f" ({self.file})" if self.file else ""
        return f"{self.benchmark}{where}: {self.kind.value} in {self.phase.value}: {first}"
