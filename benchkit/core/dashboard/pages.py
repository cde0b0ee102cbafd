"""The dashboard's HTML pages (pure: views and pre-rendered chart fragments in, HTML text
out). Every page is static and loads its script from the site's own `assets/` folder, so the
site opens from the file system with no server and no network."""
from __future__ import annotations

import json
from html import escape
from typing import Sequence

from benchkit.core.dashboard.scripts import FILTER, STYLE
from benchkit.core.dashboard.views import (BenchmarkView, latest, series_name, step_anchor,
                                           trend, trend_line)
from benchkit.core.history.series import values_of
from benchkit.core.history.steps import SharedStep, Step
from benchkit.core.metrics.metric import history_metrics, metric_named
from benchkit.core.text import printable

SCRIPT = "assets/bokeh.gz.js"   # the chart script (scripts.chart_script)
COMMITS = "assets/commits.js"
SHARED_LINKS = 12     # benchmarks linked from a shared step on the front page


def _e(text: object) -> str:
    return escape(printable(str(text)))


def _change(change: float | None) -> str:
    if change is None:
        return '<span class="muted">-</span>'
    css = "slower" if change > 0 else "faster" if change < 0 else ""
    return f'<span class="{css}">{change:+.2%}</span>'


def _page(title: str, body: str, scripts: Sequence[str] = ()) -> str:
    tags = "".join(f'<script src="{src}"></script>' for src in scripts)
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<title>{_e(title)}</title><style>{STYLE}</style>{tags}</head>\n'
            f'<body>\n{body}\n</body></html>\n')


def _options(element_id: str, label: str, values: Sequence[str]) -> str:
    options = "".join(f'<option value="{_e(v)}">{_e(v)}</option>' for v in values)
    return (f'<label>{label} <select id="{element_id}"><option value="">all</option>'
            f'{options}</select></label>')


def _verdict(word: str) -> str:
    """What `--confirm` said of a step, in a word (its page has the whole of it)."""
    return f' <strong class="verdict">{_e(word)}</strong>' if word else ""


def _shared(shared: Sequence[SharedStep], slugs: dict[str, str]) -> str:
    """The steps many series take together, each with links to its benchmarks' pages."""
    items = []
    for group in shared:
        names = sorted({s.benchmark for s in group.steps})
        low, high = group.extremes
        links = ", ".join(f'<a href="benchmarks/{slugs[n]}.html">{_e(n)}</a>'
                          for n in names[:SHARED_LINKS] if n in slugs)
        more = f" and {len(names) - SHARED_LINKS} more" if len(names) > SHARED_LINKS else ""
        items.append(
            f"<li>{group.count} of {group.series} {_e(group.metric)} series on "
            f"{_e(group.machine)} {'up' if group.up else 'down'} ({_change(low)} .. "
            f"{_change(high)})"
            f" in <code>{group.after.sha[:12]}..{group.through.sha[:12]}</code>: {links}{more}"
            "</li>")
    return ("" if not items else "<h2>shared steps</h2><p class=\"muted\">Many series "
            "stepping the same way in one range of commits: likely one change they have in "
            "common (code they share, a dependency, or the machine).</p><ul>"
            + "".join(items) + "</ul>\n")


def _latest_step(steps: Sequence[Step], slug: str) -> tuple[str, str]:
    """(sort key, HTML) of the front page's latest change point cell: the latest of
    `steps`. The key sorts as text (date, then place)."""
    if not steps:
        return "", '<span class="muted">none</span>'
    step = max(steps, key=lambda st: st.commit.key())
    date, order, _ = step.commit.key()
    return f"{date}|{order + 1:012d}", (
        f'{_change(step.change)} {"at" if step.placed else "not placed, near"} '
        f'<a href="benchmarks/{slug}.html#{step_anchor(step)}"><code>{step.commit.sha[:12]}'
        f'</code></a> <span class="muted">{_e(series_name(step))}</span>'
        f'{_verdict(step.verdict)}')


