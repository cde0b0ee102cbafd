"""Render TableModels to text, character for character as torch.utils.benchmark.Compare does.

Plain string operations rather than a table library: the output must match torch's own
centring (str.center), padding and the places where colour codes sit (around the centred
cell), which general table renderers do differently.
"""
from __future__ import annotations

from benchkit.core.compare.table import TableModel
from benchkit.core.measure import stats

BEST = "\033[92m"
GOOD = "\033[34m"
BAD = "\033[2m\033[91m"
VERY_BAD = "\033[31m"
BOLD = "\033[1m"
TERMINATE = "\033[0m"
_STYLE = {"best": BEST + BOLD, "good": GOOD + BOLD, "bad": BAD, "very_bad": VERY_BAD + BOLD}


def render_table(model: TableModel) -> str:
    """One table; ends with a newline, as torch's."""
    string_rows = [["", *model.columns]]
    string_rows += [[row.name, *(c.text for c in row.cells)] for row in model.rows]
    widths = [max(len(r[i]) for r in string_rows) for i in range(len(string_rows[0]))]
    header = "  |  ".join(text.center(w) for text, w in zip(string_rows[0], widths))
    overall = len(header)
    lines = [header]
    for row, strings in zip(model.rows, string_rows[1:]):
        if row.thread_group is not None:
            lines.append(f"{row.thread_group} threads: ".ljust(overall, "-"))
        parts = [strings[0].ljust(widths[0])]
        for cell, text, width in zip(row.cells, strings[1:], widths[1:]):
            text = text.center(width)
            if cell.color is not None:
                text = _STYLE[cell.color] + text + TERMINATE * 2
            parts.append(text)
        lines.append("  |  ".join(parts))
    title = "[" + f" {model.label or ''} ".center(overall - 2, "-") + "]"
    note = model.note or f"Times are in {stats.unit_to_english(model.unit)}s ({model.unit})."
    out = [title, *lines, "", note]
    text = "\n".join(out) + "\n"
    if model.has_warnings:
        text += "(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n"
    return text


def render_markdown(model: TableModel) -> str:
    """One table as markdown: the label as a bold line, a GitHub table (a thread group's
    first row says its thread count), the note under it."""
    from tabulate import tabulate
    groups = any(row.thread_group is not None for row in model.rows)
    headers = ([""] if not groups else ["threads", ""]) + [c.strip() for c in model.columns]
    rows = []
    for row in model.rows:
        lead = [row.name.strip()]
        if groups:
            lead.insert(0, "" if row.thread_group is None else str(row.thread_group))
        rows.append(lead + [c.text.strip() for c in row.cells])
    note = model.note or f"Times are in {stats.unit_to_english(model.unit)}s ({model.unit})."
    title = f"**{model.label}**\n\n" if model.label else ""
    table = tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True)
    return f"{title}{table}\n\n{note}\n"
