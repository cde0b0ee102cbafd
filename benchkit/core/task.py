"""TaskSpec: the frozen, hashable description of what is measured (everything but globals)."""
from __future__ import annotations

import dataclasses
import enum
import textwrap


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


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
        if not self.setup or self.setup == "pass":
            return ""
        if "\n" in self.setup:
            return "setup:\n" + textwrap.indent(self.setup, "  ")
        return f"setup: {self.setup}"

    def summarize(self) -> str:
        """The title block shown above a Measurement's statistics."""
        sections = [self.title, self.description or "", self.setup_str()]
        return "\n".join(f"{s}\n" if "\n" in s else s for s in sections if s)


TASKSPEC_FIELDS = tuple(f.name for f in dataclasses.fields(TaskSpec))
