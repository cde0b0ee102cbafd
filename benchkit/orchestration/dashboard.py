"""`benchkit report`: the history database as a static site (Bokeh charts, the library's
own scripts bundled once under assets/, no network) or as markdown for a pull request."""
from __future__ import annotations

import dataclasses
import datetime
from pathlib import Path

from benchkit.core.dashboard.views import (BenchmarkView, commit_axis, commit_table,
                                           figure, markdown, views)
from benchkit.core.dashboard.pages import (COMMITS, SCRIPT, benchmark_page, commits_script,
                                           index_page)
from benchkit.core.dashboard.scripts import chart_script
from benchkit.core.metrics.metric import history_metrics
from benchkit.core.history.series import Commit
from benchkit.core.history.steps import (DEFAULT_ALPHA, DEFAULT_NOISE, SharedStep,
                                          series_counts, shared_steps)
from benchkit.errors import ReportError
from benchkit.orchestration.history import find_steps
from benchkit.system.files import write_site
from benchkit.system.history_db import HistoryDB


@dataclasses.dataclass(frozen=True)
class Report:
    """What a report covers."""

    views: list[BenchmarkView]
    axis: list[Commit]        # every commit, in history order: the charts' shared x axis
    steps: int
    shared: tuple[SharedStep, ...] = ()    # steps many series take together

    @property
    def commits(self) -> int:
        """How many commits the report covers."""
        return len(self.axis)


def gather(db: HistoryDB, *, machine: str | None = None, environment: str | None = None,
           alpha: float = DEFAULT_ALPHA, noise: float = DEFAULT_NOISE) -> Report:
    """Every series of `db` (one machine's, one environment's, with those) and its steps."""
    from benchkit.core.history.changes import environment_changes
    series = db.series(machine=machine, environment=environment)
    steps = find_steps(db, alpha=alpha, noise=noise, machine=machine,
                       environment=environment, series_list=series)
    shared = shared_steps(steps, series_counts(series))
    return Report(views(series, steps, environment_changes(series)), commit_axis(series),
                  sum(s.to_act_on for s in steps), tuple(shared))


def markdown_report(report: Report, max_steps: int = 20) -> str:
    """The pull-request comment."""
    return markdown(report.views, max_steps=max_steps, shared=report.shared)


# BokehJS, then its plotting API (what the pages' script draws with), as the bokeh package
# ships them for its own standalone pages
BOKEH_SCRIPTS = ("bokeh.min.js", "bokeh-api.min.js")


def bokeh_js() -> bytes:
    """Bokeh's browser scripts, as the installed bokeh package ships them, in load order."""
    try:
        from importlib.resources import files
        folder = files("bokeh") / "server" / "static" / "js"
        return b"\n".join((folder / name).read_bytes() for name in BOKEH_SCRIPTS)
    except (ImportError, FileNotFoundError):
        raise ReportError(
            "benchkit report needs bokeh for its charts: pip install bokeh (or benchkit's "
            "[plot] extra); --markdown works without it") from None


def write_report(report: Report, out_dir: str | Path, *, source: str) -> Path:
    """Write the site: index.html, benchmarks/<slug>.html, assets/bokeh.gz.js (Bokeh) and
    assets/commits.js (the commit table the charts' hover text reads)."""
    generated = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    position = {c.sha: i for i, c in enumerate(report.axis)}
    files = {SCRIPT: chart_script(bokeh_js()),
             COMMITS: commits_script(commit_table(report.axis)).encode("utf-8"),
             "index.html": index_page(report.views, source=source, generated=generated,
                                      commits=report.commits,
                                      shared=report.shared).encode("utf-8")}
    for view in report.views:
        figures = {}
        for metric in history_metrics():
            fig = figure(view, metric, position)
            if fig is not None:
                figures[metric] = fig
        files[f"benchmarks/{view.slug}.html"] = benchmark_page(
            view, figures, generated=generated, shared=report.shared).encode("utf-8")
    return write_site(out_dir, files)
