"""PNG plots of sample distributions and A/B comparisons (needs the `plot` extra)."""
from __future__ import annotations

import io
from typing import Sequence

from benchkit.core.comparison import Comparison, benchmark_name
from benchkit.errors import BenchkitError
from benchkit.core.schema import Results


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise BenchkitError("plotting needs matplotlib: pip install 'benchkit[plot]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def render_png(results: Sequence[tuple[str, Results]],
               comparison: Comparison | None = None) -> bytes:
    """Per-benchmark distributions of per-run times (one box per file), and with two files
    the ratio NEW/BASE with its confidence interval."""
    plt = _pyplot()
    names = list(dict.fromkeys(benchmark_name(m) for _, r in results for m in r.measurements))
    if not names:
        raise BenchkitError("no wall-time measurements to plot in "
                            + ", ".join(label for label, _ in results))
    panels = 2 if comparison is not None else 1
    fig, axes = plt.subplots(1, panels, figsize=(7 * panels, 0.6 * len(names) + 2),
                             squeeze=False)
    ax = axes[0][0]
    height = 0.8 / len(results)
    for k, (label, r) in enumerate(results):
        by_name = {benchmark_name(m): m for m in r.measurements}
        data = [[t * 1e6 for t in by_name[n].times] if n in by_name else [] for n in names]
        positions = [i + (k - (len(results) - 1) / 2) * height for i in range(len(names))]
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
    if comparison is not None:
        ax2 = axes[0][1]
        rows = [r for r in comparison.rows if r.wall is not None]
        ys = range(len(rows))
        colors = {"faster": "tab:green", "slower": "tab:red", "unchanged": "tab:gray",
                  "inconclusive": "tab:orange"}
        for y, r in zip(ys, rows):
            ax2.errorbar(r.wall.ratio, y, xerr=[[r.wall.ratio - r.wall.ci_low],
                                                [r.wall.ci_high - r.wall.ratio]],
                         fmt="o", color=colors[r.wall.verdict], capsize=4)
        ax2.axvline(1.0, color="black", linewidth=0.8)
        ax2.set_yticks(list(ys))
        ax2.set_yticklabels([f"{r.name} ({r.wall.verdict})" for r in rows])
        ax2.set_xlabel("median ratio NEW / BASE (99% CI)")
        ax2.set_title("A/B comparison")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    plt.close(fig)
    return buffer.getvalue()
