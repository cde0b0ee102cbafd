"""Text and JSON of comparisons, instruction-count summaries and environments (pure: strings
in, strings out; the edges print them)."""
from __future__ import annotations

import math
import textwrap
from typing import Any, Sequence

from tabulate import tabulate

from benchkit.core.compare.comparison import Comparison, finite
from benchkit.core.decisions.bands import CountVerdict
from benchkit.core.decisions.verdicts import Design, Verdict
from benchkit.core.measure.stats import format_time
from benchkit.core.records.records import benchmark_name
from benchkit.core.text import one_line


def _pct(change: float | None, digits: int = 1) -> str:
    return "-" if change is None or not math.isfinite(change) else f"{change:+.{digits}%}"


def _instructions(r) -> str:
    if r.base_instructions is None or r.new_instructions is None:
        return "-"
    verdict = {CountVerdict.SAME: "", CountVerdict.MORE: " more",
               CountVerdict.FEWER: " fewer"}[r.instructions_verdict]
    return (f"{r.base_instructions} -> {r.new_instructions} "
            f"({_pct(r.instructions_change, 2)}{verdict})")


def _settle(w) -> str:
    """'; about 14 more rounds would settle it at this spread' (or that none would)."""
    unit = "rounds" if w.design.interleaved else "processes"
    done = min(w.n_base, w.n_new)
    if not finite(w.to_settle) and w.to_settle == float("inf"):
        return "; its estimate sits on the band's edge: more data would not settle it"
    if not finite(w.to_settle):
        return ""
    more = max(int(w.to_settle) - done, 1)
    return f"; about {more} more {unit} would settle it at this spread"


def _throughput(r) -> str:
    """NEW's rates (wall time) or instructions per unit (counts), where it states its work."""
    from benchkit.core.measure import throughput
    if r.work is None:
        return "-"
    if r.wall:
        return ", ".join(throughput.rates(r.work, r.wall.new_median)) or "-"
    if r.new_instructions:
        return ", ".join(throughput.per_unit(r.work, r.new_instructions.median, "instr"))
    return "-"


# Columns given up first when a table is wider than asked (`compare` fits 100 columns unless
# --wide): the least needed to read a verdict first.
_DROP_ORDER = ("new throughput", "detectable", "p", "processes", "rounds", "base", "new",
               "memory/run", "band", "instructions/run")
_NARROW_NAME = 24


def _instructions_short(r) -> str:
    if r.base_instructions is None or r.new_instructions is None:
        return "-"
    verdict = {CountVerdict.SAME: "same", CountVerdict.MORE: "more",
               CountVerdict.FEWER: "fewer"}[r.instructions_verdict]
    return f"{_pct(r.instructions_change, 2)} {verdict}"


def _fit(headers: list[str], body: list[list[str]], width: int | None, markdown: bool) -> str:
    """The table, with columns dropped (in _DROP_ORDER) and then long names shortened until
    it fits `width` (None: everything)."""
    def render(keep, rows):
        return tabulate([[row[i] for i in keep] for row in rows],
                        headers=[headers[i] for i in keep],
                        tablefmt="github" if markdown else "simple", disable_numparse=True)

    def widest(text):
        return max(len(line) for line in text.splitlines())
    keep = list(range(len(headers)))
    text = render(keep, body)
    for name in _DROP_ORDER:
        if width is None or widest(text) <= width:
            return text
        keep = [i for i in keep if headers[i] != name]
        text = render(keep, body)
    if width is not None and widest(text) > width:
        room = max(_NARROW_NAME, width - (widest(text) - max(len(r[0]) for r in body)))
        rows = [[r[0] if len(r[0]) <= room else r[0][:room - 3] + "...", *r[1:]] for r in body]
        text = render(keep, rows)
    return text


