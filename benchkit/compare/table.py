"""Pure table model behind Compare: grouping, units, significant figures, colour decisions.

Nothing here renders or prints; `render.py` turns a TableModel into text.
"""
from __future__ import annotations

import dataclasses
import enum
import math
from typing import Sequence

from benchkit import stats
from benchkit.measurement import Measurement


class Colorize(enum.Enum):
    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


@dataclasses.dataclass(frozen=True)
class Cell:
    text: str
    color: str | None = None   # best | good | bad | very_bad


@dataclasses.dataclass(frozen=True)
class Row:
    name: str                       # "(env)" prefix included when envs differ
    cells: tuple[Cell | None, ...]  # one per column; None where no measurement
    thread_group: int | None        # set on the first row of each thread-count group


@dataclasses.dataclass(frozen=True)
class TableModel:
    label: str | None
    columns: tuple[str, ...]
    rows: tuple[Row, ...]
    unit: str
    has_warnings: bool


def _ordered_unique(items):
    return list(dict.fromkeys(items))


def color_for(value: float, best: float) -> str | None:
    if value <= best * 1.01 or value <= best + 100e-9:
        return "best"
    if value <= best * 1.1:
        return "good"
    if value >= best * 5:
        return "very_bad"
    if value >= best * 2:
        return "bad"
    return None


def _column_format(results: Sequence[Measurement], scale: float, trim: bool):
    """Fixed-point width/decimals shared by a column, as torch's Compare chooses them."""
    leading = {id(m): (math.ceil(math.log10(m.median / scale)) if m.median > 0 else 1)
               for m in results}
    unit_digits = max(leading.values())
    if trim:
        decimals = min(max(m.significant_figures - leading[id(m)], 0) for m in results)
    else:
        decimals = 1
    width = max(unit_digits, 1) + decimals + (1 if decimals else 0)
    return width, decimals


def build_table(results: Sequence[Measurement], colorize: Colorize = Colorize.NONE,
                trim_significant_figures: bool = False,
                highlight_warnings: bool = False) -> TableModel:
    """One table for measurements sharing a label (replicates already merged)."""
    unit, scale = stats.select_unit(min(m.median for m in results))
    row_keys = _ordered_unique((m.num_threads, m.env, m.as_row_name) for m in results)
    row_keys.sort(key=lambda k: (k[0], k[1]))  # stable: keeps stmt order within a group
    columns = _ordered_unique(m.description or "" for m in results)
    grid: dict[tuple, dict[str, Measurement]] = {k: {} for k in row_keys}
    for m in results:
        grid[(m.num_threads, m.env, m.as_row_name)][m.description or ""] = m
    render_env = len({m.env for m in results}) > 1
    env_width = max(len(m.env) for m in results) if render_env else 0
    highlight = highlight_warnings and any(m.has_warnings for m in results)

    formats = {}
    for col in columns:
        col_results = [grid[k][col] for k in row_keys if col in grid[k]]
        formats[col] = _column_format(col_results, scale, trim_significant_figures)

    rows: list[Row] = []
    prior_threads, prior_env, group = None, None, -1
    for key in row_keys:
        threads, env, name = key
        new_group = threads != prior_threads
        if new_group:
            group += 1
            prior_env = None
        env_text = f"({env})" if render_env and env != prior_env else ""
        prior_threads, prior_env = threads, env
        row_best = min(m.median for m in grid[key].values())
        cells: list[Cell | None] = []
        for col in columns:
            m = grid[key].get(col)
            if m is None:
                cells.append(None)
                continue
            value = m.median / scale
            if trim_significant_figures:
                value = stats.trim_sigfig(value, m.significant_figures)
            width, decimals = formats[col]
            text = f"{value:>{width}.{decimals}f}"
            if highlight:
                text += f" (! {m.iqr / m.median * 100:.0f}%)" if m.has_warnings else " " * 7
            color = None
            if colorize is Colorize.ROWWISE:
                color = color_for(m.median, row_best)
            elif colorize is Colorize.COLUMNWISE:
                col_best = min(grid[k][col].median for k in row_keys
                               if k[0] == threads and col in grid[k])
                color = color_for(m.median, col_best)
            cells.append(Cell(text, color))
        rows.append(Row("  " + env_text.ljust(env_width + 4) + name, tuple(cells),
                        threads if new_group else None))
    return TableModel(results[0].label, tuple(columns), tuple(rows), unit, highlight)


def build_tables(results: Sequence[Measurement], colorize: Colorize = Colorize.NONE,
                 trim_significant_figures: bool = False,
                 highlight_warnings: bool = False) -> list[TableModel]:
    """One TableModel per label, replicates merged, in first-seen label order."""
    merged = Measurement.merge(results)
    by_label: dict[str | None, list[Measurement]] = {}
    for m in merged:
        by_label.setdefault(m.label, []).append(m)
    return [build_table(group, colorize, trim_significant_figures, highlight_warnings)
            for group in by_label.values()]
