"""Pure table model behind Compare: grouping, units, significant figures, colour decisions.

It reproduces torch.utils.benchmark.Compare's layout decisions exactly (row order, column
widths, blank cells, per-column warning highlights), minus its defects: a missing
description or env does not crash, `trim_sigfig` rounds in float64, and leading digits are
computed in float64. Nothing here renders or prints; `render.py` turns a TableModel into text.
"""
from __future__ import annotations

import dataclasses
import enum
import math
from typing import Sequence

from benchkit.core.measure import stats, throughput
from benchkit.core.measure.measurement import Measurement
from benchkit.core.text import printable


class Colorize(enum.Enum):
    """How Compare colours cells: not, by column or by row."""

    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


@dataclasses.dataclass(frozen=True)
class Cell:
    """One cell of a table."""

    text: str                  # formatted value (and warning suffix), or spaces when missing
    color: str | None = None   # best | good | bad | very_bad


@dataclasses.dataclass(frozen=True)
class Row:
    """One row of a table."""

    name: str                       # "  " + "(env)" padding + row name
    cells: tuple[Cell, ...]         # one per column
    thread_group: int | None        # set on the first row of each thread-count group


@dataclasses.dataclass(frozen=True)
class TableModel:
    """One Compare table, ready to render."""

    label: str | None
    columns: tuple[str, ...]
    rows: tuple[Row, ...]
    unit: str
    has_warnings: bool
    note: str | None = None     # the line under the table, where it is not about times


def ordered_unique(elements) -> list:
    """The elements in first-seen order, each once (torch.utils.benchmark's helper)."""
    return list(dict.fromkeys(elements))


def color_for(value: float, best: float) -> str | None:
    """The colour of a cell, from how far its value is from the best."""
    if value <= best * 1.01 or value <= best + 100e-9:
        return "best"
    if value <= best * 1.1:
        return "good"
    if value >= best * 5:
        return "very_bad"
    if value >= best * 2:
        return "bad"
    return None


def _leading_digits(value: float) -> int:
    return math.ceil(math.log10(value)) if value > 0 else 0


@dataclasses.dataclass(frozen=True)
class _ColumnFormat:
    width: int
    decimals: int
    highlight: bool     # a warning column: every cell gets a 7-wide suffix slot

    def format(self, value: float, spread: float | None) -> str:
        suffix = f" (! {spread * 100:.0f}%)" if self.highlight and spread is not None else ""
        return f"{value:>{self.width}.{self.decimals}f}" + f"{suffix:>{7 if self.highlight else 0}}"

    def blank(self) -> str:
        return " " * len(self.format(1, None))


def _column_format(results: Sequence[Measurement], scale: float, trim: bool,
                   highlight: bool) -> _ColumnFormat:
    """Fixed-point width/decimals shared by a column, as torch's Compare chooses them."""
    leading = [_leading_digits(m.median / scale) for m in results]
    unit_digits = max(leading)
    decimals = (min(max(m.significant_figures - d, 0) for d, m in zip(leading, results))
                if trim else 1)
    width = unit_digits + decimals + (1 if decimals else 0)
    return _ColumnFormat(width, decimals, highlight and any(m.has_warnings for m in results))


@dataclasses.dataclass(frozen=True)
class Grid:
    """Compare's layout of items sharing a label: rows keyed (threads, env, row name) in
    thread-count groups (stmt order kept within a group), columns by description."""

    row_keys: list[tuple]
    columns: list[str]
    cells: dict[tuple, dict[str, object]]
    groups: list[list[tuple]]
    render_env: bool
    env_width: int

    @classmethod
    def of(cls, items: Sequence, threads, env, row_name, description) -> "Grid":
        """The grid of `items`, read through the four accessor functions."""
        def row_key(m):
            return threads(m), env(m), row_name(m)
        row_keys = ordered_unique(row_key(m) for m in items)
        row_keys.sort(key=lambda k: (k[0], k[1]))  # stable: keeps stmt order within a group
        columns = ordered_unique(description(m) or "" for m in items)
        cells: dict[tuple, dict[str, object]] = {k: {} for k in row_keys}
        for m in items:
            cells[row_key(m)][description(m) or ""] = m
        envs = ordered_unique(env(m) for m in items)
        render_env = len(envs) > 1
        env_width = max(len(printable(e)) for e in envs) if render_env else 0
        groups: list[list[tuple]] = []
        for key in row_keys:
            if not groups or groups[-1][0][0] != key[0]:
                groups.append([])
            groups[-1].append(key)
        return cls(row_keys, columns, cells, groups, render_env, env_width)

    def row_name(self, key: tuple, prior_env: str | None) -> str:
        """A row's name column: padding, the env where it changes, the row name."""
        env_text = f"({printable(key[1])})" if self.render_env and key[1] != prior_env else ""
        return "  " + env_text.ljust(self.env_width + 4) + printable(key[2])