def format_comparison(comp: Comparison, markdown: bool = False,
                      width: int | None = 100) -> str:
    """The verdict table of a comparison, its summary, notes and warnings. The table fits
    `width` columns (less needed columns dropped, then long names shortened; gate failures
    spelled out below it); `width=None` or `markdown` keep every column."""
    if markdown:
        width = None
    headers = ["benchmark", "base", "new", "ratio", f"{comp.confidence} CI", "p",
               "rounds" if comp.design.interleaved else "processes", "band", "verdict",
               "detectable",
               "new throughput", "instructions/run", "memory/run", "gate"]
    body, notes, widened, broken = [], [], [], []
    # The band asked for; a row judged against a wider one says why below the table.
    base_noise = min((r.wall.noise for r in comp.rows if r.wall), default=0.0)
    for r in comp.rows:
        w = r.wall
        name = one_line(r.name)
        if r.failures and width is not None:
            gate = "FAIL"
            broken.extend(f"  {name}: {f}" for f in r.failures)
        elif width is not None and r.gates:
            # Fitted tables say pass or undecided; the gates themselves are in --wide.
            gate = "undecided" if r.undecided else "skipped" if r.skipped else "pass"
        else:
            gate = "FAIL: " + "; ".join(r.failures) if r.failures else (
                ", ".join(str(g) for g in r.gates) or "-")
        threads = f" [{r.note}: {r.threads[0]} -> {r.threads[1]}]" if r.note else ""
        ci = "-"
        if w and finite(w.ci_low):
            ci = f"[{w.ci_low:.3f}, {w.ci_high:.3f}]"
        if w and w.verdict is Verdict.INCONCLUSIVE:
            notes.append(f"  {name}: inconclusive: {w.reason}{_settle(w)}")
        elif w and w.noise > base_noise + 1e-12 and comp.design is not Design.SEQUENTIAL:
            widened.append(f"  {name}: {w.verdict} against a +-{w.noise:.0%} band: {w.reason}")
        body.append([
            name + threads,
            format_time(w.base_median) if w else "-",
            format_time(w.new_median) if w else "-",
            f"{w.ratio:.3f}" if w and finite(w.ratio) else "-",
            ci,
            f"{w.p_value:.2g}" if w and finite(w.p_value) else "-",
            (f"{w.n_base}" if w.n_base == w.n_new else f"{w.n_base}/{w.n_new}") if w else "-",
            f"+-{w.noise:.1%}" if w and comp.design is Design.SEQUENTIAL else "-",
            w.verdict if w else "-",
            f">{w.detectable:.1%}" if w and finite(w.detectable) else "-",
            _throughput(r),
            _instructions(r) if width is None else _instructions_short(r),
            r.memory.describe() if r.memory else "-", gate])
    # Columns with nothing in any row (wall time of a counts-only comparison, counts of a
    # time-only one, gates when none was asked for) are left out.
    keep = [i for i, h in enumerate(headers)
            if i == 0 or any(row[i] != "-" for row in body)]
    out = [_fit([headers[i] for i in keep], [[row[i] for i in keep] for row in body], width,
                markdown)]
    if broken:
        out.append("")
        out.append("gates broken:")
        out.extend(broken)
    has_wall = any(r.wall for r in comp.rows)
    out.append("")
    if has_wall:
        out.append(f"{comp.compared} benchmarks compared: " +
                   ", ".join(f"{n} {v}" for v, n in comp.counts().items()))
    counted = comp.instruction_counts()
    if sum(counted.values()):
        out.append("instructions (beyond both layout bands): " +
                   ", ".join(f"{n} {v}" for v, n in counted.items()))
    if has_wall:
        out.append(f"geometric mean of time ratios (new/base): {comp.geomean_ratio:.3f}")
    memory = comp.memory_counts()
    if sum(memory.values()):
        out.append("memory per run (exact): " +
                   ", ".join(f"{n} {v}" for v, n in memory.items()))
    if comp.geomean_instructions is not None:
        out.append(f"geometric mean of instruction ratios: {comp.geomean_instructions:.4f}")
    if has_wall:
        out.extend(textwrap.wrap(
            f"test: {comp.test}; a change is claimed only when the {comp.confidence} CI lies "
            + ("outside the benchmark's band" if comp.design is Design.SEQUENTIAL
               else f"outside the +-{base_noise:.0%} noise band") +
            "; 'detectable' is the smallest slowdown "
            "this data could have claimed", width=100 if not markdown else 10_000,
            subsequent_indent="  "))
    if widened:
        out.append("judged against a wider band:")
        out.extend(widened)
    if notes:
        out.append("why inconclusive:")
        out.extend(notes)
        if comp.design is Design.RUNS:
            out.append("  separate runs cannot see the drift between the moments they were "
                       "taken; `benchkit ab` interleaves BASE and NEW and settles such cases")
    for name in comp.only_base:
        out.append(f"only in BASE: {one_line(name)}")
    for name in comp.only_new:
        out.append(f"only in NEW: {one_line(name)}")
    for label, failures in (("BASE", comp.failed_base), ("NEW", comp.failed_new)):
        for failure in failures:
            out.append(f"failed in {label}: {one_line(failure.summary())}")
    skipped = [f"  {one_line(r.name)}: {s}" for r in comp.rows for s in r.skipped]
    if skipped:
        out.append("gates not evaluated (--allow-missing):")
        out.extend(skipped)
    if comp.undecided:
        out.append(f"gates not decided: {len(comp.undecided)} benchmark(s) inconclusive "
                   "beyond their gate's limit (--strict fails them; more rounds settle them):")
        out.extend(f"  {one_line(r.name)}: {'; '.join(r.undecided)}" for r in comp.undecided)
    for reason in comp.partial:
        out.append(f"PARTIAL: {one_line(reason)}")
    for warning in comp.environment_warnings:
        out.append(f"WARNING: environments differ: {one_line(warning)}")
    if comp.regressions:
        out.append(f"REGRESSION: {len(comp.regressions)} benchmark(s) broke a gate: " +
                   ", ".join(one_line(r.name) for r in comp.regressions))
    if markdown:
        return "\n".join([out[0], "", *markdown_list(out[1:])])
    if width is not None:
        out = [out[0], *(wrapped for line in out[1:] for wrapped in _wrap(line, width))]
    return "\n".join(out)


