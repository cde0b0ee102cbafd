"""Apply a torch thread count while measuring and restore the previous one."""
from __future__ import annotations

import contextlib
import sys
from typing import Iterator


@contextlib.contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """`torch.set_num_threads(n)` inside the block, the prior value restored after (also on
    error). A no-op when torch has not been imported: nothing then uses its thread pool."""
    torch = sys.modules.get("torch")
    if torch is None:
        yield
        return
    prior = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(prior)


def set_torch_threads(n: int):
    """torch.utils.benchmark's name for `torch_threads`: imports torch if needed."""
    import torch  # noqa: F401  (torch's version always applies the count)
    return torch_threads(n)
