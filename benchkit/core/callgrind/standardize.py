"""Pure path standardisation for function names, so profiles from different builds line up.

Two sets of rules: torch.utils.benchmark's own (the default of `as_standardized()`, so a
ported script prints what it printed), and benchkit's thorough ones, which also line up conda
toolchains, glibc and compiler-runtime sources, sysroots and site-packages (what `benchkit
diff`, the history and bisect use)."""
from __future__ import annotations

import functools
import re

# torch.utils.benchmark's, in its order: greedy prefixes, then the library suffix.
_TORCH_RULES = tuple((re.compile(before), after) for before, after in (
    (r"^.+build/\.\./", "build/../"),
    (r"^.+/build/aten/", "build/aten/"),
    (r"^.+/Python/", "Python/"),
    (r"^.+/Objects/", "Objects/"),
    (r"\s\[.+\]$", ""),
))

# Prefix rules only touch the file part (before the first ':'), so C++ names stay intact.
_RULES = tuple((re.compile(before), after) for before, after in (
    # the library suffix " [/path/libfoo.so]"
    (r"\s\[[^\]]*\]$", ""),
    # PyTorch build trees
    (r"^[^:]*build/\.\./", "build/../"),
    (r"^[^:]*/build/aten/", "build/aten/"),
    # CPython source trees (conda, pyenv, distro builds)
    (r"^[^:]*/(Include|Modules|Objects|Python|Parser|Programs)/", r"\1/"),
    # glibc source trees: /build/glibc-XYZ/..., .../src/glibc-2.12.2/...
    (r"^[^:]*/glibc-[^/:]+/", ""),
    (r"^\./", ""),
    (r"^\w+/\.\./sysdeps/", "sysdeps/"),
    # compiler runtime sources and sysroot headers (conda toolchains)
    (r"^[^:]*/src/gcc/", "gcc/"),
    (r"^[^:]*/sysroot/usr/include/", "include/"),
    # glibc's "dir/./dir/file.c" (Debian debug info)
    (r"^(\w+)/\./\1/", r"\1/"),
    # installed Python packages
    (r"^[^:]*/site-packages/", ""),
))


@functools.lru_cache(maxsize=None)
def torch_standardize_name(name: str) -> str:
    """torch.utils.benchmark's `as_standardized` of one name, exactly."""
    for pattern, replacement in _TORCH_RULES:
        name = pattern.sub(replacement, name)
    return name


@functools.lru_cache(maxsize=None)
def standardize_name(name: str) -> str:
    """'/long/prefix/Python/ceval.c:fn [/usr/lib/libpython.so]' -> 'Python/ceval.c:fn'."""
    for pattern, replacement in _RULES:
        name = pattern.sub(replacement, name)
    return name
