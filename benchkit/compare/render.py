"""Render TableModels to text with tabulate, in the layout of torch.utils.benchmark.Compare."""
from __future__ import annotations

import re

from tabulate import DataRow, TableFormat, tabulate

from benchkit import stats
from benchkit.compare.table import TableModel

_ANSI = {
    "best": "\033[92m\033[1m",
    "good": "\033[34m\033[1m",
    "bad": "\033[2m\033[91m",
    "very_bad": "\033[31m\033[1m",
}
_RESET = "\033[0m\033[0m"
_ANSI_CODE = re.compile(r"\x1b\[[0-9;]*m")
_PIPES = TableFormat(lineabove=None, linebelowheader=None, linebetweenrows=None, linebelow=None,
                     headerrow=DataRow("", "  |  ", ""), datarow=DataRow("", "  |  ", ""),
                     padding=0, with_header_hide=None)


def _cell_text(cell, blank_width: int) -> str:
    if cell is None:
        return " " * blank_width
    if cell.color is None:
        return cell.text
    return _ANSI[cell.color] + cell.text + _RESET


def render_table(model: TableModel) -> str:
    blank = max((len(c.text) for r in model.rows for c in r.cells if c), default=0)
    body = [[row.name] + [_cell_text(c, blank) for c in row.cells] for row in model.rows]
    text = tabulate(body, headers=[""] + list(model.columns), tablefmt=_PIPES,
                    colalign=["left"] + ["center"] * len(model.columns),
                    disable_numparse=True, preserve_whitespace=True)
    lines = text.split("\n")
    width = max(len(_ANSI_CODE.sub("", line)) for line in lines)
    out = ["[" + f" {model.label or ''} ".center(width - 2, "-") + "]", lines[0]]
    for row, line in zip(model.rows, lines[1:]):
        if row.thread_group is not None:
            out.append(f"{row.thread_group} threads: ".ljust(width, "-"))
        out.append(line)
    out += ["", f"Times are in {stats.unit_to_english(model.unit)}s ({model.unit})."]
    if model.has_warnings:
        out.append("(! XX%) Measurement has high variance, where XX is the IQR / median * 100.")
    return "\n".join(out) + "\n"
