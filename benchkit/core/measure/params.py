"""Parameter grids of suite benchmarks: the points of a grid, how a point is written in a
benchmark's name (`fn[n=1024,dtype=float32]`), and where a point goes in a Compare table.
Pure."""
from __future__ import annotations

import itertools
import math
import re
from typing import Any, Mapping, Sequence

from benchkit.errors import SuiteError

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_UNSAFE = re.compile(r"[\s\[\],=]")       # characters a value may not show in a name

Point = dict[str, Any]


def check_grid(params: Any, where: str) -> dict[str, tuple]:
    """`params` as {name: values}, or a SuiteError saying what is wrong with it."""
    if not isinstance(params, Mapping) or not params:
        raise SuiteError(f"{where}: params must be a non-empty dict of name -> list of values, "
                         f"e.g. params={{'n': [1024, 4096]}}; got {params!r}")
    grid = {}
    for name, values in params.items():
        if not isinstance(name, str) or not _NAME.match(name):
            raise SuiteError(f"{where}: parameter name {name!r} must be an identifier "
                             "(it is passed as a keyword argument)")
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or not values:
            raise SuiteError(f"{where}: params[{name!r}] must be a non-empty list of values, "
                             f"got {values!r}")
        shown = [format_value(v) for v in values]
        repeated = sorted({s for s in shown if shown.count(s) > 1})
        if repeated:
            raise SuiteError(f"{where}: params[{name!r}] has values that read the same in a "
                             f"benchmark name: {repeated}; give each value once")
        grid[name] = tuple(values)
    return grid


def points(grid: Mapping[str, Sequence]) -> list[Point]:
    """Every point of the grid, the first parameter varying slowest (as nested loops)."""
    names = list(grid)
    return [dict(zip(names, values)) for values in itertools.product(*grid.values())]


def format_value(value: Any) -> str:
    """How a value reads in a name: 1024, 0.5, float32 (dtypes without their module), a
    function's or class's name; other characters a name cannot hold become '_'."""
    if isinstance(value, bool) or value is None:
        text = str(value)
    elif isinstance(value, float):
        text = repr(value) if math.isfinite(value) else str(value)
    elif isinstance(value, (int, str)):
        text = str(value)
    elif hasattr(value, "__qualname__") and not _is_dtype(value):
        text = value.__qualname__
    else:
        text = str(value)
        for prefix in ("torch.", "numpy.", "np."):
            text = text.removeprefix(prefix)
        if text.startswith("<class '") and text.endswith("'>"):
            text = text[8:-2].rsplit(".", 1)[-1]
    return _UNSAFE.sub("_", text) or "''"


def _is_dtype(value: Any) -> bool:
    return type(value).__name__ in ("dtype",) or "dtype" in type(value).__module__


def point_name(point: Point) -> str:
    """'n=1024,dtype=float32'."""
    return ",".join(f"{k}={format_value(v)}" for k, v in point.items())


def stored(point: Point) -> dict[str, Any]:
    """The point as results files keep it: JSON scalars as they are, other values as
    they read in the name."""
    return {k: v if isinstance(v, (bool, int, float, str)) or v is None else format_value(v)
            for k, v in point.items()}


def table_place(point: Point) -> tuple[str, str | None]:
    """(sub_label, description) of a point in a Compare table: the last parameter names the
    columns, the others the rows (the way torch.utils.benchmark's tutorial puts sizes in
    sub_label and variants in description); one parameter: rows only."""
    items = list(point.items())
    if len(items) == 1:
        return f"{items[0][0]}={format_value(items[0][1])}", None
    return point_name(dict(items[:-1])), point_name(dict(items[-1:]))
