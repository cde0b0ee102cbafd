"""Layout rules: every import arrow points one way, and the pure core touches no processes."""
from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "benchkit"
PURE_CORE = ["benchkit.core.stats", "benchkit.core.verdicts", "benchkit.core.callgrind.parser",
             "benchkit.core.callgrind.counts", "benchkit.core.schema", "benchkit.core.table",
             "benchkit.core.trace.events", "benchkit.core.trace.analysis", "benchkit.core.gates"]
EDGE_ONLY = {"subprocess", "multiprocessing", "tqdm"}


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _imports(path: Path) -> list[str]:
    """Every module named by an import anywhere in the file, deferred imports included."""
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module)
            names += [f"{node.module}.{alias.name}" for alias in node.names]
    return names


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = set()
        for imported in _imports(path):
            if imported not in modules or imported == name:
                continue
            # A package re-exporting its own modules is not an arrow back into it.
            if name.startswith(imported + "."):
                continue
            # `from pkg import mod` depends on pkg.mod, not on everything pkg re-exports.
            if any(other.startswith(imported + ".") for other in _imports(path)
                   if other in modules):
                continue
            targets.add(imported)
        graph[name] = targets
    return graph


def test_the_module_graph_has_no_cycles():
    try:
        order = list(graphlib.TopologicalSorter(_graph()).static_order())
    except graphlib.CycleError as exc:
        pytest.fail(f"import cycle: {' -> '.join(exc.args[1])}")
    assert "benchkit.core.stats" in order


def test_a_cycle_is_detected():
    # The check must be able to fail: a two-module loop is reported.
    with pytest.raises(graphlib.CycleError):
        list(graphlib.TopologicalSorter({"a": {"b"}, "b": {"a"}}).static_order())


@pytest.mark.parametrize("name", PURE_CORE)
def test_pure_core_modules_start_no_processes(name):
    modules = _modules()
    assert name in modules, f"{name} moved: update PURE_CORE"
    used = {imported.split(".")[0] for imported in _imports(modules[name])}
    assert not used & EDGE_ONLY, f"{name} imports {sorted(used & EDGE_ONLY)}"
