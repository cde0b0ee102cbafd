"""C++ snippets: source generation (pure), compilation against the installed torch (cached),
a ctypes loop for wall time and a small driver that runs the same library under valgrind."""
from __future__ import annotations

from pathlib import Path

from benchkit.core.measure.task import TaskSpec


def callgrind_program(task_spec: TaskSpec) -> tuple[Path, Path]:
    """The driver and the snippet library that run `task_spec`'s C++ snippet under valgrind;
    the library is the one wall-time measurements of the snippet use."""
    from benchkit.engines.callgrind import toolchain as callgrind_toolchain
    from benchkit.engines.cpp import source, toolchain
    callgrind_toolchain.find_valgrind()
    callgrind_toolchain.required_header_dirs()
    library = toolchain.build(source.snippet_source(task_spec.stmt, task_spec.setup,
                                                    task_spec.global_setup))
    return toolchain.driver(), library
