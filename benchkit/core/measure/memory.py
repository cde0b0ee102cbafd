"""MemoryStats: allocations, bytes, peak and what stays behind, per run of a snippet. Pure.

The counts come from two blocks of the snippet's loop in one worker process, of 2 x `number`
runs and of `number` runs, both after a warm-up: per run is their difference divided by
`number`, so setup, the loop itself and what the last run leaves in its locals cancel
exactly.
"""
from __future__ import annotations

import dataclasses
import textwrap
from typing import Any

from benchkit.core.enums import TextEnum
from benchkit.core.measure.task import TaskSpec


class Source(TextEnum):
    """Where an allocation was served: Python's allocator (objects, including the small ones
    pymalloc serves from its arenas without malloc) or the native heap (malloc and friends,
    operator new, NumPy's and torch's CPU buffers)."""

    PYTHON = "python"
    NATIVE = "native"


@dataclasses.dataclass(frozen=True)
class DeviceCounts:
    """What one counted block did on an accelerator, from torch's caching allocator:
    allocations, frees, bytes allocated and freed, and the peak above the block's start."""

    allocations: float      # counts of a block are whole numbers; per run they may not be
    frees: float
    bytes: float
    freed_bytes: float
    peak: float

    def to_dict(self) -> dict[str, float]:
        """JSON form."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "DeviceCounts":
        """Inverse of to_dict."""
        return cls(**{f.name: int(d[f.name]) for f in dataclasses.fields(cls)})


@dataclasses.dataclass(frozen=True)
class BlockCounts:
    """What one counted block did, per source: allocations, frees, bytes requested and bytes
    released; `peak` is the highest live total (requested bytes) above the block's start."""

    allocations: dict[Source, int]
    frees: dict[Source, int]
    bytes: dict[Source, int]
    freed_bytes: dict[Source, int]
    peak: int
    untracked_frees: int = 0       # blocks freed whose size was never seen (allocated early)
    device: DeviceCounts | None = None     # on an accelerator, torch's allocator

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        per = {f: {s.value: getattr(self, f)[s] for s in Source}
               for f in ("allocations", "frees", "bytes", "freed_bytes")}
        out = {**per, "peak": self.peak, "untracked_frees": self.untracked_frees}
        if self.device is not None:
            out["device"] = self.device.to_dict()
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "BlockCounts":
        """Inverse of to_dict."""
        per = {f: {s: int(d[f][s.value]) for s in Source}
               for f in ("allocations", "frees", "bytes", "freed_bytes")}
        device = DeviceCounts.from_dict(d["device"]) if d.get("device") else None
        return cls(**per, peak=int(d["peak"]), untracked_frees=int(d.get("untracked_frees", 0)),
                   device=device)


class SiteKind(TextEnum):
    """What an allocation site names: the Python line that allocated (the innermost Python
    frame: a line of stmt, or of a function it called) or the native function that called
    the allocator."""

    PYTHON = "python line"
    NATIVE = "native function"


@dataclasses.dataclass(frozen=True)
class AllocationSite:
    """One place that allocates, per run: allocations made there and bytes requested."""

    kind: SiteKind
    location: str       # "stmt:1 l = [None] * 1000", "suite.py:12 in f", "PyList_New"
    allocations: float
    bytes: float

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"kind": self.kind.value, "location": self.location,
                "allocations": self.allocations, "bytes": self.bytes}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "AllocationSite":
        """Inverse of to_dict."""
        return cls(SiteKind(d["kind"]), str(d["location"]), float(d["allocations"]),
                   float(d["bytes"]))


@dataclasses.dataclass(frozen=True)
class SourceStats:
    """Per run, one source: allocations, frees, bytes requested, bytes retained."""

    allocations: float
    frees: float
    bytes: float
    retained_bytes: float


