"""What the dashboard's pages carry to the browser (pure text): their style, the index's
filters, and the site's chart script: Bokeh, its inflater and the charts' drawing.
Plain DOM otherwise, no network: the site opens from the file system."""
from __future__ import annotations

import base64
import gzip

STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 1240px; color: #222;
       padding: 0 0.5em; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; width: 100%; table-layout: fixed; }
td, h1 { overflow-wrap: anywhere; } th.sortable { cursor: pointer; user-select: none; }
.controls { display: flex; gap: 1em; flex-wrap: wrap; align-items: center; margin: 1em 0; }
.controls input { width: 22em; } ul.latest { margin: 0; padding: 0; list-style: none; }
th, td { border-bottom: 1px solid #ddd; padding: 0.3em 0.7em; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.slower { color: #b00020; } .faster { color: #1a7f37; } code { font-size: 90%; }
.muted { color: #777; } section.step:target { background: #fff6d5; }
"""

# Bokeh's scripts (BokehJS and its plotting API, 1.3 MiB) are written gzipped (0.5 MiB as
# base64) and the browser inflates them (DecompressionStream: Chromium 80, Firefox 113,
# Safari 16.4) before the charts are drawn; no request, so it works from file:// too.
_INFLATE = """
window.CHARTS_READY = (function () {
  if (typeof DecompressionStream === 'undefined') {
    var note = 'The charts need a newer browser (Chromium 80, Firefox 113, Safari 16.4 or '
      + 'later: DecompressionStream); the tables below are complete.';
    document.addEventListener('DOMContentLoaded', function () {
      var p = document.createElement('p');
      p.className = 'slower'; p.id = 'no-charts';
      p.textContent = note;
      document.body.insertBefore(p, document.body.firstChild);
    });
    return new Promise(function () {});
  }
  var bytes = Uint8Array.from(atob(CHARTS_GZIP), function (c) { return c.charCodeAt(0); });
  var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
  return new Response(stream).text().then(function (code) {
    var tag = document.createElement('script'); tag.text = code;
    document.head.appendChild(tag);
  });
})();
"""

# drawCharts(FIGURES) draws a page's charts (`views.figure`: plain data, no per-point text)
# with Bokeh's plotting API: each point's hover text comes from the site's commit table
# (assets/commits.js) by its x, so the commits are written once per site, not once per
# point. A click on a change-point marker opens that step's section below the charts.
# window.CHARTS holds each metric's figure and marker source (the browser tests read them).
# Part of the site's chart script (chart_script), written once, not on every page.
_CHARTS = """
window.drawCharts = function (FIGURES) {
  var HEIGHT = 380, LEGEND_INSIDE = 5, LEGEND_COLUMNS = 5;
  var COLORS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f',
                '#bcbd22', '#17becf'];
  function numbers(values) {
    return values.map(function (v) { return v === null ? NaN : v; });
  }
  function number(v) { return isNaN(v) ? '-' : String(Number(v.toPrecision(4))); }
  function commits(xs) {
    var out = {sha: [], date: [], subject: []};
    xs.forEach(function (i) {
      var c = COMMITS[i] || ['?', '', ''];
      out.sha.push(c[0].slice(0, 12)); out.date.push(c[1]); out.subject.push(c[2]);
    });
    return out;
  }
  function draw(metric, chart) {
    var P = Bokeh.Plotting;
    var fig = P.figure({height: HEIGHT, sizing_mode: 'stretch_width', title: chart.title,
                        x_axis_label: 'commit (oldest to newest)', y_axis_label: chart.title,
                        tools: 'pan,box_zoom,wheel_zoom,reset,save'});
    if (chart.from_zero) { fig.y_range.start = 0; }
    fig.yaxis.formatter = new Bokeh.BasicTickFormatter({use_scientific: false});
    var pointed = [];
    chart.lines.forEach(function (line, k) {
      var color = COLORS[k % COLORS.length];
      var data = commits(line.x);
      data.x = line.x; data.y = numbers(line.y); data.value = [];
      if (line.low) { data.low = numbers(line.low); data.high = numbers(line.high); }
      data.y.forEach(function (y, n) {
        data.value.push(number(y) + ' ' + chart.unit + (line.low ? ' (' + number(data.low[n])
          + ' .. ' + number(data.high[n]) + ')' : ''));
      });
      var source = new Bokeh.ColumnDataSource({data: data});
      var style = {source: source, line_color: color, legend_label: line.name};
      fig.line({field: 'x'}, {field: 'y'}, style);
      if (line.low) {
        fig.segment({field: 'x'}, {field: 'low'}, {field: 'x'}, {field: 'high'},
                    {source: source, line_color: color, line_alpha: 0.5,
                     legend_label: line.name});
      }
      pointed.push(fig.scatter({field: 'x'}, {field: 'y'}, {
        source: source, size: 5, color: color, legend_label: line.name, name: line.name}));
    });
    if (chart.failed) {
      var failed = commits(chart.failed.x);
      failed.x = chart.failed.x; failed.y = numbers(chart.failed.y);
      failed.value = chart.failed.text;
      pointed.push(fig.scatter({field: 'x'}, {field: 'y'}, {
        source: new Bokeh.ColumnDataSource({data: failed}), marker: 'x', size: 9,
        color: '#7f7f7f', legend_label: 'failed or skipped', name: 'failed or skipped'}));
    }
    var steps = null;
    if (chart.steps) {
      var s = chart.steps, marks = commits(s.x);
      marks.x = s.x; marks.y = numbers(s.y); marks.value = s.text; marks.anchor = s.anchor;
      marks.fill = s.transient.map(function (t) { return t ? 0 : 1; });
      steps = new Bokeh.ColumnDataSource({data: marks});
      var marker = fig.scatter({field: 'x'}, {field: 'y'}, {
        source: steps, marker: 'diamond', size: 14, line_color: '#d62728',
        fill_color: '#d62728', fill_alpha: {field: 'fill'}, legend_label: 'change points',
        name: 'change point (click for details)'});
      pointed.push(marker);
      fig.add_tools(new Bokeh.TapTool({renderers: [marker]}));
      steps.selected.properties.indices.change.connect(function () {
        var i = steps.selected.indices[0];
        if (i !== undefined) { location.hash = steps.data.anchor[i]; }
      });
    }
    chart.rules.forEach(function (rule) {
      var step = rule.kind === 'step';
      fig.add_layout(new Bokeh.Span({location: rule.x, dimension: 'height',
        line_color: step ? '#d62728' : '#9467bd', line_dash: step ? 'dashed' : 'dotted'}));
    });
    chart.spans.forEach(function (span) {
      fig.add_layout(new Bokeh.BoxAnnotation({left: span[0], right: span[1],
        fill_color: '#d62728', fill_alpha: 0.12, line_alpha: 0}));
    });
    fig.add_tools(new Bokeh.HoverTool({renderers: pointed, tooltips: [
      ['', '$name'], ['commit', '@sha @date'], ['', '@subject'], ['', '@value']]}));
    var legend = fig.legend;
    legend.click_policy = 'hide';
    legend.location = 'top_left';
    if (legend.items.length > LEGEND_INSIDE) {
      // many machines: the legend goes under the chart, in rows, not over the lines
      fig.center = fig.center.filter(function (a) { return a !== legend; });
      legend.orientation = 'horizontal';
      legend.ncols = LEGEND_COLUMNS;
      fig.add_layout(legend, 'below');
      fig.height = HEIGHT + 24 * Math.ceil(legend.items.length / LEGEND_COLUMNS);
    } else {
      legend.background_fill_alpha = 0.6;
    }
    window.CHARTS[metric] = {figure: fig, steps: steps};
    return P.show(fig, document.getElementById('chart-' + metric));
  }
  window.CHARTS = {};
  window.CHARTS_DRAWN = window.CHARTS_READY.then(function () {
    return Promise.all(Object.keys(FIGURES).map(function (metric) {
      return draw(metric, FIGURES[metric]);
    }));
  });
};
"""


# The index's search, machine and environment filters and column sorting: plain DOM, no
# library, so the page works from the file system.
FILTER = """
(function () {
  var table = document.getElementById('benchmarks');
  var rows = Array.from(table.tBodies[0].rows);
  var search = document.getElementById('search');
  var machine = document.getElementById('machine');
  var environment = document.getElementById('environment');
  var metric = document.getElementById('metric');
  function showTrend(row) {
    // the trend of the first series on the chosen machine and environment
    var cell = row.querySelector('td[data-trends]');
    if (!cell) { return; }
    var trends = cell.trends || (cell.trends = JSON.parse(cell.dataset.trends));
    var pick = trends.filter(function (t) {
      return (!machine.value || t[0] === machine.value)
        && (!environment.value || t[1] === environment.value);
    })[0] || trends[0];
    var line = cell.querySelector('polyline');
    var ys = pick[2].split(' ');
    var step = +line.ownerSVGElement.getAttribute('width') / Math.max(ys.length - 1, 1);
    line.setAttribute('points', ys.map(function (y, i) {
      return Math.round(i * step) + ',' + y;
    }).join(' '));
    cell.title = pick[0] + (pick[1] ? ' \u00b7 ' + pick[1] : '');
  }
  function showSteps(row) {
    // the count and the latest of the steps on the chosen machine and environment
    var cell = row.querySelector('td[data-steps]');
    if (!cell) { return; }
    var count = cell.previousElementSibling;
    cell.all = cell.all || [count.textContent, cell.innerHTML, cell.dataset.sort];
    var picks = (machine.value || environment.value) && JSON.parse(cell.dataset.steps)
      .filter(function (s) {
        return (!machine.value || s[0] === machine.value)
          && (!environment.value || s[1] === environment.value);
      });
    var last = (picks || []).reduce(function (a, s) { return s[3] > a[3] ? s : a; },
                                    [0, 0, 0, '', '<span class="muted">none</span>']);
    count.textContent = count.dataset.sort = !picks ? cell.all[0]
      : picks.reduce(function (a, s) { return a + s[2]; }, 0);
    cell.innerHTML = picks ? last[4] : cell.all[1];
    cell.dataset.sort = picks ? last[3] : cell.all[2];
  }
  function apply() {
    var words = search.value.toLowerCase().split(/\\s+/).filter(Boolean);
    var shown = 0;
    rows.forEach(function (row) {
      var name = row.dataset.name.toLowerCase();
      var ok = words.every(function (w) { return name.indexOf(w) >= 0; })
        && (!machine.value || row.dataset.machines.split('\\n').indexOf(machine.value) >= 0)
        && (!environment.value
            || row.dataset.environments.split('\\n').indexOf(environment.value) >= 0)
        && (!metric.value || row.dataset.metric === metric.value);
      row.hidden = !ok;
      if (ok) { shown += 1; showTrend(row); showSteps(row); }
    });
    document.getElementById('shown').textContent = shown + ' of ' + rows.length + ' series';
  }
  // 'change' too: a choice in a list fires only that in some browsers (and in WebDriver)
  [search, machine, environment, metric].forEach(function (el) {
    el.addEventListener('input', apply);
    el.addEventListener('change', apply);
  });
  Array.from(table.tHead.rows[0].cells).forEach(function (th, column) {
    if (!th.classList.contains('sortable')) { return; }
    th.addEventListener('click', function () {
      var down = th.dataset.order !== 'asc';
      th.dataset.order = down ? 'asc' : 'desc';
      rows.sort(function (a, b) {
        var x = a.cells[column].dataset.sort || a.cells[column].textContent;
        var y = b.cells[column].dataset.sort || b.cells[column].textContent;
        var nx = parseFloat(x), ny = parseFloat(y);
        var c = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);
        return down ? c : -c;
      });
      rows.forEach(function (row) { table.tBodies[0].appendChild(row); });
    });
  });
  apply();
})();
"""


def chart_script(bokeh_js: bytes) -> bytes:
    """The site's chart script (SCRIPT): `bokeh_js` (BokehJS, then its plotting API)
    gzipped, what inflates it, and drawCharts, which each benchmark's page calls."""
    packed = base64.b64encode(gzip.compress(bokeh_js, 9, mtime=0)).decode("ascii")
    return f'var CHARTS_GZIP = "{packed}";\n{_INFLATE}{_CHARTS}'.encode("ascii")