def _wrap(line: str, width: int) -> list[str]:
    """A footer line folded at `width`, continuations indented under it."""
    if len(line) <= width:
        return [line]
    indent = " " * (len(line) - len(line.lstrip()) + 2)
    return textwrap.wrap(line, width, subsequent_indent=indent, break_on_hyphens=False)


def markdown_list(lines: Sequence[str]) -> list[str]:
    """Footer lines as a markdown list, so that a pull-request comment keeps them apart:
    indented lines become nested items, a line wrapped onto the next is joined again."""
    items: list[str] = []
    for line in lines:
        if not line.strip():
            continue
        if line.startswith("    ") and items:       # a wrapped continuation
            items[-1] += " " + line.strip()
        elif line.startswith("  "):
            items.append("  - " + line.strip())
        else:
            items.append("- " + line)
    return items


def _json_float(x: float | None) -> float | None:
    return x if finite(x) else None


def _band_json(b) -> dict[str, Any] | None:
    if b is None:
        return None
    return {"low": b.low, "median": b.median, "high": b.high, "layouts": b.layouts}


def comparison_to_json(comp: Comparison) -> dict[str, Any]:
    """Machine-readable form of a Comparison (`benchkit compare --json`)."""
    rows = []
    for r in comp.rows:
        w = r.wall
        wall = None
        if w is not None:
            wall = {"base_median": _json_float(w.base_median),
                    "new_median": _json_float(w.new_median), "ratio": _json_float(w.ratio),
                    "ci": [_json_float(w.ci_low), _json_float(w.ci_high)],
                    "p": _json_float(w.p_value), "verdict": w.verdict, "reason": w.reason,
                    "units": {"base": w.n_base, "new": w.n_new}, "noise": w.noise,
                    "detectable": _json_float(w.detectable),
                    "to_settle": int(w.to_settle) if finite(w.to_settle) else None}
        instructions = None
        if r.base_instructions is not None and r.new_instructions is not None:
            instructions = {"base": _band_json(r.base_instructions),
                            "new": _band_json(r.new_instructions),
                            "change": _json_float(r.instructions_change),
                            "verdict": r.instructions_verdict}
        rows.append({"name": r.name, "wall": wall, "instructions": instructions,
                     "memory": r.memory.to_json() if r.memory else None,
                     "work": ({"elements": r.work.elements, "bytes": r.work.bytes}
                              if r.work else None),
                     "threads": list(r.threads), "gates": [str(g) for g in r.gates],
                     "failures": list(r.failures), "skipped": list(r.skipped),
                     "undecided": list(r.undecided)})
    return {"design": comp.design, "test": comp.test, "alpha": comp.alpha, "rows": rows,
            "summary": {"compared": comp.compared, **comp.counts(),
                        "instructions": {str(v): n for v, n in
                                         comp.instruction_counts().items()},
                        "memory": {str(v): n for v, n in comp.memory_counts().items()},
                        "regressions": [r.name for r in comp.regressions],
                        "undecided": [r.name for r in comp.undecided]},
            "geomean_ratio": _json_float(comp.geomean_ratio),
            "geomean_instructions": _json_float(comp.geomean_instructions),
            "only_base": list(comp.only_base), "only_new": list(comp.only_new),
            "failed": {"base": [f.to_dict() for f in comp.failed_base],
                       "new": [f.to_dict() for f in comp.failed_new]},
            "partial": list(comp.partial),
            "warnings": list(comp.environment_warnings)}


