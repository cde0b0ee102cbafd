"""What is measured: TaskSpec (the frozen, hashable description shown and stored with every
result) and Task (the spec with the code to run, its globals and its language: the one record
every engine, child process and suite entry takes)."""
from __future__ import annotations

import dataclasses
import enum
import textwrap
from typing import Any, Callable, Mapping, Protocol, runtime_checkable

from benchkit.errors import InvalidArgumentError


class Language(enum.Enum):
    """The language of a snippet (torch.utils.benchmark's values)."""

    PYTHON = 0
    CPP = 1

    @classmethod
    def parse(cls, language: "Language | str") -> "Language":
        """A Language from itself or one of 'py', 'python', 'cpp', 'c++'."""
        if language in (cls.PYTHON, "py", "python"):
            return cls.PYTHON
        if language in (cls.CPP, "cpp", "c++"):
            return cls.CPP
        raise InvalidArgumentError("language", language, "'python' or 'cpp'", where="Timer",
                                   message=f"language={language!r} is not a language; use "
                                           "'python' or 'cpp'.")


@dataclasses.dataclass(frozen=True)
class TaskSpec:
    """What a Timer measures. Two measurements with equal TaskSpecs are replicates."""

    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1
    elements: int | None = None     # work of one run, for throughput (elements/s)
    bytes: int | None = None        # bytes one run processes, for throughput (bytes/s)

    @property
    def title(self) -> str:
        """Best short name: label (or one-line stmt), with sub_label."""
        suffix = f": {self.sub_label}" if self.sub_label else ""
        if self.label is not None:
            return self.label + suffix
        if "\n" not in self.stmt:
            return self.stmt + suffix
        sub = f" ({self.sub_label})" if self.sub_label else ""
        return f"stmt:{sub}\n" + textwrap.indent(self.stmt, "  ")

    def setup_str(self) -> str:
        """The setup as shown under the title ('' when there is none)."""
        if not self.setup or self.setup == "pass":
            return ""
        if "\n" in self.setup:
            return "setup:\n" + textwrap.indent(self.setup, "  ")
        return f"setup: {self.setup}"

    def summarize(self) -> str:
        """The title block shown above a Measurement's statistics (control characters
        escaped: a spec may come from someone else's results file)."""
        from benchkit.core.text import printable
        sections = [self.title, self.description or "", self.setup_str()]
        return printable("\n".join(f"{s}\n" if "\n" in s else s for s in sections if s))

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (results files, job files for child processes); the throughput
        fields only where stated."""
        out = dataclasses.asdict(self)
        for name in THROUGHPUT_FIELDS:
            if out[name] is None:
                del out[name]
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "TaskSpec":
        """Inverse of to_dict; a missing setup is `pass`."""
        return cls(**{"setup": "pass", **d})


TASKSPEC_FIELDS = tuple(f.name for f in dataclasses.fields(TaskSpec))
THROUGHPUT_FIELDS = ("elements", "bytes")


@dataclasses.dataclass(frozen=True, eq=False)
class Task:
    """A snippet ready to measure anywhere: its spec, the code to run (the normalised source,
    or a zero-argument callable), its globals and its language. `Timer.task()` builds it;
    engines, worker processes, the callgrind collector and suites take it. `clock` is a
    Timer's own `timer=` (None: the default clock); it stays in this process."""

    spec: TaskSpec
    stmt: str | Callable[[], object]
    setup: str | Callable[[], object]
    globals: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    language: Language = Language.PYTHON
    clock: Callable[[], float] | None = None

    def with_threads(self, num_threads: int) -> "Task":
        """The same task measured with `num_threads` torch threads."""
        return dataclasses.replace(self, spec=dataclasses.replace(self.spec,
                                                                   num_threads=num_threads))

    @property
    def needs_torch(self) -> bool:
        """Python snippets that use `torch` without importing it or being given it."""
        from benchkit.core.measure.snippets import needs_torch
        return self.language is Language.PYTHON and needs_torch(self.stmt, self.setup,
                                                                self.globals)


@runtime_checkable
class Measurable(Protocol):
    """Anything that yields a Task: a Timer, or a user's own Timer-like object."""

    def task(self) -> Task:
        """The Task to measure."""


# Pickles name the public path, so they survive moves inside the package.
for _cls in (Language, TaskSpec, Task):
    _cls.__module__ = "benchkit"
