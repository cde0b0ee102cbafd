"""CallgrindStats: instruction counts of a snippet and of its empty-loop baseline."""
from __future__ import annotations

import dataclasses
import textwrap
from typing import Any

from benchkit.core.measure import throughput
from benchkit.core.measure.task import TaskSpec
from benchkit.core.callgrind.counts import FunctionCounts
from benchkit.core.callgrind.standardize import standardize_name, torch_standardize_name

CACHE_EVENTS = ("Ir", "I1mr", "ILmr", "Dr", "D1mr", "DLmr", "Dw", "D1mw", "DLmw")


def estimated_cycles(events: dict[str, int]) -> int | None:
    """L1 hits + 5 x LL hits + 35 x RAM accesses, from cache-simulation totals."""
    if not all(e in events for e in CACHE_EVENTS):
        return None
    accesses = events["Ir"] + events["Dr"] + events["Dw"]
    l1_misses = events["I1mr"] + events["D1mr"] + events["D1mw"]
    ll_misses = events["ILmr"] + events["DLmr"] + events["DLmw"]
    return (accesses - l1_misses) + 5 * (l1_misses - ll_misses) + 35 * ll_misses


@dataclasses.dataclass(repr=False, eq=False, frozen=True)
class CallgrindStats:
    """Counts of `number_per_run` runs of the stmt and of an empty (`pass`) loop.

    `stats()`/`counts()` are the raw stmt counts (as torch.utils.benchmark);
    pass `subtract_baseline=True` for the cost of the stmt alone, or use `per_run()`.
    """

    task_spec: TaskSpec
    number_per_run: int
    built_with_debug_symbols: bool
    baseline_inclusive_stats: FunctionCounts
    baseline_exclusive_stats: FunctionCounts
    stmt_inclusive_stats: FunctionCounts
    stmt_exclusive_stats: FunctionCounts
    stmt_callgrind_out: str | None = None
    # determinism controls, valgrind version, event totals (cache simulation) ...
    metadata: dict[str, Any] = dataclasses.field(default_factory=dict)

    def stats(self, inclusive: bool = False, *, subtract_baseline: bool = False) -> FunctionCounts:
        """The stmt's FunctionCounts (inclusive or exclusive), optionally minus the baseline's."""
        counts = self.stmt_inclusive_stats if inclusive else self.stmt_exclusive_stats
        if subtract_baseline:
            counts = counts - (self.baseline_inclusive_stats if inclusive
                               else self.baseline_exclusive_stats)
        return counts

    def counts(self, *, denoise: bool = False, subtract_baseline: bool = False) -> int:
        """Total instructions of `number_per_run` runs (optionally minus the baseline)."""
        stats = self.stats(subtract_baseline=subtract_baseline)
        return (stats.denoise() if denoise else stats).sum()

    def per_run(self, *, denoise: bool = False) -> float:
        """Instructions of one run of the stmt alone: (stmt - baseline) / number_per_run."""
        return self.counts(denoise=denoise, subtract_baseline=True) / self.number_per_run

    def delta(self, other: "CallgrindStats", inclusive: bool = False) -> FunctionCounts:
        """self - other, per function."""
        return self.stats(inclusive=inclusive) - other.stats(inclusive=inclusive)

    def as_standardized(self, thorough: bool = False) -> "CallgrindStats":
        """Strip install prefixes and library suffixes so two builds' names line up. By
        default exactly as torch.utils.benchmark does; `thorough=True` also lines up conda
        toolchains, glibc and compiler-runtime sources, sysroots and site-packages (what
        `benchkit diff` and the history use)."""
        rename = standardize_name if thorough else torch_standardize_name

        def strip(counts: FunctionCounts) -> FunctionCounts:
            return counts.transform(rename)
        return dataclasses.replace(
            self, baseline_inclusive_stats=strip(self.baseline_inclusive_stats),
            baseline_exclusive_stats=strip(self.baseline_exclusive_stats),
            stmt_inclusive_stats=strip(self.stmt_inclusive_stats),
            stmt_exclusive_stats=strip(self.stmt_exclusive_stats), stmt_callgrind_out=None)

    def event_totals(self) -> dict[str, int]:
        """Totals of every recorded event for the stmt (Ir, and cache misses with cache_sim)."""
        return dict(self.metadata.get("stmt_events", {}))

    def cache_summary(self) -> dict[str, int] | None:
        """Cache misses and estimated cycles (stmt minus baseline) when cache_sim was on."""
        stmt = self.metadata.get("stmt_events", {})
        base = self.metadata.get("baseline_events", {})
        if not all(e in stmt for e in CACHE_EVENTS):
            return None
        diff = {e: stmt[e] - base.get(e, 0) for e in CACHE_EVENTS}
        return {"instructions": diff["Ir"],
                "L1 misses": diff["I1mr"] + diff["D1mr"] + diff["D1mw"],
                "LL misses": diff["ILmr"] + diff["DLmr"] + diff["DLmw"],
                "estimated cycles": estimated_cycles(diff)}

    def __repr__(self) -> str:
        base = self.baseline_exclusive_stats
        threads = self.task_spec.num_threads
        lines = [
            f"<benchkit.CallgrindStats object at {hex(id(self))}>",
            self.task_spec.summarize(),
            f"  {'':>25}All{'':>10}Noisy symbols removed",
            f"    Instructions: {self.counts():>12}{'':>15}{self.counts(denoise=True):>12}",
            f"    Baseline:     {base.sum():>12}{'':>15}{base.denoise().sum():>12}",
            f"    Per run:      {self.per_run():>12.1f}{'':>15}{self.per_run(denoise=True):>12.1f}"
            "   (stmt - baseline) / runs",
        ]
        per_unit = throughput.per_unit(self.task_spec, self.per_run(), "instructions")
        if per_unit:
            lines.append(f"    Per unit:     {', '.join(per_unit)}")
        cache = self.cache_summary()
        if cache:
            lines.append("    Cache sim:    " + ", ".join(f"{k} {v}" for k, v in cache.items()))
        lines.append(f"{self.number_per_run} runs per measurement, "
                     f"{threads} thread{'s' if threads > 1 else ''}")
        out = "\n".join(lines)
        if not self.built_with_debug_symbols:
            out += textwrap.dedent("""
            Warning: PyTorch was not built with debug symbols.
                     Source information may be limited. Rebuild with
                     REL_WITH_DEB_INFO=1 for more detailed results.""")
        return out


CallgrindStats.__module__ = "benchkit"   # pickles name the public path
