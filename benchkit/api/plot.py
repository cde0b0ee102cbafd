"""PNG plots of sample distributions and A/B comparisons (needs the `plot` extra)."""
from __future__ import annotations

import io
from typing import Sequence

from benchkit.core.compare.comparison import Comparison, benchmark_name
from benchkit.errors import BenchkitError
from benchkit.core.records.schema import Results


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise BenchkitError("plotting needs matplotlib: pip install "
                            "'benchkit-perf[plot]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def render_png(results: Sequence[tuple[str, Results]],
               comparison: Comparison | None = None) -> bytes:
    """Per-benchmark distributions of per-run times (one box per file); with two files the
    ratio NEW/BASE with its confidence interval; where the files hold memory counts, bytes
    per run (one bar per file, allocations per run written beside it)."""
    plt = _pyplot()
    names = list(dict.fromkeys(benchmark_name(m) for _, r in results for m in r.measurements))
    memory_names = list(dict.fromkeys(benchmark_name(m) for _, r in results for m in r.memory))
    if not names and not memory_names:
        raise BenchkitError("no wall-time measurements or memory counts to plot in "
                            + ", ".join(label for label, _ in results))
    wall_rows = [r for r in comparison.rows if r.wall is not None] if comparison else []
    panels = [p for p, shown in (("distributions", names), ("comparison", wall_rows),
                                 ("memory", memory_names)) if shown]
    height = max(len(names), len(memory_names), 1)
    fig, axes = plt.subplots(1, len(panels), figsize=(7 * len(panels), 0.6 * height + 2),
                             squeeze=False)
    for ax, panel in zip(axes[0], panels):
        if panel == "distributions":
            _distributions(ax, results, names)
        elif panel == "comparison":
            _comparison(ax, wall_rows)
        else:
            _memory(ax, results, memory_names)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    plt.close(fig)
    return buffer.getvalue()


def _offsets(count: int) -> tuple[float, list[float]]:
    height = 0.8 / count
    return height, [(k - (count - 1) / 2) * height for k in range(count)]


def _distributions(ax, results, names) -> None:
    height, offsets = _offsets(len(results))
    for k, (label, r) in enumerate(results):
        by_name = {benchmark_name(m): m for m in r.measurements}
        data = [[t * 1e6 for t in by_name[n].times] if n in by_name else [] for n in names]
        positions = [i + offsets[k] for i in range(len(names))]
        box = ax.boxplot(data, positions=positions, widths=height * 0.9, vert=False,
                         patch_artist=True, manage_ticks=False, showfliers=True)
        for patch in box["boxes"]:
            patch.set_facecolor(f"C{k}")
            patch.set_alpha(0.6)
        ax.plot([], [], color=f"C{k}", label=label, linewidth=6, alpha=0.6)
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels(names)
    ax.set_xscale("log")
    ax.set_xlabel("time per run (us)")
    ax.set_title("sample distributions")
    ax.legend(loc="best")


def _comparison(ax, rows) -> None:
    colors = {"faster": "tab:green", "slower": "tab:red", "unchanged": "tab:gray",
              "inconclusive": "tab:orange"}
    for y, r in enumerate(rows):
        ax.errorbar(r.wall.ratio, y, xerr=[[r.wall.ratio - r.wall.ci_low],
                                           [r.wall.ci_high - r.wall.ratio]],
                    fmt="o", color=colors[r.wall.verdict], capsize=4)
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_yticks(list(range(len(rows))))
    ax.set_yticklabels([f"{r.name} ({r.wall.verdict})" for r in rows])
    ax.set_xlabel("median ratio NEW / BASE (99% CI)")
    ax.set_title("A/B comparison")


def _memory(ax, results, names) -> None:
    from benchkit.core.measure.memory import format_bytes
    height, offsets = _offsets(len(results))
    for k, (label, r) in enumerate(results):
        by_name = {benchmark_name(m): m for m in r.memory}
        ys = [i + offsets[k] for i, n in enumerate(names) if n in by_name]
        shown = [by_name[n] for n in names if n in by_name]
        ax.barh(ys, [m.bytes_per_run for m in shown], height=height * 0.9, color=f"C{k}",
                alpha=0.6, label=label)
        for y, m in zip(ys, shown):
            ax.annotate(f" {format_bytes(m.bytes_per_run)}, {m.allocations_per_run:,.4g} allocs",
                        (m.bytes_per_run, y), va="center", fontsize=8)
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels(names)
    ax.set_xscale("symlog")
    ax.set_xlabel("bytes requested per run (exact)")
    ax.set_title("memory per run")
    ax.legend(loc="best")


def render_scaling_png(fits, metric: str) -> bytes:
    """Log-log plots of cost against the parameter, one panel per fitted benchmark: the
    points with their intervals (the IQR of wall times) and the best fitted curve."""
    import numpy as np
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(fits), figsize=(5 * len(fits), 4), squeeze=False)
    for ax, f in zip(axes[0], fits):
        n = np.array([p.n for p in f.points])
        cost = np.array([p.cost for p in f.points])
        low = np.array([p.cost - p.low if p.low is not None else 0 for p in f.points])
        high = np.array([p.high - p.cost if p.high is not None else 0 for p in f.points])
        ax.errorbar(n, cost, yerr=[low, high], fmt="o", capsize=3, label="measured")
        grid = np.geomspace(n.min(), n.max(), 100)
        best = f.best
        ax.plot(grid, best.coefficient * best.complexity.of(grid),
                label=f"{best.complexity.value} fit (rms {best.rms:.1%})")
        for j in f.jumps:
            ax.axvspan(j.after, j.before, color="tab:orange", alpha=0.15)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(f.param)
        ax.set_ylabel("seconds per run" if metric == "time" else "instructions per run")
        ax.set_title(f.benchmark, fontsize=9)
        ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    plt.close(fig)
    return buffer.getvalue()
