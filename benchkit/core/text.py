"""Strings from files and users made safe to print (pure): control characters escaped, so a
label or a name in a results file received from someone else cannot retitle, clear or move
the cursor of the terminal, or hide lines."""
from __future__ import annotations

import re

# C0 controls (but tab and newline), DEL, C1 controls, Unicode line/paragraph separators and
# the bidirectional overrides and isolates (which can reorder what is shown).
_CONTROLS = "\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069"
_KEEP_LINES = re.compile(f"[{_CONTROLS}]")
_ONE_LINE = re.compile(f"[{_CONTROLS}\t\n]")


def _escape(match: re.Match) -> str:
    char = match.group()
    if char == "\n":
        return "\\n"
    if char == "\t":
        return "\\t"
    if char == "\r":
        return "\\r"
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: object) -> str:
    """`text` with control characters escaped (`\\x1b`, `\\r`, ...); newlines and tabs kept,
    for multi-line text such as a snippet or an error message."""
    return _KEEP_LINES.sub(_escape, str(text))


def one_line(text: object) -> str:
    """`text` on one line: every control character escaped, newlines and tabs too (names,
    labels and paths in tables and messages)."""
    return _ONE_LINE.sub(_escape, str(text))
