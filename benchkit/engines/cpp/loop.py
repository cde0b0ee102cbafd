"""CppLoop: the C++ counterpart of CompiledLoop, over a compiled shared library."""
from __future__ import annotations

import ctypes
from typing import Callable

from benchkit.engines.cpp import source, toolchain
from benchkit.errors import CppError, SnippetError


class CppLoop:
    """`time_block(number)` runs setup once, then `stmt` `number` times, in C++; seconds.

    The library links the installed libtorch, which the importing of torch here has already
    loaded, so torch.set_num_threads applies to it."""

    def __init__(self, stmt: str, setup: str, global_setup: str):
        import torch  # noqa: F401  (libtorch initialised once, shared with the library)
        path = toolchain.build(source.snippet_source(stmt, setup, global_setup))
        self._lib = ctypes.CDLL(str(path))
        self._lib.bk_time_block.restype = ctypes.c_double
        self._lib.bk_time_block.argtypes = [ctypes.c_int64]
        self._lib.bk_last_error.restype = ctypes.c_char_p
        self.path = path

    def time_block(self, number: int, timer: Callable[[], float] | None = None) -> float:
        """Seconds of `number` runs of stmt after setup (the library's bk_time_block)."""
        taken = self._lib.bk_time_block(number)
        if taken < 0:
            message = self._lib.bk_last_error().decode("utf-8", "replace")
            raise SnippetError("stmt", CppError(message)) from None
        return taken
