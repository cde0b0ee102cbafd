"""Layout rules: every module sits in one layer, imports point down the layers, packages import
each other in one direction, and the pure core touches no process, file, clock or terminal."""
from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "benchkit"
# Lowest first. A module may import modules of its own layer and of the layers below it.
LAYERS = [
    ("shared", ("benchkit", "benchkit.errors")),
    ("core", ("benchkit.core",)),
    ("system", ("benchkit.system",)),
    ("engines", ("benchkit.engines",)),
    ("orchestration", ("benchkit.orchestration",)),
    ("api", ("benchkit.api", "benchkit.op_fuzzers")),
    ("edges", ("benchkit.cli", "benchkit.pytest_plugin", "benchkit.__main__")),
]
# What the pure core must not import: processes, files, clocks, threads, the terminal.
IMPURE = {"subprocess", "multiprocessing", "tqdm", "os", "shutil", "tempfile", "socket",
          "select", "signal", "pathlib", "time", "io", "threading", "ctypes", "matplotlib"}
IMPURE_CALLS = {"print", "open", "input"}


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


def _targets(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The benchkit modules `name` depends on."""
    imported = _imports(path)
    out = set()
    for target in imported:
        if target not in modules or target == name:
            continue
        # A package re-exporting its own modules is not an arrow back into it.
        if name.startswith(target + "."):
            continue
        # `from pkg import mod` depends on pkg.mod, not on everything pkg re-exports.
        if any(other.startswith(target + ".") for other in imported if other in modules):
            continue
        out.add(target)
    return out


def layer_of(module: str) -> int:
    """The index of the layer holding `module` (the longest matching prefix wins)."""
    best, best_length = None, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            matches = module == prefix or (prefix != "benchkit" and
                                           module.startswith(prefix + "."))
            if matches and len(prefix) > best_length:
                best, best_length = index, len(prefix)
    if best is None:
        raise LookupError(f"{module} is in no layer: add it to LAYERS in {__file__}")
    return best


def package_of(module: str, modules: dict[str, Path]) -> str:
    """The package a module belongs to (a package's __init__ belongs to the package)."""
    if modules[module].name == "__init__.py":
        return module
    return module.rpartition(".")[0]


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    out = []
    for name, targets in sorted(graph.items()):
        for target in sorted(targets):
            if layer_of(target) > layer_of(name):
                out.append(f"{name} ({LAYERS[layer_of(name)][0]}) imports {target} "
                           f"({LAYERS[layer_of(target)][0]})")
    return out


def package_graph(graph: dict[str, set[str]], modules: dict[str, Path]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for name, targets in graph.items():
        source = package_of(name, modules)
        arrows = out.setdefault(source, set())
        for target in targets:
            package = package_of(target, modules)
            # a package and its subpackages: the parent's __init__ is docstring-only
            if package != source and not package.startswith(source + "."):
                arrows.add(package)
    return out


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _targets(name, path, modules) for name, path in modules.items()}


def test_every_module_is_in_a_layer():
    for name in _modules():
        layer_of(name)


def test_imports_point_down_the_layers():
    assert layer_violations(_graph()) == []


def test_an_upward_import_is_reported():
    # The check must be able to fail: a core module importing the Timer facade.
    graph = {"benchkit.core.measure.stats": {"benchkit.api.timer"}, "benchkit.api.timer": set()}
    assert layer_violations(graph) == [
        "benchkit.core.measure.stats (core) imports benchkit.api.timer (api)"]


def test_the_module_graph_has_no_cycles():
    try:
        order = list(graphlib.TopologicalSorter(_graph()).static_order())
    except graphlib.CycleError as exc:
        pytest.fail(f"import cycle: {' -> '.join(exc.args[1])}")
    assert "benchkit.core.measure.stats" in order


def test_packages_import_each_other_in_one_direction():
    modules = _modules()
    packages = package_graph(_graph(), modules)
    try:
        order = list(graphlib.TopologicalSorter(packages).static_order())
    except graphlib.CycleError as exc:
        pytest.fail(f"package cycle: {' -> '.join(exc.args[1])}")
    assert order.index("benchkit.engines.wall") < order.index("benchkit.engines.callgrind")


def test_a_package_cycle_is_detected():
    # Two modules of two packages importing each other: a package-level loop, no module loop.
    modules = {name: Path(f"{name.replace('.', '/')}.py") for name in
               ("benchkit.engines.wall.loop", "benchkit.engines.wall.chunks",
                "benchkit.engines.callgrind.server", "benchkit.engines.callgrind.collect")}
    graph = {"benchkit.engines.wall.loop": {"benchkit.engines.callgrind.server"},
             "benchkit.engines.callgrind.collect": {"benchkit.engines.wall.chunks"},
             "benchkit.engines.wall.chunks": set(), "benchkit.engines.callgrind.server": set()}
    graphlib.TopologicalSorter(graph).prepare()       # no module cycle
    with pytest.raises(graphlib.CycleError):
        graphlib.TopologicalSorter(package_graph(graph, modules)).prepare()


def _core_modules() -> list[str]:
    return sorted(name for name in _modules() if name.startswith("benchkit.core"))


@pytest.mark.parametrize("name", _core_modules())
def test_pure_core_touches_no_process_file_clock_or_terminal(name):
    path = _modules()[name]
    used = {imported.split(".")[0] for imported in _imports(path)}
    assert not used & IMPURE, f"{name} imports {sorted(used & IMPURE)}"
    calls = {node.func.id for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    assert not calls & IMPURE_CALLS, f"{name} calls {sorted(calls & IMPURE_CALLS)}"


def test_the_pure_core_check_can_fail(tmp_path):
    impure = tmp_path / "impure.py"
    impure.write_text("import subprocess\n")
    assert {i.split(".")[0] for i in _imports(impure)} & IMPURE == {"subprocess"}


MAX_LINES = 400


@pytest.mark.parametrize("name", sorted(_modules()))
def test_no_module_is_over_400_lines(name):
    lines = len(_modules()[name].read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{name} has {lines} lines; split it by concept"


MAX_MODULES = 12


def crowded_packages(modules: dict[str, Path]) -> list[str]:
    """Packages holding more than MAX_MODULES modules of their own (subpackages not counted):
    a newcomer should find "where is X" in one look."""
    counts: dict[str, int] = {}
    for name, path in modules.items():
        if path.name != "__init__.py":
            counts[name.rpartition(".")[0]] = counts.get(name.rpartition(".")[0], 0) + 1
    return sorted(f"{package} has {n} modules; group them by concept"
                  for package, n in counts.items() if n > MAX_MODULES)


def test_no_package_has_more_than_12_modules():
    assert crowded_packages(_modules()) == []


def test_the_package_size_check_can_fail():
    flat = {f"benchkit.core.m{i}": Path(f"m{i}.py") for i in range(MAX_MODULES + 1)}
    assert crowded_packages(flat) == ["benchkit.core has 13 modules; group them by concept"]

def undocumented(source: str) -> list[str]:
    """Public modules, classes, functions and methods without a docstring."""
    tree = ast.parse(source)
    out = [] if ast.get_docstring(tree) else ["<module>"]

    def visit(node, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if child.name.startswith("_"):
                continue
            if not ast.get_docstring(child):
                out.append(prefix + child.name)
            if isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
    visit(tree, "")
    return out


@pytest.mark.parametrize("name", sorted(_modules()))
def test_every_public_name_has_a_docstring(name):
    assert undocumented(_modules()[name].read_text(encoding="utf-8")) == []


def test_the_docstring_check_can_fail():
    assert undocumented('"""m"""\nclass A:\n    """a"""\n    def f(self): pass\n'
                        'def _private(): pass\n') == ["A.f"]


LAUNCHERS = {"Popen", "run", "call", "check_call", "check_output", "getoutput",
             "getstatusoutput", "system", "popen", "spawnv", "spawnl", "execv", "execvp"}


def launches(source: str) -> list[str]:
    """`subprocess.X(...)` / `os.X(...)` calls that start a program."""
    return sorted(f"{node.func.value.id}.{node.func.attr}"
                  for node in ast.walk(ast.parse(source))
                  if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and isinstance(node.func.value, ast.Name)
                  and node.func.value.id in ("subprocess", "os")
                  and node.func.attr in LAUNCHERS)


@pytest.mark.parametrize("name", sorted(_modules()))
def test_every_child_process_is_started_by_one_launcher(name):
    # system.processes.start/run_command give every child the same process group,
    # parent-death signal, closed stdin and kill-on-timeout
    if name == "benchkit.system.processes":
        return
    assert launches(_modules()[name].read_text(encoding="utf-8")) == [], (
        f"{name} starts a process itself; use benchkit.system.processes.run_command/start")


def test_the_launcher_check_can_fail():
    assert launches("import subprocess\nsubprocess.run(['true'])\nos.system('x')\n") == [
        "os.system", "subprocess.run"]


REPEAT_LINES = 6      # a block this long (and at least REPEAT_CHARS) in two modules is a copy
REPEAT_CHARS = 150


def repeated_blocks(sources: dict[str, str]) -> list[str]:
    """Blocks of REPEAT_LINES statements lines (blank lines, comments, imports and lone
    brackets left out) that appear in more than one module: one concept, one home."""
    seen: dict[tuple[str, ...], set[str]] = {}
    for name, source in sources.items():
        lines = [line.strip() for line in source.splitlines()]
        lines = [line for line in lines if line and not line.startswith(("#", "import ", "from "))
                 and line not in (")", "]", "}", '"""')]
        for k in range(len(lines) - REPEAT_LINES + 1):
            block = tuple(lines[k:k + REPEAT_LINES])
            if sum(map(len, block)) >= REPEAT_CHARS:
                seen.setdefault(block, set()).add(name)
    return sorted(" and ".join(sorted(names)) + ": " + block[0]
                  for block, names in seen.items() if len(names) > 1)


def test_no_block_is_copied_between_modules():
    sources = {name: path.read_text(encoding="utf-8") for name, path in _modules().items()}
    assert repeated_blocks(sources) == []


def test_the_copy_check_can_fail():
    block = "\n".join(f"value_{i} = compute_something_long(argument_{i}, other_{i})"
                      for i in range(REPEAT_LINES))
    assert repeated_blocks({"a": block, "b": "x = 1\n" + block, "c": "y = 2"}) == [
        "a and b: value_0 = compute_something_long(argument_0, other_0)"]
