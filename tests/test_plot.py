"""benchkit plot: which panels a PNG gets from which files (matplotlib, real files)."""
from __future__ import annotations

import struct
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures" / "results"
pytest.importorskip("matplotlib", reason="plots need the plot extra")


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


@pytest.mark.slow
def test_an_ab_file_plots_both_sides_and_their_comparison(tmp_path):
    from test_cli import cli
    out = tmp_path / "ab.png"
    cli("plot", FIXTURES / "v3_ab.json", "-o", out, cwd=tmp_path, check_code=0)
    assert png_size(out)[0] == 1400           # two panels: distributions and the A/B


def test_memory_counts_get_a_panel_of_their_own(tmp_path):
    from test_cli import cli
    out = tmp_path / "m.png"
    cli("plot", FIXTURES / "v5_memory.json", "-o", out, cwd=tmp_path, check_code=0)
    import benchkit
    loaded = benchkit.load(FIXTURES / "v5_memory.json")
    panels = 1 + bool(loaded.measurements)
    assert png_size(out)[0] == 700 * panels


def test_a_file_with_nothing_to_plot_says_so(tmp_path):
    from test_cli import cli
    empty = tmp_path / "empty.json"
    empty.write_text('{"format": "benchkit-results", "version": 6}')
    out = cli("plot", empty, "-o", tmp_path / "x.png", cwd=tmp_path)
    assert out.returncode != 0 and "no wall-time measurements or memory counts" in out.stderr
