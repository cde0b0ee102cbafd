"""benchkit's own scripts (benchmarks/, examples/) run rarely and by hand: every name they
import from benchkit must exist, so a rename inside the package cannot leave one broken
until someone next measures with it."""
from __future__ import annotations

import ast
import importlib
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted(p for folder in ("benchmarks", "examples") if (ROOT / folder).is_dir()
                 for p in (ROOT / folder).rglob("*.py"))


def _submodule(module, name: str) -> bool:
    """Whether package `module` has a module `name` (`from benchkit.core import metrics`)."""
    return hasattr(module, "__path__") and importlib.util.find_spec(
        f"{module.__name__}.{name}") is not None


def _missing(path: Path) -> list[str]:
    """`module.name` of every `from benchkit... import name` in `path` that does not exist."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("benchkit"):
            module = importlib.import_module(node.module)
            out += [f"{node.module}.{alias.name}" for alias in node.names
                    if not hasattr(module, alias.name) and not _submodule(module, alias.name)]
    return out


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_benchkit_name_a_script_imports_exists(path):
    assert _missing(path) == []


def test_the_script_check_can_fail(tmp_path):
    script = tmp_path / "old.py"
    script.write_text("from benchkit.core.history.series import Commit, HistoryMetric\n")
    assert _missing(script) == ["benchkit.core.history.series.HistoryMetric"]