def format_callgrind(items: Sequence[Any], markdown: bool = False) -> str:
    """One row of instruction counts per CallgrindStats."""
    rows = []
    for s in items:
        cache = s.cache_summary()
        rows.append([one_line(benchmark_name(s)), f"{s.per_run():,.1f}", f"{s.counts():,}",
                     f"{s.baseline_exclusive_stats.sum():,}", s.number_per_run,
                     f"{cache['estimated cycles'] / s.number_per_run:,.0f}" if cache else "-"])
    return tabulate(rows, headers=["benchmark", "instructions/run", "total", "baseline", "runs",
                                   "est. cycles/run"],
                    tablefmt="github" if markdown else "simple", disable_numparse=True)


def format_memory(items: Sequence[Any], markdown: bool = False) -> str:
    """One row of memory per run per MemoryStats."""
    from benchkit.core.measure.memory import Source, format_bytes
    rows = [[one_line(benchmark_name(m)), f"{m.allocations_per_run:,.4g}",
             f"{m.frees_per_run:,.4g}", format_bytes(m.bytes_per_run),
             format_bytes(m.retained_bytes_per_run), format_bytes(m.peak_bytes),
             f"{m.source(Source.PYTHON).allocations:,.4g} / "
             f"{m.source(Source.NATIVE).allocations:,.4g}"] for m in items]
    return tabulate(rows, headers=["benchmark", "allocs/run", "frees/run", "bytes/run",
                                   "retained/run", "peak", "allocs python / native"],
                    tablefmt="github" if markdown else "simple", disable_numparse=True)


def format_sites(items: Sequence[Any], markdown: bool = False, top: int = 5) -> str:
    """The top allocation sites of each MemoryStats that has them, a table per benchmark."""
    from benchkit.core.measure.memory import SiteKind, format_bytes
    out = []
    for m in items:
        rows = [[kind.value, one_line(s.location), f"{s.allocations:,.4g}",
                 format_bytes(s.bytes)]
                for kind in SiteKind for s in m.top_sites(kind, top)]
        if rows:
            out.append(f"allocation sites of {one_line(benchmark_name(m))} (per run):\n" + tabulate(
                rows, headers=["kind", "site", "allocs/run", "bytes/run"],
                tablefmt="github" if markdown else "simple", disable_numparse=True))
    return "\n\n".join(out)


def format_environment(env: dict[str, Any]) -> str:
    """An environment fingerprint in a few lines (each part of a merged one)."""
    if "merged" in env:
        return "\n\n".join(format_environment(e) for e in env["merged"])
    git = env.get("git") or {}
    lines = [
        f"python {env.get('python')}, benchkit {env.get('benchkit')}, torch {env.get('torch')}, "
        f"numpy {env.get('numpy')}",
        f"{env.get('cpu_model')} x{env.get('cpu_count')} ({env.get('machine')}), {env.get('os')}",
        f"host {env.get('hostname')}, {env.get('timestamp')}",
    ]
    if git:
        lines.append(f"git {str(git.get('commit', ''))[:12]}"
                     f"{' (dirty)' if git.get('dirty') else ''}")
    if env.get("threads"):
        lines.append("threads: " + ", ".join(f"{k}={v}" for k, v in env["threads"].items()))
    return "\n".join(one_line(line) for line in lines)
