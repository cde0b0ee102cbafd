"""`benchkit report` (the history dashboard): the pure page model (exact output), the site
writer, and the site itself opened from file:// in a real headless Chromium."""
from __future__ import annotations

import dataclasses
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from benchkit.core.decisions.bands import Band
from benchkit.core.dashboard.views import (BenchmarkView, commit_axis, figure, markdown,
                                             slug, step_anchor, trend, trend_line, views)
from benchkit.core.history.series import Commit, Observation, Point, Series
from benchkit.core.history.steps import MovedFunction, Step
from benchkit.core.records.schema import callgrind_to_dict, measurement_to_dict
from benchkit.errors import ReportError
from benchkit.system.files import SITE_MARKER, write_site
from benchkit.system.history_db import HistoryDB
from benchkit.system.results_files import load
from test_cli import cli

ROOT = Path(__file__).resolve().parent.parent
COMMITS = [Commit(f"{n:x}" * 40, f"2026-01-0{n}T00:00:00", n, f"commit {n}")
           for n in range(1, 5)]


def _series(name, metric, values, machine="m"):
    return Series(name, metric, machine, tuple(Point(c, v, v * 0.99, v * 1.01, 3, 1)
                                              for c, v in zip(COMMITS, values)))


STEP = Step("b|x", "instructions", "m", COMMITS[1], COMMITS[2], 1000.0, 1100.0,
            0.1, 0.09, 0.11, (MovedFunction("f", 0.0, 100.0),), "outside both layout bands")


def test_markdown_lists_steps_newest_first_and_every_series():
    shown = views([_series("b|x", "instructions", [1000, 1000, 1100, 1100]),
                   _series("b|x", "time", [2e-6, 2e-6, 2e-6, 2.2e-6])], [STEP])
    assert markdown(shown) == (
        "## benchkit history\n\n1 change point(s); newest first:\n\n"
        "| benchmark | metric | machine | change | interval | commit | message |\n"
        "| --- | --- | --- | --- | --- | --- | --- |\n"
        f"| b\\|x | instructions | m | +10.00% | +9.00% .. +11.00% | `{'3' * 12}` | commit 3 |\n"
        "\n<details><summary>2 series</summary>\n\n"
        "| benchmark | metric | machine | commits | latest | vs previous |\n"
        "| --- | --- | --- | --- | --- | --- |\n"
        "| b\\|x | instructions | m | 4 | 1,100 | +0.00% |\n"
        "| b\\|x | time | m | 4 | 2.2 us | +10.00% |\n\n</details>\n")
    assert markdown(views([_series("a", "time", [1.0])], [])).startswith(
        "## benchkit history\n\nNo change points.\n")
    # a pending step (the newest commits) is in the comment, said to be pending: a pull
    # request's own commits are the newest; confirmed, it is a change point like any other
    pending = dataclasses.replace(STEP, pending=True)
    comment = markdown(views([_series("b|x", "instructions", [1000, 1000, 1100, 1100])],
                             [pending]))
    assert comment.startswith(
        "## benchkit history\n\n1 change point(s), 1 pending (in the newest commits: a slow "
        "spell or a step; `history regressions --confirm` re-measures them); newest first:")
    assert f"| +10.00% (pending) | +9.00% .. +11.00% | `{'3' * 12}` |" in comment
    confirmed = dataclasses.replace(pending, confirmation="confirmed: slower")
    comment = markdown(views([_series("b|x", "instructions", [1000, 1000, 1100, 1100])],
                             [confirmed]))
    assert "1 change point(s); newest first:" in comment
    assert "| +10.00% (confirmed) | +9.00%" in comment


