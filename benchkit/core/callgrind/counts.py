"""FunctionCount / FunctionCounts: pure arithmetic over (count, function) rows."""
from __future__ import annotations

import collections
import dataclasses
import sys
from typing import Callable, Iterator, NamedTuple

from benchkit.core.text import one_line
from benchkit.errors import CountsMismatchError

DEFAULT_LINEWIDTH = 80
# CPython's noisy unicode-key dict lookups: the 3.10 name and its 3.11+ successors.
NOISY_SYMBOLS = ("dictobject.c:lookdict_unicode", ":lookdict_unicode_nodummy",
                 ":unicodekeys_lookup_unicode")


def _linewidth() -> int:
    torch = sys.modules.get("torch")
    options = getattr(getattr(torch, "_tensor_str", None), "PRINT_OPTS", None)
    return getattr(options, "linewidth", None) or DEFAULT_LINEWIDTH


class FunctionCount(NamedTuple):
    """One row: an instruction count and the function ('file:function [object]')."""

    count: int
    function: str


@dataclasses.dataclass(repr=False, eq=True, frozen=True)
class FunctionCounts:
    """Rows of (instruction count, 'file:function [object]'), sorted descending.

    Supports +, - (diff), * (scale), transform, filter, denoise, slicing and indexing.
    """

    _data: tuple[FunctionCount, ...]
    inclusive: bool
    truncate_rows: bool = True
    _linewidth: int | None = None

    def __post_init__(self):
        object.__setattr__(self, "_data", tuple(FunctionCount(int(c), f) for c, f in self._data))

    def __iter__(self) -> Iterator[FunctionCount]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __getitem__(self, item):
        if isinstance(item, slice):
            return FunctionCounts(self._data[item], self.inclusive, truncate_rows=False)
        return self._data[item]

    def __repr__(self) -> str:
        # As torch's: a negative count's sign is counted twice, and the line width follows
        # torch's print options when torch is loaded.
        count_len = max((len(str(c)) + (c < 0) for c, _ in self._data), default=0)
        linewidth = self._linewidth or _linewidth()
        fn_len = max(linewidth - count_len - 4, 40)
        lines = []
        for c, fn in self._data:
            fn = one_line(fn)
            if len(fn) > fn_len:
                left = (fn_len - 5) // 2
                fn = fn[:left] + " ... " + fn[-(fn_len - left - 5):]
            lines.append(f"  {c:>{count_len}}  {fn}")
        if self.truncate_rows and len(lines) > 18:
            lines = lines[:9] + ["...".rjust(count_len + 2)] + lines[-9:]
        if not self.inclusive:
            lines += ["", f"Total: {self.sum()}"]
        head = f"<benchkit.FunctionCounts object at {hex(id(self))}>"
        return "\n".join([head] + lines)

    @staticmethod
    def from_dict(counts: dict[str, int], inclusive: bool) -> "FunctionCounts":
        """Rows from {function: count}, zero counts dropped, sorted by count then name."""
        rows = (FunctionCount(c, fn) for fn, c in counts.items() if c)
        return FunctionCounts(tuple(sorted(rows, reverse=True)), inclusive)

    def _merge(self, other: "FunctionCounts", sign: int) -> "FunctionCounts":
        if not isinstance(other, FunctionCounts):
            return NotImplemented
        if self.inclusive != other.inclusive:
            raise CountsMismatchError(
                "cannot combine inclusive and exclusive FunctionCounts; take both from "
                "stats(inclusive=...) with the same value")
        counts: dict[str, int] = collections.defaultdict(int)
        for c, fn in self._data:
            counts[fn] += c
        for c, fn in other._data:
            counts[fn] += sign * c
        return FunctionCounts.from_dict(counts, self.inclusive)

    def __add__(self, other: "FunctionCounts") -> "FunctionCounts":
        return self._merge(other, 1)

    def __sub__(self, other: "FunctionCounts") -> "FunctionCounts":
        return self._merge(other, -1)

    def __mul__(self, factor: int | float) -> "FunctionCounts":
        return FunctionCounts.from_dict({fn: int(c * factor) for c, fn in self._data},
                                        self.inclusive)

    __rmul__ = __mul__

    def transform(self, map_fn: Callable[[str], str]) -> "FunctionCounts":
        """Rename every function with `map_fn`; rows that collide are summed."""
        counts: dict[str, int] = collections.defaultdict(int)
        for c, fn in self._data:
            counts[map_fn(fn)] += c
        return FunctionCounts.from_dict(counts, self.inclusive)

    def filter(self, filter_fn: Callable[[str], bool]) -> "FunctionCounts":
        """Keep the rows whose function name satisfies `filter_fn`."""
        return FunctionCounts(tuple(r for r in self._data if filter_fn(r.function)),
                              self.inclusive)

    def sum(self) -> int:
        """The total count of the rows."""
        return sum(c for c, _ in self._data)

    def denoise(self) -> "FunctionCounts":
        """Drop CPython's unicode dict lookups, whose counts vary with string hashes."""
        return self.filter(lambda fn: not any(s in fn for s in NOISY_SYMBOLS))

    def as_dict(self) -> dict[str, int]:
        """{function: count}."""
        return {fn: c for c, fn in self._data}


