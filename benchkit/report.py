"""Pure text formatting of comparisons, instruction-count summaries and environments."""
from __future__ import annotations

import math
from typing import Any, Sequence

from tabulate import tabulate

from benchkit import stats
from benchkit.ab import Comparison, benchmark_name


def format_time(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "-"
    unit, scale = stats.select_unit(seconds)
    return f"{seconds / scale:.3g} {unit}"


def _pct(change: float | None, digits: int = 1) -> str:
    return "-" if change is None or not math.isfinite(change) else f"{change:+.{digits}%}"


def format_comparison(comp: Comparison, markdown: bool = False) -> str:
    headers = ["benchmark", "base", "new", "ratio", "99% CI", "p", "verdict", "instructions/run",
               "gate"]
    body = []
    for r in comp.rows:
        w = r.wall
        instr = "-"
        if r.base_instructions is not None and r.new_instructions is not None:
            instr = (f"{r.base_instructions:,.0f} -> {r.new_instructions:,.0f} "
                     f"({_pct(r.instructions_change, 2)})")
        verdict = w.verdict if w else "-"
        if w and w.verdict == "inconclusive":
            verdict += f" ({w.reason})" if "few samples" in w.reason else ""
        gate = "FAIL: " + "; ".join(r.failures) if r.failures else (
            ", ".join(str(g) for g in r.gates) or "-")
        threads = ""
        if r.note:
            threads = f" [{r.note}: {r.threads[0]} -> {r.threads[1]}]"
        body.append([
            r.name + threads,
            format_time(w.base_median) if w else "-",
            format_time(w.new_median) if w else "-",
            f"{w.ratio:.3f}" if w else "-",
            f"[{w.ci_low:.3f}, {w.ci_high:.3f}]" if w and math.isfinite(w.ci_low) else "-",
            f"{w.p_value:.2g}" if w and math.isfinite(w.p_value) else "-",
            verdict, instr, gate])
    out = [tabulate(body, headers=headers, tablefmt="github" if markdown else "simple",
                    disable_numparse=True)]
    counts = {v: sum(1 for r in comp.rows if r.wall and r.wall.verdict == v)
              for v in ("faster", "slower", "unchanged", "inconclusive")}
    out.append("")
    out.append(f"{len(comp.rows)} benchmarks compared: " +
               ", ".join(f"{n} {v}" for v, n in counts.items()))
    out.append(f"geometric mean of time ratios (new/base): {comp.geomean_ratio:.3f}")
    if comp.geomean_instructions is not None:
        out.append(f"geometric mean of instruction ratios: {comp.geomean_instructions:.4f}")
    out.append(f"test: {comp.test}; a change is claimed only when p < alpha and the CI lies "
               "outside the noise band")
    for name in comp.only_base:
        out.append(f"only in BASE: {name}")
    for name in comp.only_new:
        out.append(f"only in NEW: {name}")
    for warning in comp.environment_warnings:
        out.append(f"WARNING: environments differ: {warning}")
    if comp.regressions:
        out.append(f"REGRESSION: {len(comp.regressions)} benchmark(s) broke a gate: " +
                   ", ".join(r.name for r in comp.regressions))
    return "\n".join(out)


def format_callgrind(items: Sequence[Any], markdown: bool = False) -> str:
    rows = []
    for s in items:
        cache = s.cache_summary()
        rows.append([benchmark_name(s), f"{s.per_run():,.1f}", f"{s.counts():,}",
                     f"{s.baseline_exclusive_stats.sum():,}", s.number_per_run,
                     f"{cache['estimated cycles'] / s.number_per_run:,.0f}" if cache else "-"])
    return tabulate(rows, headers=["benchmark", "instructions/run", "total", "baseline", "runs",
                                   "est. cycles/run"],
                    tablefmt="github" if markdown else "simple", disable_numparse=True)


def format_environment(env: dict[str, Any]) -> str:
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
        lines.append(f"git {git.get('commit', '')[:12]}{' (dirty)' if git.get('dirty') else ''}")
    if env.get("threads"):
        lines.append("threads: " + ", ".join(f"{k}={v}" for k, v in env["threads"].items()))
    return "\n".join(lines)
