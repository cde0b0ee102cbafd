"""Compare: tables of many Measurements (model in table.py, rendering in render.py)."""
from __future__ import annotations

from typing import Iterable

from benchkit.core.compare.table_render import render_markdown, render_table
from benchkit.core.compare.table import Colorize, build_tables
from benchkit.errors import BenchkitError
from benchkit.core.measure.measurement import Measurement
from benchkit.core.measure.memory import MemoryStats
from benchkit.core.compare.memory_table import build_memory_tables

__all__ = ["Colorize", "Compare"]


class Compare:
    """Tables of Measurements: one per label, rows by sub_label (grouped by thread count,
    env shown when it differs), columns by description. MemoryStats (collect_memory) may be
    given too: they get tables of their own in the same layout, bytes and allocations per
    run, after the tables of times."""

    def __init__(self, results: Iterable[Measurement | MemoryStats]) -> None:
        self._results: list[Measurement] = []
        self._memory: list[MemoryStats] = []
        self._colorize = Colorize.NONE
        self._trim_significant_figures = False
        self._highlight_warnings = False
        self.extend_results(results)

    def extend_results(self, results: Iterable[Measurement | MemoryStats]) -> None:
        """Add Measurements (or MemoryStats) to the tables."""
        results = list(results)
        for r in results:
            if not isinstance(r, (Measurement, MemoryStats)):
                raise BenchkitError(f"Compare takes Measurements (or MemoryStats), got "
                                    f"{type(r).__name__}: {r!r}")
        self._results.extend(r for r in results if isinstance(r, Measurement))
        self._memory.extend(r for r in results if isinstance(r, MemoryStats))

    def trim_significant_figures(self) -> None:
        """Show each value to its trustworthy significant figures only."""
        self._trim_significant_figures = True

    def colorize(self, rowwise: bool = False) -> None:
        """Colour cells by how they compare with the best of their column (or row)."""
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self) -> None:
        """Mark cells whose measurement has a high IQR."""
        self._highlight_warnings = True

    def _models(self):
        models = []
        if self._results:
            models += build_tables(self._results, self._colorize,
                                   self._trim_significant_figures, self._highlight_warnings)
        if self._memory:
            models += build_memory_tables(self._memory, self._colorize)
        return models

    def tables(self) -> list[str]:
        """One rendered table per label (times first, then memory)."""
        return [render_table(m) for m in self._models()]

    def markdown(self) -> str:
        """The same tables as markdown (GitHub tables, no colour), for a pull-request
        comment. Not in torch.utils.benchmark."""
        return "\n".join(render_markdown(m) for m in self._models())

    def __str__(self) -> str:
        return "\n".join(self.tables())

    def print(self) -> None:
        """Print the tables."""
        print(str(self))
