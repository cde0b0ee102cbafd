"""The collector's revision (which files it covers) and `compare`'s warnings on instruction
counts: which machine and which collector revision made them."""
import ast
import dataclasses
import inspect
import subprocess
import sys
from pathlib import Path

from benchkit.core.compare import comparison, side_warnings
from benchkit.core.records import environment
from benchkit.system import machine
from benchkit.core.records.schema import Results
from benchkit.core.measure.task import TaskSpec
from benchkit.engines.callgrind import workdir
from benchkit.engines.callgrind import server
from benchkit.core.callgrind.callgrind_stats import CallgrindStats
from benchkit.core.callgrind.counts import FunctionCount, FunctionCounts


def stats(name: str, count: int, revision: str | None, host: str | None = None,
          site_packages: str | None = None):
    metadata = {"controls": {} if revision is None else {"collector_revision": revision}}
    if site_packages:
        metadata["controls"]["site_packages"] = site_packages
    if host:
        metadata["host"] = host
    counts = FunctionCounts((FunctionCount(count, "f"),), False)
    return CallgrindStats(TaskSpec(name, ""), 100, False, FunctionCounts((), True),
                          FunctionCounts((), False), dataclasses.replace(counts, inclusive=True),
                          counts, metadata=metadata)


def warnings(base, new):
    return list(comparison.of_runs(Results(callgrind=base), Results(callgrind=new)).environment_warnings)


def test_same_collector_revision_gives_no_warning():
    assert warnings([stats("a", 100, "r1"), stats("b", 5, "r1")],
                    [stats("a", 101, "r1"), stats("b", 5, "r1")]) == []


def test_different_collector_revisions_are_named():
    got = warnings([stats("a", 100, "r1")], [stats("a", 100, "r2")])
    assert got == ["instruction counts from different collector revisions: r1 vs r2 (counts "
                   "can move by a fraction of a percent between revisions; collect both sides "
                   "with the same benchkit to judge small changes)"]


def test_a_file_from_before_revisions_were_recorded_counts_as_different():
    got = warnings([stats("a", 100, None)], [stats("a", 100, "r2")])
    assert got[0].startswith(
        "instruction counts from different collector revisions: unrecorded vs r2 (")


def test_one_side_merged_from_two_revisions():
    got = warnings([stats("a", 100, "r1")], [stats("a", 100, "r1"), stats("b", 5, "r2")])
    assert got[0].startswith("NEW's instruction counts come from 2 collector revisions (r1, r2) (")
    assert len(got) == 1


def test_instruction_counts_from_different_machines():
    got = warnings([stats("a", 100, "r1", host="m1")], [stats("a", 100, "r1", host="m2")])
    assert got == ["instruction counts from different machines: m1 vs m2"]


def test_wall_time_only_results_get_no_collector_warning():
    assert side_warnings.collector_warnings(Results(), Results(callgrind=[stats("a", 1, "r1")])) == []


def test_collector_revision_follows_the_files_that_shape_the_counted_process(tmp_path,
                                                                             monkeypatch):
    for relative in workdir.PYTHON_COLLECTOR_SOURCES:
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_bytes((workdir.PACKAGE_DIR / relative).read_bytes())
    real = workdir.collector_revision()
    monkeypatch.setattr(workdir, "PACKAGE_DIR", tmp_path)
    workdir.collector_revision.cache_clear()
    try:
        copy = workdir.collector_revision()
        (tmp_path / "engines" / "callgrind" / "fork_loop.c").write_bytes(b"/* changed */")
        workdir.collector_revision.cache_clear()
        changed = workdir.collector_revision()
    finally:
        workdir.collector_revision.cache_clear()
    assert copy == real != changed
    assert len(copy) == 12


def test_python_collector_sources_list_every_benchkit_module_the_server_loads():
    # every benchkit file the server imports must be in the revision's digest
    code = ("import sys; [__import__(m) for m in sys.argv[1:]];"
            "print('\\n'.join(m.__file__ for n, m in sys.modules.items()"
            " if n.split('.')[0] == 'benchkit'))")
    out = subprocess.run([sys.executable, "-c", code, *server.CHILD_MODULES],
                         capture_output=True, text=True, check=True).stdout.split()
    loaded = {str(Path(f).resolve().relative_to(workdir.PACKAGE_DIR)) for f in out}
    assert loaded <= set(workdir.PYTHON_COLLECTOR_SOURCES)


def test_server_child_modules_are_what_run_job_imports():
    # the server imports CHILD_MODULES once before forking so that no child has to
    tree = ast.parse(inspect.getsource(server.run_job))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported == set(server.CHILD_MODULES)


def test_different_sets_of_installed_packages_are_named():
    got = warnings([stats("a", 100, "r1", site_packages="s1")],
                   [stats("a", 100, "r1", site_packages="s2")])
    assert got == ["instruction counts from different sets of installed packages: s1 vs s2 "
                   "(counts can move by about 0.2 % with the packages installed; collect with "
                   "--layouts so that only changes outside the band are claimed)"]
    # a file from before the packages were recorded makes no claim about them
    assert warnings([stats("a", 100, "r1")], [stats("a", 100, "r1", site_packages="s2")]) == []


def test_site_packages_digest_follows_the_listing_but_not_benchkits_install_hooks(
        tmp_path, monkeypatch):
    monkeypatch.setattr(machine.site, "getsitepackages", lambda: [str(tmp_path)])
    (tmp_path / "torch").mkdir()
    before = machine.site_packages_digest()
    (tmp_path / "__editable__.benchkit-0.1.0.pth").write_text("")
    (tmp_path / "__editable___benchkit_0_1_0_finder.py").write_text("")
    assert machine.site_packages_digest() == before
    (tmp_path / "ruff").mkdir()
    assert machine.site_packages_digest() != before


def test_the_warning_names_the_packages_that_differ_when_the_environments_list_them():
    base = Results(callgrind=[stats("a", 100, "r1", site_packages="s1")],
                   environment={"site_packages": ["numpy", "pyperf", "ruff", "torch"]})
    new = Results(callgrind=[stats("a", 100, "r1", site_packages="s2")],
                  environment={"site_packages": ["numpy", "pytest", "torch"]})
    (got,) = comparison.of_runs(base, new).environment_warnings
    assert got.startswith("instruction counts from different sets of installed packages: "
                          "s1 vs s2 [+pytest, -pyperf, -ruff] (")


def test_listing_difference_is_limited():
    assert environment.listing_difference(["a"], ["a", "b"]) == "+b"
    assert environment.listing_difference([], list("abcdefgh"), limit=3) == (
        "+a, +b, +c, ... (5 more)")