def test_sparkline_slug_and_figure():
    assert trend_line(trend([1.0, 3.0, 2.0], height=10), width=10, height=10) == (
        '<svg class="spark" width="10" height="10" viewBox="0 0 10 10"><polyline fill="none" '
        'stroke="#1f77b4" stroke-width="1.5" points="0,8 5,2 10,5"/></svg>')
    assert trend_line(trend([float("nan")])) == ""
    # a long series: at most 60 points, each the median of its share (a spike is not one)
    heights = trend([1.0] * 100 + [9.0] + [1.0] * 99 + [2.0] * 200, height=24)
    assert len(heights) == 60 and heights[:30] == [22] * 30 and heights[30:] == [2] * 30
    assert slug("a/b") != slug("a_b") and slug("a/b").startswith("a_b-")
    assert slug("../../etc") .startswith("etc-")

    view = BenchmarkView("b|x", (_series("b|x", "instructions",
                                         [1000, 1000, 1100, 1100], "m1"),
                                 _series("b|x", "instructions",
                                         [900, 900, 900, 900], "m2")), (STEP,))
    axis = commit_axis(view.series)
    assert [c.sha for c in axis] == [c.sha for c in COMMITS]
    fig = figure(view, "instructions", {c.sha: i for i, c in enumerate(axis)})
    lines, marks = fig["lines"], fig["steps"]
    assert [t["name"] for t in lines] == ["m1", "m2"] and lines[0]["y"] == [1000, 1000, 1100, 1100]
    assert lines[0]["low"] == [990.0, 990.0, 1089.0, 1089.0] and "failed" not in fig
    assert marks["x"] == [2] and marks["anchor"] == [step_anchor(STEP)]
    assert marks["transient"] == [False] and marks["text"][0].startswith("+10.00% at ")
    assert fig["rules"] == [{"x": 1.5, "kind": "step"}] and fig["spans"] == []
    # pending (the newest commits): drawn open, no rule, its text says so; confirmed: a step
    pending = dataclasses.replace(STEP, pending=True)
    fig = figure(dataclasses.replace(view, steps=(pending,)), "instructions",
                 {c.sha: i for i, c in enumerate(axis)})
    assert fig["steps"]["transient"] == [True] and fig["rules"] == []
    assert fig["steps"]["text"][0].startswith("+10.00% (pending) at ")
    fig = figure(dataclasses.replace(view, steps=(dataclasses.replace(
        pending, confirmation="confirmed: slower"),)), "instructions",
        {c.sha: i for i, c in enumerate(axis)})
    assert fig["steps"]["transient"] == [False] and fig["rules"] == [{"x": 1.5, "kind": "step"}]
    assert fig["steps"]["text"][0].startswith("+10.00% at ")
    assert figure(view, "time", {}) is None
    json.dumps(fig)                             # plain data, nothing library-specific


def test_site_writer_replaces_its_own_site_and_refuses_anything_else(tmp_path):
    out = tmp_path / "site"
    write_site(out, {"index.html": b"one", "a/b.html": b"x"})
    write_site(out, {"index.html": b"two"})
    assert (out / "index.html").read_bytes() == b"two" and not (out / "a").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]      # nothing left over
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep")
    with pytest.raises(ReportError, match="did not write"):
        write_site(mine, {"index.html": b""})
    assert (mine / "notes.txt").read_text() == "keep" and not (mine / SITE_MARKER).exists()
    afile = tmp_path / "afile"
    afile.write_text("x")
    with pytest.raises(ReportError, match="not a directory"):
        write_site(afile, {"index.html": b""})


def test_the_site_writer_owns_only_its_own_files_and_follows_a_symlink(tmp_path):
    out = tmp_path / "site"
    write_site(out, {"index.html": b"one", "benchmarks/a.html": b"a"})
    # the user keeps notes and even the history database in the site's folder
    (out / "notes.txt").write_text("mine")
    (out / "history.db").write_bytes(b"SQLite format 3\0")
    (out / "benchmarks" / "extra.txt").write_text("mine too")
    write_site(out, {"index.html": b"two", "benchmarks/b.html": b"b"})
    assert (out / "index.html").read_bytes() == b"two"
    assert not (out / "benchmarks" / "a.html").exists()          # ours, gone
    assert (out / "notes.txt").read_text() == "mine"
    assert (out / "history.db").read_bytes() == b"SQLite format 3\0"
    assert (out / "benchmarks" / "extra.txt").read_text() == "mine too"
    link = tmp_path / "link"
    link.symlink_to(out)
    write_site(link, {"index.html": b"three"})
    assert link.is_symlink() and (out / "index.html").read_bytes() == b"three"
    assert (out / "notes.txt").read_text() == "mine"


