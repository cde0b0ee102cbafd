"""What the history dashboard shows (pure): one view per benchmark with its series and steps,
the charts of those views as plain data, trend lines, the markdown summary for a
pull-request comment, and the table `history list` prints. Turning figures into HTML and
writing the site is the caller's job."""
from __future__ import annotations

import dataclasses
import hashlib
import math
import re
import statistics
from typing import Any, Sequence

from benchkit.core.history.changes import EnvironmentChange
from benchkit.core.metrics.metric import metric_named
from benchkit.core.history.machine.slower_share import held_by_share
from benchkit.core.history.machine.slower_stretches import held_by_stretch_spell
from benchkit.core.history.series import (Commit, Point, Series, commits_of, observations_of,
                                          values_of)
from benchkit.core.history.steps import Step
from benchkit.core.text import printable

TREND_POINTS = 60      # a sparkline's points at most

_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def slug(name: str) -> str:
    """A file-name-safe, unique name for a page: readable start, digest end (two names that
    clean up to the same text still get different pages)."""
    readable = _SAFE.sub("_", name).strip("_.")[:60] or "benchmark"
    return f"{readable}-{hashlib.sha1(name.encode('utf-8')).hexdigest()[:8]}"


def step_anchor(step: Step) -> str:
    """The id of a step's section on its benchmark's page."""
    where = slug(step.machine + (f"/{step.environment}" if step.environment else ""))
    return f"step-{step.metric}-{where}-{step.commit.sha[:12]}"


def series_name(series: Series | Step) -> str:
    """How a chart's legend and the markdown name a series (or a step's): its machine, and
    its environment when set."""
    return printable(series.machine) + (f" · {printable(series.environment)}"
                                        if series.environment else "")


@dataclasses.dataclass(frozen=True)
class BenchmarkView:
    """One benchmark's page: its series (every metric and machine) and their steps."""

    benchmark: str
    series: tuple[Series, ...]
    steps: tuple[Step, ...]
    environment_changes: tuple[EnvironmentChange, ...] = ()

    @property
    def slug(self) -> str:
        """The page's file name, without .html."""
        return slug(self.benchmark)

    def of(self, metric: str) -> list[Series]:
        """The series of one metric, one per machine and environment."""
        return [s for s in self.series if s.metric == metric and s.points]

    def failing(self, metric: str | None = None) -> list[Series]:
        """The series (of `metric`, if given) that never gave a value, only failures."""
        return [s for s in self.series if not s.points and s.failed
                and (metric is None or s.metric == metric)]


def views(series: Sequence[Series], steps: Sequence[Step],
          changes: Sequence[EnvironmentChange] = ()) -> list[BenchmarkView]:
    """A view per benchmark, sorted by name."""
    by_name: dict[str, list[Series]] = {}
    for s in series:
        by_name.setdefault(s.benchmark, []).append(s)
    steps_of: dict[str, list[Step]] = {}
    for step in steps:
        steps_of.setdefault(step.benchmark, []).append(step)
    moved: dict[str, list[EnvironmentChange]] = {}
    for change in changes:
        moved.setdefault(change.benchmark, []).append(change)
    return [BenchmarkView(name, tuple(sorted(group, key=lambda s: (str(s.metric), s.machine,
                                                                  s.environment))),
                          tuple(steps_of.get(name, ())), tuple(moved.get(name, ())))
            for name, group in sorted(by_name.items())]


def commit_axis(series: Sequence[Series]) -> list[Commit]:
    """Every commit of `series`, in history order: the x axis shared by every chart."""
    seen: dict[str, Commit] = {}
    for s in series:
        for c in [*commits_of(s.points), *(c for c, _ in s.failed)]:
            seen.setdefault(c.sha, c)
    if all(c.order is not None for c in seen.values()):
        return sorted(seen.values(), key=lambda c: (c.order, c.date, c.sha))
    return sorted(seen.values(), key=lambda c: (c.date, c.sha))


def _short(value: float) -> float | None:
    """A chart value to 5 significant digits: what a chart can show, a third of the JSON.
    None (a gap in the line) where scaling took it beyond a float: a value read from a
    file can be as large as a float allows."""
    short = float(f"{value:.5g}")      # rounding can carry the largest floats past the end
    return short if math.isfinite(short) else None


def commit_table(axis: Sequence[Commit]) -> list[list[str]]:
    """[sha, date, subject] of every commit on the charts' x axis: written once per site
    (assets/commits.js), so each point's hover text is made in the browser from its x."""
    return [[c.sha, printable(c.date)[:19], printable(c.message[:80])] for c in axis]


