"""C++ snippets: source generation (pure), compilation against the installed torch (cached),
a ctypes loop for wall time and a small driver that runs the same library under valgrind."""
from __future__ import annotations

from pathlib import Path


def callgrind_program(task_spec) -> tuple[Path, Path]:
    """The driver and the snippet library that run `task_spec`'s C++ snippet under valgrind;
    the library is the one wall-time measurements of the snippet use."""
    from benchkit.engines.cpp import source
    from benchkit.engines.cpp import toolchain
    from benchkit.engines.callgrind import toolchain as helper
    helper.find_valgrind()
    helper.required_header_dirs()
    library = toolchain.build(source.snippet_source(task_spec.stmt, task_spec.setup,
                                                    task_spec.global_setup))
    return toolchain.driver(), library