@pytest.fixture(scope="module")
def history_db(tmp_path_factory):
    """12 commits x 2 benchmarks on 2 machines, with real tour Measurements and
    CallgrindStats as evidence: `grows` takes 10 % more time from commit 6 on and the
    tour's broadcasting counts from commit 8 on; `steady` never changes."""
    tour = load(ROOT / "results" / "tour_seed003.json")
    timed = measurement_to_dict(tour.measurements[0])
    rng = np.random.default_rng(1)
    path = tmp_path_factory.mktemp("report") / "history.db"
    with HistoryDB(path) as db:
        for machine in ("ci-box", "laptop"):
            for c in range(12):
                obs = []
                for name, slower in (("bench_x::grows", 1.1 if c >= 6 else 1.0),
                                     ("bench_x::steady", 1.0)):
                    t = 1e-6 * slower * float(np.exp(rng.normal(0, 0.005)))
                    obs.append(Observation(name, "time", t, t * 0.99, t * 1.01,
                                           10, timed))
                    item = tour.callgrind[1 if name.endswith("grows") and c >= 8 else 0]
                    band = Band.of(item)
                    obs.append(Observation(name, "instructions", band.median,
                                           band.low, band.high, band.layouts,
                                           callgrind_to_dict(item)))
                db.add(obs, commit=Commit(f"{c + 1:02x}" * 20, f"2026-02-{c + 1:02d}T10:00:00",
                                          c, f"change {c}"), machine=machine,
                       measured_at=str(c), source="synthetic", digest=f"{machine}{c}",
                       environment={})
    return path


@pytest.mark.slow
def test_report_markdown_from_the_cli(history_db, tmp_path):
    out = cli("report", "--markdown", "--db", history_db, cwd=tmp_path, check_code=0).stdout
    steps = [line for line in out.splitlines() if line.startswith("| bench_x::")]
    assert "4 change point(s)" in out, out
    assert any("| bench_x::grows | instructions | ci-box |" in s and "`0909" in s for s in steps)
    assert any("| bench_x::grows | time | laptop |" in s and "`0707" in s for s in steps)
    assert "steady" not in out.split("<details>")[0]
    missing = cli("report", "--db", history_db, cwd=tmp_path, check_code=2)
    assert "give OUT_DIR" in missing.stderr
    nowhere = cli("report", "--markdown", "--db", tmp_path / "none.db", cwd=tmp_path,
                  check_code=2)
    assert "no history database" in nowhere.stderr