def figure(view: BenchmarkView, metric: str, position: dict[str, int]
           ) -> dict[str, Any] | None:
    """The chart of one metric of a view, as plain data the page's script draws (with
    Bokeh): a line per machine and environment with each point's interval (`low`, `high`
    where any point has one), the failed and skipped runs as crosses under the lines, the
    steps as markers (`anchor`: the id of each step's section, opened by a click), a dashed
    rule before each placed step, the span an unplaced one may lie in shaded, and a dotted
    rule at each environment change. x is a commit's place on the site's axis (`position`);
    the page finds its commit in the site's commit table. None when the view lacks the
    metric."""
    series = view.of(metric)
    if not series:
        return None
    kind = metric_named(metric)
    scale, unit = kind.scale([v for s in series for v in values_of(s.points).tolist()],
                             series[0].unit)
    lines = []
    for s in series:
        pts = list(s.points)
        line: dict[str, Any] = {"name": series_name(s),
                                "x": [position[p.commit.sha] for p in pts],
                                "y": [_short(p.value / scale) for p in pts]}
        if any(p.high != p.value or p.low != p.value for p in pts):
            line["low"] = [_short(p.low / scale) for p in pts]
            line["high"] = [_short(p.high / scale) for p in pts]
        lines.append(line)
    chart: dict[str, Any] = {"title": kind.chart_title(unit), "unit": unit,
                             "from_zero": kind.from_zero, "lines": lines}
    failed = [(s, c, status) for s in series for c, status in s.failed if c.sha in position]
    if failed:
        floor = min(float(values_of(s.points).min()) for s in series) / scale
        chart["failed"] = {"x": [position[c.sha] for _, c, _ in failed],
                           "y": [_short(floor)] * len(failed),
                           "text": [f"{status} on {series_name(s)}" for s, _, status in failed]}
    marked = [st for st in view.steps if st.metric == metric and st.commit.sha in position]
    if marked:
        chart["steps"] = {
            "x": [position[st.commit.sha] for st in marked],
            "y": [_short(st.after / scale) for st in marked],
            "transient": [not st.to_act_on for st in marked],     # drawn hollow
            "anchor": [step_anchor(st) for st in marked],
            "text": [f"{st.change:+.2%}{st.mark}"
                     f"{' at ' if st.placed else ' not placed, best fit '}"
                     f"{st.commit.sha[:12]} ({printable(st.machine)})" for st in marked]}
    rules = [{"x": position[st.commit.sha] - 0.5, "kind": "step"}
             for st in marked if st.to_act_on and st.placed]
    rules += [{"x": position[c.commit.sha] - 0.5, "kind": "environment"}
              for c in view.environment_changes
              if c.metric == str(metric) and c.commit.sha in position]
    # an unplaced step shades the span it may be in
    spans = [[position[st.range[0].sha] + 0.5, position[st.range[1].sha] - 0.5]
             for st in marked if st.to_act_on and not st.placed
             and st.range[0].sha in position and st.range[1].sha in position]
    chart["rules"], chart["spans"] = rules, spans
    return chart


def trend(values: Sequence[float], height: int = 24, most: int = TREND_POINTS) -> list[int]:
    """A sparkline's heights in pixels (0 at the top) of `values` (oldest first), scaled to
    their own range: at most `most` points, each the median of its share of the series (a
    120-pixel line shows no more, and the index carries one per machine)."""
    values = [v for v in values if math.isfinite(v)]
    if len(values) > most:
        edges = [round(i * len(values) / most) for i in range(most + 1)]
        values = [statistics.median(values[a:b]) for a, b in zip(edges, edges[1:])]
    if not values:
        return []
    low, high = min(values), max(values)
    span = (high - low) or 1.0
    return [round(height - 2 - (v - low) / span * (height - 4)) for v in values]


def trend_line(heights: Sequence[int], width: int = 120, height: int = 24) -> str:
    """An inline SVG polyline of a `trend` already made ("" for none)."""
    if not heights:
        return ""
    step = width / max(len(heights) - 1, 1)
    points = " ".join(f"{round(i * step)},{y}" for i, y in enumerate(heights))
    return (f'<svg class="spark" width="{width}" height="{height}" viewBox="0 0 {width} '
            f'{height}"><polyline fill="none" stroke="#1f77b4" stroke-width="1.5" '
            f'points="{points}"/></svg>')


def latest(series: Series) -> tuple[Point, float | None]:
    """The newest point and its change from the one before (None with a single point)."""
    last = series.points[-1]
    if len(series.points) < 2 or not series.points[-2].value:
        return last, None
    return last, last.value / series.points[-2].value - 1


