"""Compare: tables of many Measurements (model in table.py, rendering in render.py)."""
from __future__ import annotations

from typing import Iterable

from benchkit.core.table_render import render_table
from benchkit.core.table import Colorize, build_tables
from benchkit.errors import BenchkitError
from benchkit.core.measurement import Measurement

__all__ = ["Colorize", "Compare"]


class Compare:
    """Tables of Measurements: one per label, rows by sub_label (grouped by thread count,
    env shown when it differs), columns by description."""

    def __init__(self, results: Iterable[Measurement]) -> None:
        self._results: list[Measurement] = []
        self._colorize = Colorize.NONE
        self._trim_significant_figures = False
        self._highlight_warnings = False
        self.extend_results(results)

    def extend_results(self, results: Iterable[Measurement]) -> None:
        """Add Measurements to the tables."""
        results = list(results)
        for r in results:
            if not isinstance(r, Measurement):
                raise BenchkitError(f"Compare takes Measurements, got {type(r).__name__}: {r!r}")
        self._results.extend(results)

    def trim_significant_figures(self) -> None:
        """Show each value to its trustworthy significant figures only."""
        self._trim_significant_figures = True

    def colorize(self, rowwise: bool = False) -> None:
        """Colour cells by how they compare with the best of their column (or row)."""
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self) -> None:
        """Mark cells whose measurement has a high IQR."""
        self._highlight_warnings = True

    def tables(self) -> list[str]:
        """One rendered table per label."""
        if not self._results:
            return []
        models = build_tables(self._results, self._colorize, self._trim_significant_figures,
                              self._highlight_warnings)
        return [render_table(m) for m in models]

    def __str__(self) -> str:
        return "\n".join(self.tables())

    def print(self) -> None:
        """Print the tables."""
        print(str(self))
