"""C++ snippets: source generation (pure), compilation against the installed torch (cached),
a ctypes loop for wall time and a standalone program for instruction counts."""
from __future__ import annotations

from pathlib import Path


def callgrind_program(task_spec) -> Path:
    """The compiled program that runs `task_spec`'s C++ snippet under valgrind."""
    from benchkit.cpp import source, toolchain
    from benchkit.valgrind import helper
    helper.find_valgrind()
    include = [f"-I{d}" for d in helper.required_header_dirs()[:1]]
    # -g: file and line of the snippet's own code in the callgrind output, as torch's.
    return toolchain.build(source.callgrind_source(task_spec.stmt, task_spec.setup,
                                                   task_spec.global_setup),
                           "callgrind", ("-g", *include))