def markdown(all_views: Sequence[BenchmarkView], *, max_steps: int = 20,
             shared: Sequence[Any] = ()) -> str:
    """A pull-request comment: the newest steps first (pending ones too: a pull request's
    own commits are the newest), the steps many series share (`shared`: steps.SharedStep),
    then every series' latest value."""
    steps = sorted((st for v in all_views for st in v.steps if not st.transient),
                   key=lambda st: st.commit.key(), reverse=True)
    pending = sum(1 for st in steps if st.awaiting)
    where = "in the newest commits" + (
        ", or where the machine ran slower (more often) around them"
        if any(held_by_share(st) or held_by_stretch_spell(st) for st in steps) else "")
    lines = ["## benchkit history", ""]
    if steps:
        lines += [f"{len(steps)} change point(s)" + (
                      f", {pending} pending ({where}: a slow spell or a step; "
                      "`history regressions --confirm` re-measures them)" if pending else "")
                  + "; newest first:", "",
                  "| benchmark | metric | machine | change | interval | commit | message |",
                  "| --- | --- | --- | --- | --- | --- | --- |"]
        for st in steps[:max_steps]:
            lines.append(f"| {_cell(st.benchmark)} | {st.metric} | {_cell(series_name(st))} | "
                         f"{st.change:+.2%}" + st.mark
                         + (f" ({_cell(st.verdict)})" if st.verdict else "")
                         + f" | {st.ci_low:+.2%} .. {st.ci_high:+.2%} | "
                         + (f"`{st.commit.sha[:12]}` | {_cell(st.commit.message[:60])} |"
                            if st.placed else
                            f"`{st.range[0].sha[:12]}..{st.range[1].sha[:12]}` | not placed: "
                            "somewhere in this range |"))
        if len(steps) > max_steps:
            lines.append(f"\n... and {len(steps) - max_steps} older.")
    else:
        lines.append("No change points.")
    for group in shared:
        low, high = group.extremes
        lines += ["", f"Shared: {group.count} of {group.series} {group.metric} series on "
                  f"{_cell(group.machine)} {'up' if group.up else 'down'} ({low:+.2%} .. "
                  f"{high:+.2%}) "
                  f"in `{group.after.sha[:12]}..{group.through.sha[:12]}`: likely one change "
                  "they have in common (code they share, a dependency, or the machine)."]
    rows = [s for v in all_views for s in v.series]
    lines += ["", f"<details><summary>{len(rows)} series</summary>", "",
              "| benchmark | metric | machine | commits | latest | vs previous |",
              "| --- | --- | --- | --- | --- | --- |"]
    for s in rows:
        if not s.points:
            if s.failed:       # it never gave a value: say so, not leave it out
                lines.append(f"| {_cell(s.benchmark)} | {s.metric} | {_cell(series_name(s))} | 0 | "
                             f"{s.failed[-1][1]} ({len(s.failed)} commits) | - |")
            continue
        point, change = latest(s)
        lines.append(f"| {_cell(s.benchmark)} | {s.metric} | {_cell(series_name(s))} | "
                     f"{len(s.points)} | {metric_named(s.metric).cell(point.value)} | "
                     f"{'-' if change is None else f'{change:+.2%}'} |")
    lines += ["", "</details>"]
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    """Text safe in a markdown table cell."""
    return printable(text).replace("|", "\\|").replace("\n", " ")


@dataclasses.dataclass(frozen=True)
class Summary:
    """What `history list` prints: per benchmark and metric, the machines, commits and
    observations held, the environments its series run in, and the commits where it only
    failed or was skipped."""

    benchmark: str
    metric: str
    machines: tuple[str, ...]
    commits: int
    observations: int
    first: str
    last: str
    failed: int = 0
    environments: tuple[str, ...] = ()


def summaries(series_list: Sequence[Series]) -> list[Summary]:
    """Per benchmark and metric of `series_list`: machines, environments, commits and
    observations."""
    merged: dict[tuple[str, str], Summary] = {}
    for series in series_list:
        # a benchmark that never gave a value is held too: its failures are what there is
        ends = commits_of(series.points) or [c for c, _ in series.failed]
        if not ends:
            continue
        key = (series.benchmark, str(series.metric))
        count = observations_of(series.points)
        prior = merged.get(key) or Summary(*key, (), 0, 0, ends[0].sha, ends[-1].sha)
        machines = prior.machines + ((series.machine,) if series.machine not in
                                     prior.machines else ())
        environments = prior.environments + (
            (series.environment,) if series.environment not in prior.environments else ())
        merged[key] = dataclasses.replace(
            prior, machines=machines, environments=environments,
            commits=max(prior.commits, len(series.points)),
            observations=prior.observations + count,
            failed=max(prior.failed, len(series.failed)))
    return list(merged.values())