@pytest.mark.slow
def test_without_bokeh_report_says_what_to_install_and_markdown_still_works(history_db,
                                                                          tmp_path):
    # bokeh is the plot extra's: blocked here as if it were not installed
    import subprocess
    import sys
    run = ("import sys; sys.modules['bokeh'] = None; from benchkit.cli.main import main; "
           "sys.exit(main(sys.argv[1:]))")
    done = subprocess.run([sys.executable, "-c", run, "report", str(tmp_path / "site"),
                           "--db", str(history_db)], capture_output=True, text=True,
                          cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "needs bokeh for its charts: pip install bokeh" in done.stderr
    assert not (tmp_path / "site").exists()            # nothing half-written
    done = subprocess.run([sys.executable, "-c", run, "report", "--markdown", "--db",
                           str(history_db)], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0 and "4 change point(s)" in done.stdout


def _chromium(tmp_path):
    """A headless Chromium driven by selenium, or a skip saying what is missing. Its profile
    goes under `tmp_path`: the temporary one chromedriver makes in /tmp stayed there after
    quit(), one per test."""
    webdriver = pytest.importorskip("selenium.webdriver",
                                    reason="selenium is not installed (pip install selenium)")
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not browser or not driver:
        pytest.skip("no Chromium: apt-get install chromium chromium-driver (.ci/run does)")
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    # No network at all: any request off the file system fails to resolve.
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,1400",
                 "--host-resolver-rules=MAP * ~NOTFOUND", "--disable-dev-shm-usage"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    options.add_argument(f"--user-data-dir={tmp_path / 'chromium-profile'}")
    return webdriver.Chrome(service=Service(driver), options=options)


def _drawn(browser, charts: int) -> None:
    """Wait until the page has begun `charts` charts and Bokeh has drawn them all."""
    from selenium.webdriver.support.ui import WebDriverWait
    WebDriverWait(browser, 30).until(lambda b: b.execute_script(
        "return Object.keys(window.CHARTS || {}).length") == charts)
    browser.execute_async_script(
        "var done = arguments[0]; window.CHARTS_DRAWN.then(function () { done(1); })")


@pytest.mark.slow
def test_the_site_renders_in_a_real_browser_from_the_file_system(history_db, tmp_path):
    site = tmp_path / "site"
    done = cli("report", site, "--db", history_db, cwd=tmp_path, check_code=0)
    assert "2 benchmarks, 12 commits, 4 change points" in done.stderr
    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html"))
    assert len(pages) == 3 and "index.html" in pages
    for page in pages:             # every script is the bundled one: nothing from a CDN
        text = (site / page).read_text()
        assert "http://" not in text.split("<body>")[0] and "https://" not in text.split(
            "<body>")[0]
    # Bokeh's own scripts, gzipped: 40 % of their size (the browser below inflates them)
    import base64
    import gzip
    from importlib.resources import files
    packed = (site / "assets" / "bokeh.gz.js").read_text()
    inflated = gzip.decompress(base64.b64decode(packed.split('"')[1]))
    shipped = files("bokeh") / "server" / "static" / "js"
    assert inflated == b"\n".join((shipped / name).read_bytes()
                                  for name in ("bokeh.min.js", "bokeh-api.min.js"))
    assert len(packed) < 0.45 * len(inflated)
    from selenium.webdriver.common.by import By
    browser = _chromium(tmp_path)
    try:
        browser.get((site / "index.html").as_uri())
        rows = browser.find_elements(By.CSS_SELECTOR, "#benchmarks tbody tr")
        # a row per benchmark and metric, the latest value on every machine
        assert [(r.find_element(By.TAG_NAME, "a").text, r.get_attribute("data-metric"))
                for r in rows] == [("bench_x::grows", "time"),
                                   ("bench_x::grows", "instructions"),
                                   ("bench_x::steady", "time"),
                                   ("bench_x::steady", "instructions")]
        assert len(browser.find_elements(By.CSS_SELECTOR, "svg.spark polyline")) == 4
        assert "ci-box" in rows[0].text and "laptop" in rows[0].text
        # the trend is the chosen machine's (the first one's until one is chosen)
        cell = rows[0].find_elements(By.TAG_NAME, "td")[3]
        trends = json.loads(cell.get_attribute("data-trends"))
        assert [t[0] for t in trends] == ["ci-box", "laptop"] and trends[0][2] != trends[1][2]

        def heights():
            points = cell.find_element(By.TAG_NAME, "polyline").get_attribute("points")
            return " ".join(p.split(",")[1] for p in points.split())
        assert heights() == trends[0][2] and cell.get_attribute("title") == "ci-box"
        browser.execute_script("var m = document.getElementById('machine'); "
                               "m.value = 'laptop'; m.dispatchEvent(new Event('input'))")
        assert heights() == trends[1][2] and cell.get_attribute("title") == "laptop"
        browser.execute_script("var m = document.getElementById('machine'); m.value = ''; "
                               "m.dispatchEvent(new Event('input'))")
        assert heights() == trends[0][2]
        assert " at " in rows[1].text and "none" in rows[3].text
        # search, the machine filter and sorting work in the page itself
        browser.find_element(By.ID, "search").send_keys("steady")
        assert [r.is_displayed() for r in rows] == [False, False, True, True]
        assert browser.find_element(By.ID, "shown").text == "2 of 4 series"
        browser.find_element(By.ID, "search").clear()
        # chosen as a user chooses (WebDriver fires 'change' for it, not 'input')
        from selenium.webdriver.support.ui import Select
        Select(browser.find_element(By.ID, "metric")).select_by_value("instructions")
        assert [r.is_displayed() for r in rows] == [False, True, False, True]
        browser.execute_script("var m = document.getElementById('metric'); m.value = ''; "
                               "m.dispatchEvent(new Event('input'))")
        steps_header = browser.find_elements(By.CSS_SELECTOR, "#benchmarks th.sortable")[2]
        steps_header.click()
        steps_header.click()            # most steps first
        first = browser.find_element(By.CSS_SELECTOR, "#benchmarks tbody tr")
        assert first.find_element(By.TAG_NAME, "a").text == "bench_x::grows"
        width = browser.execute_script("return document.documentElement.scrollWidth")
        assert width <= 1280, width
        browser.save_screenshot(str(tmp_path / "index.png"))
        rows = browser.find_elements(By.CSS_SELECTOR, "#benchmarks tbody tr")

        rows[0].find_element(By.TAG_NAME, "a").click()
        _drawn(browser, 2)
        # drawn by Bokeh into each chart's element: a canvas of the page's width
        drawn = browser.execute_script(
            "return Array.from(document.querySelectorAll('.chart')).map(function (div) {"
            "  var root = div.querySelector('.bk-Figure') || div.firstElementChild;"
            "  return [div.id, root !== null, div.getBoundingClientRect().height]; })")
        assert [d[:2] for d in drawn] == [["chart-time", True], ["chart-instructions", True]]
        assert all(300 < d[2] < 500 for d in drawn), drawn
        # A line per machine, plus the change-point markers.
        legends = browser.execute_script(
            "return ['time', 'instructions'].map(function (m) {"
            "  return CHARTS[m].figure.legend.items.map(function (i) {"
            "    return i.label.value; }); })")
        assert legends == [["ci-box", "laptop", "change points"]] * 2
        # each point's hover text names its commit, from the site's commit table
        sha = browser.execute_script(
            "return CHARTS.time.figure.renderers[0].data_source.data.sha[0]")
        assert len(sha) == 12 and all(c in "0123456789abcdef" for c in sha)
        steps = browser.find_elements(By.CSS_SELECTOR, "section.step")
        assert len(steps) == 4
        assert browser.find_elements(By.CSS_SELECTOR, "section.step table.functions tr")
        # Clicking a change-point marker (it selects the marker) opens its section.
        browser.execute_script("CHARTS.instructions.steps.selected.indices = [0];")
        assert browser.execute_script("return location.hash").startswith(
            "#step-instructions-")
        browser.save_screenshot(str(tmp_path / "benchmark.png"))
        assert os.path.getsize(tmp_path / "benchmark.png") > 10_000
        errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
        assert errors == []
    finally:
        browser.quit()


@pytest.mark.slow
def test_a_long_parameterized_name_fits_1280_pixels_on_its_page(tmp_path):
    # asv's parameterized names run long (xarray's dataset_creation below, 99 characters):
    # the page's title wraps instead of widening the page
    name = ("merge.DatasetCreation.time_dataset_creation[strategy='dict_of_Variables',"
            "count=1000,extra_parameter=long]")
    path = tmp_path / "history.db"
    with HistoryDB(path) as db:
        for c in range(8):
            t = 1e-3 * (1.3 if c >= 4 else 1.0)
            db.add([Observation(name, "time", t, t, t, 1, None)],
                   commit=Commit(f"{c + 1:02x}" * 20, f"2026-02-{c + 1:02d}T10:00:00", c, ""),
                   machine="vm-xarray", measured_at=str(c), source="synthetic",
                   digest=str(c), environment={})
    site = tmp_path / "site"
    cli("report", site, "--db", path, cwd=tmp_path, check_code=0)
    (page,) = (site / "benchmarks").glob("*.html")
    browser = _chromium(tmp_path)
    try:
        for url in (site / "index.html", page):
            browser.get(url.as_uri())
            width = browser.execute_script("return document.documentElement.scrollWidth")
            assert width <= 1280, (url.name, width)
    finally:
        browser.quit()


@pytest.mark.slow
def test_the_legend_of_many_machines_goes_under_the_chart(tmp_path):
    # eight runners of one benchmark: a legend over the chart would hide its lines
    path = tmp_path / "history.db"
    with HistoryDB(path) as db:
        for m in range(8):
            for c in range(8):
                t = 1e-3 * (1 + m / 10)
                db.add([Observation("b", "time", t, t, t, 1, None)],
                       commit=Commit(f"{c + 1:02x}" * 20, f"2026-02-0{c + 1}T10:00:00", c, ""),
                       machine=f"runner-{m}", measured_at=str(c), source="synthetic",
                       digest=f"{m}-{c}", environment={})
        db.add([Observation("few", "time", 1e-3, 1e-3, 1e-3, 1, None)],
               commit=Commit("01" * 20, "2026-02-01T10:00:00", 0, ""), machine="runner-0",
               measured_at="0", source="synthetic", digest="few", environment={})
    site = tmp_path / "site"
    cli("report", site, "--db", path, cwd=tmp_path, check_code=0)
    browser = _chromium(tmp_path)
    try:
        where = {}
        for page in sorted((site / "benchmarks").glob("*.html")):
            browser.get(page.as_uri())
            _drawn(browser, 1)
            where[page.name.split("-")[0]] = browser.execute_script(
                "var f = CHARTS.time.figure, l = f.legend;"
                "return [f.below.indexOf(l) >= 0, f.center.indexOf(l) >= 0, l.items.length];")
            width = browser.execute_script("return document.documentElement.scrollWidth")
            assert width <= 1280, (page.name, width)
        assert where == {"b": [True, False, 8], "few": [False, True, 1]}
    finally:
        browser.quit()


@pytest.mark.slow
def test_a_browser_without_decompression_says_so_and_keeps_the_tables(history_db, tmp_path):
    # Bokeh's scripts are gzipped; a browser older than DecompressionStream (Safari < 16.4)
    # cannot draw the charts, and says why instead of failing silently
    from selenium.webdriver.common.by import By
    site = tmp_path / "site"
    cli("report", site, "--db", history_db, cwd=tmp_path, check_code=0)
    page = sorted((site / "benchmarks").glob("*.html"))[0]
    browser = _chromium(tmp_path)
    try:
        browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument",
                                {"source": "delete window.DecompressionStream;"})
        browser.get(page.as_uri())
        note = browser.find_element(By.ID, "no-charts")
        assert "need a newer browser" in note.text and "Safari 16.4" in note.text
        assert browser.execute_script("return Object.keys(window.CHARTS).length") == 0
        assert browser.execute_script("return typeof window.Bokeh") == "undefined"
        assert len(browser.find_elements(By.CSS_SELECTOR, "section.step")) == 4
    finally:
        browser.quit()


def test_a_value_as_large_as_a_float_allows_is_a_gap_in_its_chart():
    # a results file may hold 1e308 s (finite: import keeps it); scaled to microseconds for
    # the chart it is beyond a float, and the page's JSON refused it (ValueError)
    from benchkit.core.dashboard.pages import benchmark_page
    view = BenchmarkView("b", (_series("b", "time", [2e-6, 2e-6, 1e308, 2e-6]),), ())
    fig = figure(view, "time", {c.sha: i for i, c in enumerate(COMMITS)})
    assert fig["lines"][0]["y"][2] is None and fig["lines"][0]["y"][0] == 2.0
    # the largest float itself, in seconds: 5 significant digits round it past the end
    largest = BenchmarkView("b", (_series("b", "time", [1.7976931348623157e308] * 4),), ())
    assert figure(largest, "time", {c.sha: i for i, c in enumerate(COMMITS)}
                  )["lines"][0]["y"] == [None] * 4
    assert "var FIGURES = " in benchmark_page(view, {"time": fig}, generated="now")


def test_steps_many_series_share_lead_the_front_page_and_the_comment():
    from benchkit.core.dashboard.pages import index_page
    from benchkit.core.history.steps import SharedStep
    names = [f"b{k}" for k in range(14)]
    steps = tuple(Step(n, "time", "m", COMMITS[1], COMMITS[2], 1.0, 0.9 - k / 100,
                       -0.1 - k / 100, -0.2, 0.0) for k, n in enumerate(names))
    shown = views([_series(n, "time", [1.0, 1.0, 0.9, 0.9]) for n in names], steps)
    shared = (SharedStep("m", "time", False, steps, 20, COMMITS[1], COMMITS[2]),)
    page = index_page(shown, source="h.db", generated="now", commits=4, shared=shared)
    assert ('<li>14 of 20 time series on m down (<span class="faster">-23.00%</span> .. '
            '<span class="faster">-10.00%</span>) in <code>' + "2" * 12 + ".." + "3" * 12
            + '</code>: <a href="benchmarks/' + shown[0].slug + '.html">b0</a>, ') in page
    section = page[page.index("<h2>shared steps"):page.index("</ul>")]
    assert section.count('.html">b') == 12 and section.endswith("and 2 more</li>")
    assert "shared steps" not in index_page(shown, source="h.db", generated="now", commits=4)
    assert ("\nShared: 14 of 20 time series on m down (-23.00% .. -10.00%) in `" + "2" * 12
            + ".." + "3" * 12 + "`: likely one change") in markdown(shown, shared=shared)
    # each of its steps says so on its benchmark's page
    from benchkit.core.dashboard.pages import benchmark_page
    assert ("; <strong>shared</strong>: 14 of 20 series on m step this way in <code>"
            + "2" * 12 + ".." + "3" * 12 + "</code>") in benchmark_page(
                shown[0], {}, generated="now", shared=shared)
    assert "<strong>shared</strong>" not in benchmark_page(shown[0], {}, generated="now")


def test_a_benchmark_that_never_gave_a_value_is_listed_as_failing_not_left_out():
    # asv's own test data has such benchmarks (time_AAA_failure, time_AAA_skip): the front
    # page had no row for them and their page showed nothing
    from benchkit.core.dashboard.pages import benchmark_page, index_page
    from benchkit.core.history.series import Status
    broken = Series("b|broken", "time", "m", (), "py3.11", failed=(
        (COMMITS[0], Status.FAILED), (COMMITS[1], Status.SKIPPED), (COMMITS[2], Status.FAILED)))
    shown = views([_series("b|fine", "time", [1.0, 1.0, 1.0, 1.0]), broken], [])
    page = index_page(shown, source="h.db", generated="now", commits=4)
    row = page[page.index('<tr data-name="b|broken"'):]
    row = row[:row.index("</tr>")]
    assert ('<li><span class="slower">failed at 2 commit(s), skipped at 1 commit(s) (last '
            + "3" * 12 + ')</span> <span class="muted">m · py3.11</span></li>') in row
    assert 'data-machines="m"' in row and "<svg" not in row
    assert "<h2>no value yet</h2><ul><li>time on m · py3.11: " in benchmark_page(
        shown[0], {}, generated="now")
    assert "| b\\|broken | time | m · py3.11 | 0 | failed (3 commits) | - |" in markdown(shown)


def test_a_step_is_named_with_its_environment_on_the_front_page_and_in_the_comment():
    # one benchmark in two environments of one machine: "m" alone would not say which
    import dataclasses

    from benchkit.core.dashboard.pages import index_page
    series = [dataclasses.replace(_series("b", "time", [1.0, 1.0, 1.2, 1.2]),
                                  environment=env) for env in ("py3.11", "py3.12")]
    step = Step("b", "time", "m", COMMITS[1], COMMITS[2], 1.0, 1.2, 0.2, 0.15, 0.25,
                environment="py3.12")
    shown = views(series, (step,))
    page = index_page(shown, source="h.db", generated="now", commits=4)
    assert ("</code></a> <span class=\"muted\">m · py3.12</span></td>") in page
    rows = [r for r in markdown(shown).splitlines() if r.startswith("| b |")]
    assert rows[0].startswith("| b | time | m · py3.12 | +20.00% |")
    assert [r.split(" | ")[2] for r in rows[1:]] == ["m · py3.11", "m · py3.12"]


@pytest.mark.slow
def test_the_front_page_shows_the_chosen_environments_steps_in_a_real_browser(tmp_path):
    # asv's astropy runs (three environments, two machines): with an environment chosen, a
    # row's step count and latest change point are that environment's, as `history
    # regressions --env` lists them (but for a pending one: on the benchmark's page only)
    from collections import Counter

    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select
    db = tmp_path / "h.db"
    cli("history", "import-asv", ROOT / "tests" / "fixtures" / "asv-real" / "astropy-cheetah",
        "--db", db, cwd=tmp_path, check_code=0)
    site = tmp_path / "site"
    cli("report", site, "--db", db, cwd=tmp_path, check_code=0)
    envs = ["py2.7-Cython-numpy1.8", "py2.7-numpy1.8"]
    expected = {env: Counter(s["benchmark"] for s in json.loads(cli(
        "history", "regressions", "--json", "--env", env, "--db", db, cwd=tmp_path,
        check_code=0).stdout) if not s["pending"]) for env in envs}
    assert sum(expected[envs[0]].values()) == 6 and not expected[envs[1]]
    browser = _chromium(tmp_path)
    try:
        browser.get((site / "index.html").as_uri())

        def shown():
            return {r.find_element(By.TAG_NAME, "a").text: [
                c.text for c in r.find_elements(By.TAG_NAME, "td")[4:]] for r in
                browser.find_elements(By.CSS_SELECTOR, "#benchmarks tbody tr")
                if r.is_displayed() and r.get_attribute("data-metric") == "time"}
        everything = shown()
        for env in envs:
            Select(browser.find_element(By.ID, "environment")).select_by_value(env)
            rows = shown()
            assert rows and {name: int(count) for name, (count, _) in rows.items()} == {
                name: expected[env][name] for name in rows}
            for name, (count, latest) in rows.items():
                assert (env in latest) if count != "0" else latest == "none", (name, latest)
        # a machine that ran none of them: every count 0
        Select(browser.find_element(By.ID, "environment")).select_by_value("")
        Select(browser.find_element(By.ID, "machine")).select_by_value("not-cheetah")
        assert {count for count, _ in shown().values()} == {"0"}
        Select(browser.find_element(By.ID, "machine")).select_by_value("")
        assert shown() == everything
    finally:
        browser.quit()


@pytest.mark.slow
def test_failures_and_environment_changes_show_in_the_charts_of_real_results(tmp_path):
    # astropy's real asv results (tests/fixtures/asv-real): benchmarks that failed at some
    # commits, and a machine whose environment changed; both drawn in the real browser
    real = Path(__file__).parent / "fixtures" / "asv-real" / "astropy-cheetah"
    db, site = tmp_path / "h.db", tmp_path / "site"
    cli("history", "import-asv", real, "--db", db, cwd=tmp_path, check_code=0)
    cli("report", site, "--db", db, cwd=tmp_path, check_code=0)
    charts = {}
    for page in sorted((site / "benchmarks").glob("*.html")):
        html = page.read_text()
        charts[page] = json.loads(html.split("var FIGURES = ")[1].split(";\ndrawCharts(")[0])
    failing = [p for p, f in charts.items() if any("failed" in c for c in f.values())]
    moved = [p for p, f in charts.items()
             if any(r["kind"] == "environment" for c in f.values() for r in c["rules"])]
    assert failing and moved
    browser = _chromium(tmp_path)
    try:
        for page, legend, dash in ((failing[0], "failed or skipped", None),
                                   (moved[0], None, "dotted")):
            browser.get(page.as_uri())
            _drawn(browser, len(charts[page]))
            metric = next(iter(charts[page]))
            chart = charts[page][metric]
            if legend:          # the crosses under the lines, one a failed or skipped run
                drawn = browser.execute_script(
                    "var f = CHARTS[arguments[0]].figure;"
                    "var r = f.renderers.filter(function (r) {"
                    "  return r.name === 'failed or skipped'; })[0];"
                    "return [f.legend.items.map(function (i) { return i.label.value; }),"
                    "        Array.from(r.data_source.data.x)];", metric)
                assert legend in drawn[0] and drawn[1] == chart["failed"]["x"]
            if dash:            # a dotted rule before the first commit of the new environment
                rules = browser.execute_script(
                    "return CHARTS[arguments[0]].figure.center.filter(function (a) {"
                    "  return a.location !== undefined && a.dimension === 'height'; })"
                    ".map(function (a) { return [a.location, String(a.line_dash)]; });",
                    metric)
                wanted = [r["x"] for r in chart["rules"] if r["kind"] == "environment"]
                assert [x for x, d in rules if d == "dotted"] == wanted, rules
        errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
        assert errors == []
    finally:
        browser.quit()
