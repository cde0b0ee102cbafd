"""Compare's tables for MemoryStats: the same layout as for times (a table per label, rows
by sub_label in thread-count groups, columns by description), each cell the bytes and
allocations of one run. Pure: render with table_render.render_table."""
from __future__ import annotations

from typing import Sequence

from benchkit.core.compare.table import Cell, Colorize, Grid, Row, TableModel, color_for
from benchkit.core.measure.memory import MemoryStats, format_bytes
from benchkit.core.text import printable

NOTE = ("Memory per run: bytes requested (allocations), exact; "
        "'+N retained' where a run leaves bytes allocated.")


def cell_text(m: MemoryStats) -> str:
    """'7.8 KiB (2)', with ' +1.0 KiB retained' where a run keeps memory."""
    text = f"{format_bytes(m.bytes_per_run)} ({m.allocations_per_run:,.4g})"
    if m.retained_bytes_per_run > 0:
        text += f" +{format_bytes(m.retained_bytes_per_run)} retained"
    return text


def build_memory_table(items: Sequence[MemoryStats],
                       colorize: Colorize = Colorize.NONE) -> TableModel:
    """One table for MemoryStats sharing a label (a repeated row and column: the last)."""
    grid = Grid.of(items, lambda m: m.task_spec.num_threads, lambda m: m.task_spec.env,
                   lambda m: m.task_spec.sub_label or m.task_spec.stmt or "[Unknown]",
                   lambda m: m.task_spec.description)
    texts = {id(m): cell_text(m) for m in items}
    widths = {col: max(len(texts[id(grid.cells[k][col])]) for k in grid.row_keys
                       if col in grid.cells[k]) for col in grid.columns}
    rows: list[Row] = []
    for group in grid.groups:
        prior_env: str | None = ""
        for position, key in enumerate(group):
            present = grid.cells[key]
            cells = []
            for col in grid.columns:
                m = present.get(col)
                if m is None:
                    cells.append(Cell(" " * widths[col]))
                    continue
                color = None
                if colorize is Colorize.ROWWISE:
                    color = color_for(m.bytes_per_run, min(x.bytes_per_run
                                                           for x in present.values()))
                elif colorize is Colorize.COLUMNWISE:
                    color = color_for(m.bytes_per_run, min(
                        grid.cells[k][col].bytes_per_run for k in group if col in grid.cells[k]))
                cells.append(Cell(texts[id(m)].rjust(widths[col]), color))
            rows.append(Row(grid.row_name(key, prior_env), tuple(cells),
                            key[0] if position == 0 else None))
            prior_env = key[1]
    label = items[0].task_spec.label
    title = "memory per run" if label is None else f"{printable(label)}: memory per run"
    return TableModel(title, tuple(printable(c) for c in grid.columns), tuple(rows), "B",
                      False, NOTE)


def build_memory_tables(items: Sequence[MemoryStats],
                        colorize: Colorize = Colorize.NONE) -> list[TableModel]:
    """One TableModel per label, in first-seen label order."""
    by_label: dict[str | None, list[MemoryStats]] = {}
    for m in items:
        by_label.setdefault(m.task_spec.label, []).append(m)
    return [build_memory_table(group, colorize) for group in by_label.values()]
