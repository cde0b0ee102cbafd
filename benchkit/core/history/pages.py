"""The dashboard's HTML pages (pure: views and pre-rendered chart fragments in, HTML text
out). Every page is static and loads its script from the site's own `assets/` folder, so the
site opens from the file system with no server and no network."""
from __future__ import annotations

from html import escape
from typing import Sequence

from benchkit.core.history.dashboard import (BenchmarkView, format_value, latest, sparkline,
                                             step_anchor)
from benchkit.core.history.series import HistoryMetric
from benchkit.core.text import printable

SCRIPT = "assets/plotly.min.js"

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 1200px; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border-bottom: 1px solid #ddd; padding: 0.3em 0.7em; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.slower { color: #b00020; } .faster { color: #1a7f37; }
code { font-size: 90%; } .muted { color: #777; }
section.step:target { background: #fff6d5; }
"""

# A click on a change-point marker opens that step's section below the charts.
_CLICK = """
document.querySelectorAll('.js-plotly-plot').forEach(function (plot) {
  plot.on('plotly_click', function (event) {
    var anchor = event.points[0].customdata;
    if (anchor) { location.hash = anchor; }
  });
});
"""


def _e(text: object) -> str:
    return escape(printable(str(text)))


def _change(change: float | None) -> str:
    if change is None:
        return '<span class="muted">-</span>'
    css = "slower" if change > 0 else "faster" if change < 0 else ""
    return f'<span class="{css}">{change:+.2%}</span>'


def _page(title: str, body: str, script_prefix: str = "") -> str:
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<title>{_e(title)}</title><style>{_STYLE}</style>'
            f'<script src="{script_prefix}{SCRIPT}"></script></head>\n'
            f'<body>\n{body}\n</body></html>\n')


def index_page(views: Sequence[BenchmarkView], *, source: str, generated: str,
               commits: int) -> str:
    """The site's front page: a row per benchmark with its latest change and sparklines."""
    machines = sorted({s.machine for v in views for s in v.series})
    rows = []
    for v in views:
        cells = [f'<td><a href="benchmarks/{v.slug}.html">{_e(v.benchmark)}</a></td>']
        for metric in HistoryMetric:
            shown = v.of(metric)
            if not shown:
                cells.append('<td class="muted">-</td><td></td>')
                continue
            point, _ = latest(shown[0])
            cells.append(f'<td class="num">{_e(format_value(metric, point.value))}</td>'
                         f'<td>{sparkline([p.value for p in shown[0].points])}</td>')
        step = v.latest_step()
        cells.append("<td class=\"muted\">none</td>" if step is None else
                     f'<td>{_change(step.change)} {step.metric} at <a href="benchmarks/'
                     f'{v.slug}.html#{step_anchor(step)}"><code>{step.commit.sha[:12]}'
                     f'</code></a></td>')
        rows.append("<tr>" + "".join(cells) + "</tr>")
    body = (f"<h1>benchkit history</h1>\n<p>{len(views)} benchmarks, {commits} commits, "
            f"{len(machines)} machine(s): {', '.join(_e(m) for m in machines) or '-'}. "
            f"From <code>{_e(source)}</code>, generated {_e(generated)}. Sparklines: the "
            f"first machine's series, oldest to newest.</p>\n"
            "<table id=\"benchmarks\"><thead><tr><th>benchmark</th><th>time (latest)</th>"
            "<th>time</th><th>instructions (latest)</th><th>instructions</th>"
            "<th>latest change point</th></tr></thead>\n<tbody>\n" + "\n".join(rows)
            + "\n</tbody></table>")
    return _page("benchkit history", body)


def benchmark_page(view: BenchmarkView, charts: dict[HistoryMetric, str], *,
                   generated: str) -> str:
    """One benchmark: a chart per metric (`charts`: HTML fragments), then its change points,
    each with the functions that moved for instruction counts."""
    parts = [f'<p><a href="../index.html">all benchmarks</a></p><h1>{_e(view.benchmark)}</h1>',
             f'<p class="muted">generated {_e(generated)}; hover a point for its commit, '
             f'click a red marker for the change point.</p>']
    for metric in HistoryMetric:
        if metric in charts:
            parts.append(f'<h2>{metric}</h2>\n<div class="chart">{charts[metric]}</div>')
    parts.append(f"<h2>change points ({len(view.steps)})</h2>")
    if not view.steps:
        parts.append('<p class="muted">none found</p>')
    for st in sorted(view.steps, key=lambda s: s.commit.key()):
        parts.append(
            f'<section class="step" id="{step_anchor(st)}"><h3>{_change(st.change)} '
            f'{st.metric} on {_e(st.machine)} at <code>{st.commit.sha[:12]}</code></h3>'
            f'<p>{_e(st.commit.message)} <span class="muted">({_e(st.commit.date)}; after '
            f'<code>{st.previous.sha[:12]}</code>)</span><br>'
            f'{_e(format_value(st.metric, st.before))} &rarr; '
            f'{_e(format_value(st.metric, st.after))}, interval {st.ci_low:+.2%} .. '
            f'{st.ci_high:+.2%}; {_e(st.evidence)}</p>' + _functions(st) + "</section>")
    return _page(view.benchmark, "\n".join(parts) + f"<script>{_CLICK}</script>", "../")


def _functions(st) -> str:
    if not st.functions:
        return ""
    rows = "".join(f'<tr><td class="num">{f.delta:+,.1f}</td><td class="num">{f.before:,.1f}'
                   f'</td><td class="num">{f.after:,.1f}</td><td><code>{_e(f.function)}'
                   f'</code></td></tr>' for f in st.functions)
    return ("<table class=\"functions\"><thead><tr><th>delta</th><th>before</th><th>after</th>"
            f"<th>function (instructions per run)</th></tr></thead><tbody>{rows}</tbody></table>")
