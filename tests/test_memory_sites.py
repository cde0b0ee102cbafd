"""Allocation sites of collect_memory: the record (pure) and memray's stacks end to end."""
from __future__ import annotations

import json
import sys

import pytest

import benchkit
from benchkit import Timer
from benchkit.core.measure.memory import AllocationSite, MemoryStats, SiteKind
from benchkit.core.compare.report import format_sites
from test_memory import stats

LINE, NATIVE = SiteKind.PYTHON, SiteKind.NATIVE


def with_sites() -> MemoryStats:
    import dataclasses
    return dataclasses.replace(stats(), sites=(
        AllocationSite(LINE, "stmt:1 x = f()", 2.0, 200.0),
        AllocationSite(LINE, "lib/f.py:3 in f", 1.0, 4000.0),
        AllocationSite(NATIVE, "PyList_New", 1.0, 56.0),
        AllocationSite(NATIVE, "list_new_prealloc", 1.0, 8000.0)))


def test_top_sites_are_ordered_by_bytes_per_kind():
    s = with_sites()
    assert [x.location for x in s.top_sites(LINE)] == ["lib/f.py:3 in f", "stmt:1 x = f()"]
    assert [x.location for x in s.top_sites(NATIVE, 1)] == ["list_new_prealloc"]


def test_sites_table_and_repr_are_exact():
    assert format_sites([with_sites()]) == (
        "allocation sites of x = f() (per run):\n"
        "kind             site               allocs/run    bytes/run\n"
        "---------------  -----------------  ------------  -----------\n"
        "python line      lib/f.py:3 in f    1             3.9 KiB\n"
        "python line      stmt:1 x = f()     2             200 B\n"
        "native function  list_new_prealloc  1             7.8 KiB\n"
        "native function  PyList_New         1             56 B")
    assert repr(with_sites()).endswith(
        "  top python lines (per run):\n"
        "       3.9 KiB      1.00 allocations  lib/f.py:3 in f\n"
        "         200 B      2.00 allocations  stmt:1 x = f()\n"
        "  top native functions (per run):\n"
        "       7.8 KiB      1.00 allocations  list_new_prealloc\n"
        "          56 B      1.00 allocations  PyList_New")
    assert format_sites([stats()]) == ""


def test_sites_travel_in_results_files_and_version_5_files_migrate(tmp_path):
    s = with_sites()
    path = benchkit.save(tmp_path / "m.json", [s], environment={"python": "3.11"})
    assert json.loads(path.read_text())["memory"][0]["sites"][0]["kind"] == "python line"
    (loaded,) = benchkit.load(path).memory
    assert loaded.sites == s.sites
    old = json.loads(path.read_text())
    old["version"] = 5
    del old["memory"][0]["sites"]
    (tmp_path / "v5.json").write_text(json.dumps(old))
    assert benchkit.load(tmp_path / "v5.json").memory[0].sites == ()
    new = json.loads(path.read_text())
    new["memory"][0]["sites"][0]["kind"] = "python frame"
    (tmp_path / "bad.json").write_text(json.dumps(new))
    with pytest.raises(benchkit.errors.ResultsFileError, match=r"memory\[0\]\.sites\[0\]\.kind"):
        benchkit.load(tmp_path / "bad.json")



@pytest.fixture(scope="module")
def memray():
    return pytest.importorskip("memray", reason="allocation sites are read with memray")


def _sites(m: MemoryStats, kind: SiteKind) -> dict[str, AllocationSite]:
    return {s.location: s for s in m.sites if s.kind is kind}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts glibc's malloc")
def test_sites_name_the_lines_of_stmt_and_the_native_functions(memray):
    m = Timer("l = [None] * 1000\nd = {'a': str(12345) * 3}").collect_memory(sites=True)
    lines = _sites(m, LINE)
    assert list(lines)[:2] == ["stmt:1 l = [None] * 1000", "stmt:2 d = {'a': str(12345) * 3}"]
    assert 8000 <= lines["stmt:1 l = [None] * 1000"].bytes <= 8100
    assert all(not loc.startswith(("benchkit", "memory/")) for loc in lines)
    native = _sites(m, NATIVE)
    assert (native["list_new_prealloc"].bytes, native["list_new_prealloc"].allocations) == \
        (8000, 1)
    # The exact totals still come from the counter, and the sites add up to them.
    assert m.bytes_per_run == pytest.approx(sum(s.bytes for s in lines.values()), abs=2)
    assert m.top_sites(LINE, 1)[0].location == "stmt:1 l = [None] * 1000"


def helper_that_allocates(n):
    return [str(i) for i in range(n)]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts glibc's malloc")
@pytest.mark.slow
def test_sites_in_a_called_function_name_its_file_and_line(memray):
    m = Timer("f(100)", globals={"f": helper_that_allocates}).collect_memory(
        number=20, sites=True)
    top = m.top_sites(LINE, 1)[0]
    assert top.location.startswith("tests/test_memory_sites.py:") and \
        top.location.endswith(" in <listcomp>")
    assert top.allocations >= 200       # 100 str, 100 int (and list growth)
    assert m.sites == Timer("f(100)", globals={"f": helper_that_allocates}).collect_memory(
        number=20, sites=True).sites    # repeatable


SUITE = """
from benchkit import Timer
bench_keep = Timer("keep.append(bytearray(1000))", setup="keep = []")
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts glibc's malloc")
@pytest.mark.slow
def test_run_memory_sites_from_the_command_line(tmp_path, memray):
    from test_cli import cli
    (tmp_path / "bench_keep.py").write_text(SUITE)
    out = cli("run", "bench_keep.py", "--memory-sites", "--no-wall-time", "-o", "m.json",
              cwd=tmp_path, check_code=0).stdout
    assert "allocation sites of bench_keep::bench_keep (per run):" in out
    assert "stmt:1 keep.append(bytearray(1000))" in out and "PyByteArray_Resize" in out
    shown = cli("show", "m.json", "--markdown", cwd=tmp_path, check_code=0).stdout
    assert "| python line " in shown


SCRIPT = """
from benchkit import Timer
from benchkit.core.measure.memory import SiteKind

def parse(n):
    return [str(i) for i in range(n)]

m = Timer("parse(100)", globals={"parse": parse}).collect_memory(number=10, sites=True)
print(m.allocations_per_run, m.top_sites(SiteKind.PYTHON, 1)[0].location)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts glibc's malloc")
def test_a_function_the_script_defines_travels_and_is_named(tmp_path, memray):
    import subprocess
    (tmp_path / "script.py").write_text(SCRIPT)
    out = subprocess.run([sys.executable, "script.py"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    allocations, where = out.stdout.split(maxsplit=1)
    assert float(allocations) >= 200 and where.strip().endswith("script.py:6 in <listcomp>")
