"""The clock seam: the default timer synchronises an accelerator before reading the time."""
from __future__ import annotations

import sys
import time
from typing import Any, Callable, Mapping


def accelerator_synchronizer(torch_module: Any) -> Callable[[], None] | None:
    """`synchronize` of the torch accelerator present (CUDA, XPU, MPS, ...), else None."""
    accelerator = getattr(torch_module, "accelerator", None)
    if accelerator is not None and accelerator.is_available():
        return accelerator.synchronize
    cuda = getattr(torch_module, "cuda", None)
    if cuda is not None and cuda.is_available():
        return cuda.synchronize
    return None


def make_default_timer(modules: Mapping[str, Any] = sys.modules,
                       now: Callable[[], float] = time.perf_counter) -> Callable[[], float]:
    """A timer that, once torch is imported, synchronises its accelerator before `now()`.

    Without torch loaded (or without an accelerator) it is `now` plus one dict lookup.
    """
    cache: dict[int, Callable[[], None] | None] = {}

    def timer() -> float:
        torch_module = modules.get("torch")
        if torch_module is not None:
            key = id(torch_module)
            if key not in cache:
                cache[key] = accelerator_synchronizer(torch_module)
            sync = cache[key]
            if sync is not None:
                sync()
        return now()

    return timer


default_timer = make_default_timer()
timer = default_timer  # torch.utils.benchmark exports the default clock as `timer`
