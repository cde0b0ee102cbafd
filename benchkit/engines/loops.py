"""The wall-time loop of any Task: a compiled Python loop, or a C++ snippet's library.
Used by the Timer facade and by the worker processes, so both time the same code."""
from __future__ import annotations

from typing import Callable

from benchkit.core.measure.task import Language, Task
from benchkit.engines.transfer import CopyIfCallgrind
from benchkit.errors import SnippetError, TorchNotInstalledError


def loop_for(task: Task, clock: Callable[[], float]):
    """An object with `time_block(number) -> seconds` that runs `task`'s setup once and then
    its stmt `number` times, timed by the task's own clock or `clock`. Python snippets that
    use torch without importing it get torch in their namespace (when it is installed)."""
    if task.language is Language.CPP:
        from benchkit.engines.cpp.loop import CppLoop
        spec = task.spec
        return CppLoop(spec.stmt, spec.setup, spec.global_setup)
    from benchkit.engines.wall.loop import CompiledLoop
    if task.needs_torch and not torch_installed():
        return TorchMissingLoop(task)
    return CompiledLoop(task.stmt, task.setup, task.clock or clock, python_namespace(task))


def python_namespace(task: Task) -> dict:
    """The globals a Python snippet runs in: the task's, unwrapped, and torch when the
    snippet uses it without importing it (as torch.utils.benchmark gives it)."""
    namespace = CopyIfCallgrind.unwrap_all(dict(task.globals))
    if task.needs_torch and torch_installed():
        import torch
        namespace.setdefault("torch", torch)
    return namespace


class TorchMissingLoop:
    """The loop of a snippet that uses torch where torch is not installed: measuring it
    fails as a snippet that raised does (the benchmark fails, the others go on), with a
    TorchNotInstalledError that says what to install."""

    def __init__(self, task: Task):
        import sys
        self.error = TorchNotInstalledError(
            f"{task.spec.stmt!r} uses torch, which is not installed for {sys.executable}; "
            "install it (pip install torch, or benchkit-perf[torch])")

    def time_block(self, number: int) -> float:
        """Raise the SnippetError."""
        raise SnippetError("stmt", self.error)


def torch_installed() -> bool:
    """Whether torch can be imported here (without importing it)."""
    import importlib.util
    return importlib.util.find_spec("torch") is not None