@dataclasses.dataclass(repr=False, eq=False, frozen=True)
class MemoryStats:
    """Memory of `number_per_run` runs of a snippet's stmt (setup and warm-up excluded),
    counted by benchkit's counting allocator in a worker process: exact and repeatable.

    `long` and `short` are the two counted blocks (2 x `number_per_run` runs and
    `number_per_run` runs), `empty` a block of no runs (what reading the counts costs);
    the properties give per-run figures. `sites` (collected on request) are the top
    allocation sites per run, from memray's stacks over blocks of the same sizes."""

    task_spec: TaskSpec
    number_per_run: int
    long: BlockCounts
    short: BlockCounts
    empty: BlockCounts
    metadata: dict[str, Any] = dataclasses.field(default_factory=dict)
    sites: tuple[AllocationSite, ...] = ()

    def top_sites(self, kind: SiteKind, n: int = 5) -> list[AllocationSite]:
        """The `n` sites of `kind` that request the most bytes per run."""
        return sorted((s for s in self.sites if s.kind is kind),
                      key=lambda s: (-s.bytes, -s.allocations, s.location))[:n]

    def _per_run(self, field: str, source: Source | None) -> float:
        sources = [source] if source else list(Source)
        total = sum(getattr(self.long, field)[s] - getattr(self.short, field)[s]
                    for s in sources)
        return total / self.number_per_run

    def source(self, source: Source) -> SourceStats:
        """Per-run figures of one source."""
        return SourceStats(self._per_run("allocations", source), self._per_run("frees", source),
                           self._per_run("bytes", source), self._retained(source))

    def _retained(self, source: Source | None) -> float:
        return self._per_run("bytes", source) - self._per_run("freed_bytes", source)

    @property
    def allocations_per_run(self) -> float:
        """Allocations one run makes (every allocator call: Python objects and native)."""
        return self._per_run("allocations", None)

    @property
    def frees_per_run(self) -> float:
        """Blocks one run frees."""
        return self._per_run("frees", None)

    @property
    def bytes_per_run(self) -> float:
        """Bytes one run requests."""
        return self._per_run("bytes", None)

    @property
    def retained_bytes_per_run(self) -> float:
        """Bytes one run leaves allocated (requested minus released): a leak is positive."""
        return self._retained(None)

    @property
    def peak_bytes(self) -> int:
        """The highest live total (bytes requested) above the loop's start, over the
        `number_per_run` runs of the shorter block (setup and counting excluded)."""
        return max(0, self.short.peak - self.empty.peak)

    def device_per_run(self) -> DeviceCounts | None:
        """Device memory per run (allocations, frees, bytes, freed bytes; peak above the
        loop's start over the shorter block), or None where no accelerator was counted."""
        long, short = self.long.device, self.short.device
        if long is None or short is None:
            return None
        n = self.number_per_run

        def per(field: str) -> float:
            return (getattr(long, field) - getattr(short, field)) / n
        return DeviceCounts(per("allocations"), per("frees"), per("bytes"), per("freed_bytes"),
                            short.peak)

    def to_dict(self) -> dict[str, Any]:
        """JSON form (results files)."""
        return {"task_spec": self.task_spec.to_dict(), "number_per_run": self.number_per_run,
                "long": self.long.to_dict(), "short": self.short.to_dict(),
                "empty": self.empty.to_dict(),
                "metadata": self.metadata,
                **({"sites": [s.to_dict() for s in self.sites]} if self.sites else {})}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "MemoryStats":
        """Inverse of to_dict."""
        return cls(TaskSpec.from_dict(d["task_spec"]), int(d["number_per_run"]),
                   BlockCounts.from_dict(d["long"]), BlockCounts.from_dict(d["short"]),
                   BlockCounts.from_dict(d["empty"]),
                   dict(d.get("metadata") or {}),
                   tuple(AllocationSite.from_dict(s) for s in d.get("sites") or ()))

    def __repr__(self) -> str:
        lines = [f"<benchkit.MemoryStats object at {hex(id(self))}>",
                 self.task_spec.summarize()]
        lines.append(f"  per run (blocks of {2 * self.number_per_run:,} and "
                     f"{self.number_per_run:,} runs):")
        rows = [("allocations", f"{self.allocations_per_run:,.2f}"),
                ("frees", f"{self.frees_per_run:,.2f}"),
                ("bytes", f"{format_bytes(self.bytes_per_run)}"),
                ("retained", f"{format_bytes(self.retained_bytes_per_run)}"),
                ("peak", f"{format_bytes(self.peak_bytes)} above the loop's start")]
        lines += [f"    {name + ':':<13}{value}" for name, value in rows]
        split = ", ".join(f"{s.value} {self.source(s).allocations:,.2f} allocations / "
                          f"{format_bytes(self.source(s).bytes)}" for s in Source)
        lines.append(textwrap.indent(f"by source: {split}", "  "))
        device = self.device_per_run()
        if device is not None:
            lines.append(f"  device: {device.allocations:,.2f} allocations / "
                         f"{format_bytes(device.bytes)} per run, peak "
                         f"{format_bytes(device.peak)} above the loop's start")
        for kind in SiteKind:
            top = self.top_sites(kind)
            if top:
                lines.append(f"  top {kind.value}s (per run):")
                lines += [f"    {format_bytes(s.bytes):>10} {s.allocations:>9,.2f} allocations  "
                          f"{s.location}" for s in top]
        return "\n".join(lines)


def format_bytes(n: float) -> str:
    """1536 -> '1.5 KiB'; exact below 1 KiB ('100 B', '0 B', '-8 B')."""
    sign = "-" if n < 0 else ""
    n = abs(n)
    if n < 1024:
        return f"{sign}{n:,.4g} B" if n != int(n) else f"{sign}{int(n):,} B"
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        n /= 1024
        if n < 1024 or unit == "TiB":
            return f"{sign}{n:,.1f} {unit}"
    raise AssertionError("unreachable")
