"""Enums whose members are their text: they compare equal to, print as and serialise to
their value ('slower', 'base'), in files, JSON output and messages alike. Pure."""
from __future__ import annotations

import enum


class TextEnum(str, enum.Enum):
    """A str enum that formats as its value on every Python version (3.10-3.12+)."""

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)