def build_table(results: Sequence[Measurement], colorize: Colorize = Colorize.NONE,
                trim_significant_figures: bool = False,
                highlight_warnings: bool = False) -> TableModel:
    """One table for measurements sharing a label (replicates already merged)."""
    unit, scale = stats.select_unit(min(m.median for m in results))

    grid = Grid.of(results, lambda m: m.num_threads, lambda m: m.env, lambda m: m.as_row_name,
                   lambda m: m.description)
    row_keys, columns, groups = grid.row_keys, grid.columns, grid.groups
    formats = {}
    for col in columns:
        col_results = [grid.cells[k][col] for k in row_keys if col in grid.cells[k]]
        formats[col] = _column_format(col_results, scale, trim_significant_figures,
                                      highlight_warnings)

    rows: list[Row] = []
    for group_index, group in enumerate(groups):
        prior_env = ""
        for position, key in enumerate(group):
            name = grid.row_name(key, prior_env)
            prior_env = key[1]
            row_best = min(m.median for m in grid.cells[key].values())
            cells: list[Cell] = []
            for col in columns:
                fmt = formats[col]
                m = grid.cells[key].get(col)
                if m is None:
                    cells.append(Cell(fmt.blank()))
                    continue
                value = m.median / scale
                if trim_significant_figures:
                    value = stats.trim_sigfig(value, m.significant_figures)
                text = fmt.format(value, m.iqr / m.median if m.has_warnings else None)
                rates = throughput.rates(m.task_spec, m.median)
                if rates:
                    text += f" ({', '.join(rates)})"
                color = None
                if colorize is Colorize.ROWWISE:
                    color = color_for(m.median, row_best)
                elif colorize is Colorize.COLUMNWISE:
                    col_best = min(grid.cells[k][col].median for k in group
                                   if col in grid.cells[k])
                    color = color_for(m.median, col_best)
                cells.append(Cell(text, color))
            rows.append(Row(name, tuple(cells), key[0] if position == 0 else None))
    has_warnings = highlight_warnings and any(m.has_warnings for m in results)
    label = results[0].label
    return TableModel(None if label is None else printable(label),
                      tuple(printable(c) for c in columns), tuple(rows), unit, has_warnings)


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


def by_suite_file(measurements: Sequence[Measurement]) -> list[Measurement]:
    """The same Measurements laid out one table per suite file with a row per benchmark
    (as `benchkit show` and `run` print them): label = the file, the row = the function
    (a grid point's function with the parameters its own layout put in rows), columns = the
    description ("time" where there is none). Measurements that are not `file::function`
    benchmarks are left as they are; `Compare` itself keeps torch's grouping by label."""
    from benchkit.core.records.records import Benchmark
    out = []
    for m in measurements:
        benchmark = Benchmark.of(m)
        if "::" not in benchmark.name:
            out.append(m)
            continue
        file, function = benchmark.name.split("::", 1)
        spec = m.task_spec
        row = function
        if benchmark.params:
            row = function.split("[", 1)[0] + (f" {spec.sub_label}" if spec.sub_label else "")
        out.append(dataclasses.replace(m, task_spec=dataclasses.replace(
            spec, label=file, sub_label=row, description=spec.description or "time")))
    return out
