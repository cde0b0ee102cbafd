"""CallgrindStats <-> JSON-able dicts (filled in with the valgrind side)."""
from __future__ import annotations

from typing import Any


def callgrind_to_dict(stats: Any) -> dict[str, Any]:
    raise NotImplementedError


def callgrind_from_dict(d: Any, where: str) -> Any:
    raise NotImplementedError
