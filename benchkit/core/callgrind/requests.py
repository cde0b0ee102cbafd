"""What an instruction-count collection is asked to do, as typed records (pure): which tasks
(`CountRequest`), how (`CallgrindOptions`, built once at the edge and passed down as one
object), the determinism controls (`CollectorControls`), and the names of callgrind's dumps
(`DumpName`, the one build/parse pair used by the Python server and the C++ library alike).

Standard library only: the callgrind server imports this under valgrind.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from benchkit.core.measure.task import Task

DUMP_PREFIX = "benchkit"
STMT, BASELINE = "stmt", "baseline"
CPP_TAG = "cpp"     # the dump-name tag of C++ snippet programs (one task each)


@dataclasses.dataclass(frozen=True)
class DumpName:
    """The name of one callgrind dump: `benchkit:<tag>:<task>:<kind>:<repeat>` (kind is
    `stmt` or `baseline`). `tag` names the job (the collector's batch position, or `cpp`)."""

    tag: str
    task: str
    kind: str
    repeat: int

    def __str__(self) -> str:
        return f"{DUMP_PREFIX}:{self.tag}:{self.task}:{self.kind}:{self.repeat}"

    @property
    def slot(self) -> tuple[str, int]:
        """(kind, repeat): which measurement of its task the dump holds."""
        return self.kind, self.repeat

    @staticmethod
    def c_format(tag: str, task: str) -> str:
        """A printf format of the dump names of one task, with %s for the kind and %d for
        the repeat (the C++ snippet library formats its dump names with it)."""
        return f"{DUMP_PREFIX}:{tag}:{task}:%s:%d"

    @classmethod
    def parse(cls, trigger: str | None) -> "DumpName | None":
        """The dump name in a callgrind.out trigger line ('Client Request: benchkit:...'),
        or None for a dump benchkit did not name."""
        if not trigger or f"{DUMP_PREFIX}:" not in trigger:
            return None
        parts = trigger[trigger.index(f"{DUMP_PREFIX}:"):].split(":")
        if len(parts) != 5 or not parts[4].isdigit():
            return None
        return cls(parts[1], parts[2], parts[3], int(parts[4]))


@dataclasses.dataclass(frozen=True)
class CollectorControls:
    """Determinism controls that are on by default; benchmarks/perf_layouts.py switches them
    off one by one to measure what each removes, and adds environment variables (an empty
    bytecode cache) to the counted process."""

    fixed_paths: bool = True          # benchkit through a link, the virtualenv mirrored
    prewarm: bool = True              # bytecode caches written natively first
    own_thread: bool = True           # each snippet in its own thread and malloc arena
    child_environment: tuple[tuple[str, str], ...] = ()


@dataclasses.dataclass(frozen=True)
class CallgrindOptions:
    """How to collect: cache simulation, a per-collection timeout, whether to keep the
    callgrind.out files, memory layouts, parallel jobs, a tqdm-like progress bar."""

    cache_sim: bool = False
    timeout: float | None = None
    retain_out_file: bool = False
    layouts: int = 1
    jobs: int = 1
    progress: Any = dataclasses.field(default=None, compare=False)
    controls: CollectorControls = CollectorControls()

    def child_environment(self) -> Mapping[str, str]:
        """Extra environment variables for the counted process (none by default)."""
        return dict(self.controls.child_environment)


@dataclasses.dataclass(frozen=True)
class CountRequest:
    """One task to count: `number` runs of its stmt, `repeats` times, and the empty-loop
    baseline when `collect_baseline`."""

    task: Task
    number: int = 100
    repeats: int = 1
    collect_baseline: bool = True