@dataclasses.dataclass(frozen=True)
class CountsDiff:
    """B - A per function, with functions only in A, only in B, and in both told apart."""

    only_a: tuple[FunctionCount, ...]
    only_b: tuple[FunctionCount, ...]
    both: tuple[tuple[str, int, int], ...]   # (function, count in A, count in B), changed only

    def rows(self) -> list[tuple[str, int, int | None, int | None, str]]:
        """(function, delta, a, b, where) sorted by |delta| descending."""
        out = [(fn, b - a, a, b, "both") for fn, a, b in self.both]
        out += [(r.function, -r.count, r.count, None, "only A") for r in self.only_a]
        out += [(r.function, r.count, None, r.count, "only B") for r in self.only_b]
        return sorted(out, key=lambda r: (-abs(r[1]), r[0]))

    @property
    def total(self) -> int:
        """The total change, B minus A."""
        return sum(r[1] for r in self.rows())

    def format(self, top: int | None = None, width: int = 100) -> str:
        """The diff as text, largest changes first (`top` rows, all when None)."""
        rows = self.rows()
        shown = rows if not top else rows[:top]
        lines = [f"{'delta':>12}  {'A':>12}  {'B':>12}  {'':6}  function"]
        fn_len = max(width - 50, 30)
        for fn, delta, a, b, where in shown:
            fn = one_line(fn)
            if len(fn) > fn_len:
                left = (fn_len - 5) // 2
                fn = fn[:left] + " ... " + fn[-(fn_len - left - 5):]
            tag = {"both": "", "only A": "-only A", "only B": "+only B"}[where]
            lines.append(f"{delta:>+12}  {'' if a is None else a:>12}  "
                         f"{'' if b is None else b:>12}  {tag:6}  {fn}")
        if top and len(rows) > top:
            lines.append(f"... {len(rows) - top} more functions")
        lines.append(f"Total delta: {self.total:+}  ({len(self.only_a)} only in A, "
                     f"{len(self.only_b)} only in B, {len(self.both)} changed in both)")
        return "\n".join(lines)


def diff_counts(a: FunctionCounts, b: FunctionCounts) -> CountsDiff:
    """Functions only in A, only in B, and changed in both."""
    if a.inclusive != b.inclusive:
        raise CountsMismatchError("cannot diff inclusive against exclusive FunctionCounts")
    da, db = a.as_dict(), b.as_dict()
    only_a = tuple(FunctionCount(c, fn) for fn, c in da.items() if fn not in db)
    only_b = tuple(FunctionCount(c, fn) for fn, c in db.items() if fn not in da)
    both = tuple((fn, da[fn], db[fn]) for fn in da if fn in db and da[fn] != db[fn])
    return CountsDiff(tuple(sorted(only_a, reverse=True)), tuple(sorted(only_b, reverse=True)),
                      both)


# Pickles name the public path, so they survive moves inside the package.
for _cls in (FunctionCount, FunctionCounts):
    _cls.__module__ = "benchkit"