def index_page(views: Sequence[BenchmarkView], *, source: str, generated: str,
               commits: int, shared: Sequence[SharedStep] = ()) -> str:
    """The site's front page: the steps many series share, then a row per benchmark and
    metric with the latest value on every machine and environment, its trend, its steps
    and the latest one; search, filters by machine, environment and metric, and sortable
    columns."""
    machines = sorted({s.machine for v in views for s in v.series})
    environments = sorted({s.environment for v in views for s in v.series if s.environment})
    metrics = [m for m in history_metrics() if any(v.of(m) or v.failing(m) for v in views)]
    rows = []
    for v in views:
        for metric in metrics:
            shown, failing = v.of(metric), v.failing(metric)
            if not shown and not failing:
                continue
            latest_cells = "".join(
                f"<li>{_e(metric_named(metric).cell(latest(s)[0].value, s.unit))} "
                f'<span class="muted">{_e(series_name(s))}</span></li>' for s in shown) + "".join(
                f'<li><span class="slower">{_e(_failures(s))}</span> '
                f'<span class="muted">{_e(series_name(s))}</span></li>' for s in failing)
            steps = [st for st in v.steps if st.metric == metric and st.to_act_on]
            everyone = shown + failing
            last = _latest_step(steps, v.slug)
            # each machine's and environment's count and latest step, for the filters
            chosen = [[*where, len(mine), *_latest_step(mine, v.slug)] for where, mine in (
                (w, [st for st in steps if (st.machine, st.environment) == w])
                for w in dict.fromkeys((s.machine, s.environment) for s in everyone))]
            chosen = "" if len(chosen) < 2 else ' data-steps="{}"'.format(
                _e(json.dumps(chosen, separators=(",", ":"))))
            # every machine's and environment's trend, for the filters to show the chosen one
            heights = [trend(values_of(s.points).tolist()) for s in shown]
            trends = "" if len(shown) < 2 else ' data-trends="{}"'.format(_e(json.dumps(
                [[s.machine, s.environment, " ".join(map(str, h))]
                 for s, h in zip(shown, heights)], separators=(",", ":"))))
            rows.append(
                f'<tr data-name="{_e(v.benchmark)}" data-metric="{metric}" '
                f'data-machines="{_e(chr(10).join(sorted({s.machine for s in everyone})))}" '
                f'data-environments="'
                f'{_e(chr(10).join(sorted({s.environment for s in everyone})))}'
                f'"><td><a href="benchmarks/{v.slug}.html">{_e(v.benchmark)}</a></td>'
                f'<td>{metric}</td><td><ul class="latest">{latest_cells}</ul></td>'
                f'<td title="{_e(series_name(everyone[0]))}"{trends}>'
                f'{trend_line(heights[0]) if heights else ""}</td>'
                f'<td class="num" data-sort="{len(steps)}">{len(steps)}</td>'
                f'<td data-sort="{_e(last[0])}"{chosen}>{last[1]}</td></tr>')
    body = (f"<h1>benchkit history</h1>\n<p>{len(views)} benchmarks, {commits} commits, "
            f"{len(machines)} machine(s): {', '.join(_e(m) for m in machines) or '-'}. "
            f"From <code>{_e(source)}</code>, generated {_e(generated)}. Trend: oldest to "
            f"newest, on the machine and environment chosen (else the first); steps: change "
            f"points that hold "
            f"(transient and pending ones are on each benchmark's page).</p>\n"
            + _shared(shared, {v.benchmark: v.slug for v in views}) +
            '<div class="controls"><label>search <input id="search" type="search" '
            'placeholder="benchmark name"></label>'
            + _options("machine", "machine", machines)
            + _options("environment", "environment", environments)
            + _options("metric", "metric", [str(m) for m in metrics])
            + '<span id="shown" class="muted"></span></div>\n'
            "<table id=\"benchmarks\"><colgroup><col style=\"width:34%\"><col style=\"width:"
            "8%\"><col style=\"width:22%\"><col style=\"width:130px\"><col style=\"width:6%\">"
            "<col></colgroup><thead><tr><th class=\"sortable\">benchmark</th>"
            "<th class=\"sortable\">metric</th><th>latest, per machine</th><th>trend</th>"
            "<th class=\"sortable\">steps</th><th class=\"sortable\">latest change point"
            "</th></tr></thead>\n<tbody>\n" + "\n".join(rows)
            + f"\n</tbody></table><script>{FILTER}</script>")
    return _page("benchkit history", body)


def commits_script(table: list[list[str]]) -> str:
    """assets/commits.js: the commit table every page's hover text reads."""
    data = json.dumps(table, separators=(",", ":")).replace("</", "<\\/")
    return f"var COMMITS = {data};\n"


def benchmark_page(view: BenchmarkView, figures: dict[str, dict], *,
                   generated: str, shared: Sequence[SharedStep] = ()) -> str:
    """One benchmark: a chart per metric (`figures`: `dashboard.figure`'s plain data, drawn
    in the browser), then its change points, each with the functions that moved for instruction
    counts and the shared step (of `shared`) it is part of."""
    group_of = {id(st): group for group in shared for st in group.steps}
    parts = [f'<p><a href="../index.html">all benchmarks</a></p><h1>{_e(view.benchmark)}</h1>',
             f'<p class="muted">generated {_e(generated)}; hover a point for its commit, '
             f'click a red marker for the change point, a legend entry to hide its series.</p>']
    for metric in history_metrics():
        if metric in figures:
            parts.append(f'<h2>{metric}</h2>\n<div class="chart" id="chart-{metric}"></div>')
    never = view.failing()
    if never:
        parts.append("<h2>no value yet</h2><ul>" + "".join(
            f'<li>{_e(s.metric)} on {_e(series_name(s))}: <span class="slower">'
            f"{_e(_failures(s))}</span></li>" for s in never) + "</ul>")
    parts.append(f"<h2>change points ({len(view.steps)})</h2>")
    if not view.steps:
        parts.append('<p class="muted">none found</p>')
    for st in sorted(view.steps, key=lambda s: s.commit.key()):
        where = _e(st.machine) + (f", {_e(st.environment)}" if st.environment else "")
        kind = st.mark
        confirmed = f"; {_e(st.confirmation)}" if st.confirmation else ""
        group = group_of.get(id(st))
        if group is not None:
            confirmed += (f"; <strong>shared</strong>: {group.count} of {group.series} "
                          f"series on {_e(group.machine)} step this way in "
                          f"<code>{group.after.sha[:12]}..{group.through.sha[:12]}</code> "
                          '(<a href="../index.html">all of them</a>)')
        after, through = st.range
        at = (f"at <code>{st.commit.sha[:12]}</code>" if st.placed else
              "not placed: somewhere in the range below")
        parts.append(
            f'<section class="step" id="{step_anchor(st)}"><h3>{_change(st.change)}{kind} '
            f'{st.metric} on {where} {at}</h3>'
            f'<p>{_e(st.commit.message) if st.placed else "best fit: " + _e(st.commit.sha[:12])}'
            f' <span class="muted">({_e(st.commit.date)}; in the '
            f'range <code>{after.sha[:12]}..{through.sha[:12]}</code>)</span><br>'
            f'{_e(metric_named(st.metric).cell(st.before))} &rarr; '
            f'{_e(metric_named(st.metric).cell(st.after))}, interval {st.ci_low:+.2%} .. '
            f'{st.ci_high:+.2%}; {_e(st.evidence)}{confirmed}</p>' + _functions(st)
            + "</section>")
    if view.environment_changes:
        parts.append("<h2>environment changes</h2><ul>" + "".join(
            f"<li>{_e(c.metric)} on {_e(c.machine)}: {_e(c.before)} &rarr; {_e(c.after)} at "
            f"<code>{c.commit.sha[:12]}</code> (not a code change)</li>"
            for c in view.environment_changes) + "</ul>")
    data = json.dumps({str(m): f for m, f in figures.items()}, separators=(",", ":"),
                      allow_nan=False).replace("</", "<\\/")
    return _page(view.benchmark, "\n".join(parts) + f"<script>var FIGURES = {data};\n"
                 "drawCharts(FIGURES);</script>", (f"../{SCRIPT}", f"../{COMMITS}"))


def _failures(series) -> str:
    """What a series that never gave a value did: how often it failed or was skipped, and
    the last commit it ran at."""
    counts: dict[str, int] = {}
    for _, status in series.failed:
        counts[str(status)] = counts.get(str(status), 0) + 1
    last = series.failed[-1][0].sha[:12]
    return ", ".join(f"{status} at {n} commit(s)" for status, n in sorted(counts.items())) \
        + f" (last {last})"


def _functions(st) -> str:
    if not st.functions:
        return ""
    rows = "".join(f'<tr><td class="num">{f.delta:+,.1f}</td><td class="num">{f.before:,.1f}'
                   f'</td><td class="num">{f.after:,.1f}</td><td><code>{_e(f.function)}'
                   f'</code></td></tr>' for f in st.functions)
    return ("<table class=\"functions\"><thead><tr><th>delta</th><th>before</th><th>after</th>"
            f"<th>function (instructions per run)</th></tr></thead><tbody>{rows}</tbody></table>")
