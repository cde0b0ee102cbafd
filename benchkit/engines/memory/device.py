"""Device memory of a block, from torch's caching allocator statistics (CUDA; and any
accelerator whose torch module offers the same `memory_stats` / `reset_peak_memory_stats`).

The allocator's counters are cumulative, so a block's figures are the difference of two
readings; its peak is read after resetting the peak at the block's start. Only tensors the
caching allocator serves are seen (not the CUDA context, cuBLAS workspaces or memory
allocated outside torch)."""
from __future__ import annotations

import sys
from typing import Any, Mapping

from benchkit.core.measure.memory import DeviceCounts

_KEYS = {"allocations": "allocation.all.allocated", "frees": "allocation.all.freed",
         "bytes": "allocated_bytes.all.allocated", "freed_bytes": "allocated_bytes.all.freed"}


def device_module(modules: Mapping[str, Any] = sys.modules) -> Any | None:
    """The torch accelerator module whose allocator can be read (torch.cuda when a CUDA
    device is present and torch is imported), else None."""
    torch_module = modules.get("torch")
    cuda = getattr(torch_module, "cuda", None) if torch_module is not None else None
    if cuda is not None and cuda.is_available():
        return cuda
    return None


class DeviceCounter:
    """Readings of one accelerator module's allocator around a block."""

    def __init__(self, module: Any) -> None:
        self._module = module
        self._start: dict[str, int] = {}
        self._current = 0

    def _stats(self) -> dict[str, int]:
        self._module.synchronize()
        return dict(self._module.memory_stats())

    def reset(self) -> None:
        """The block starts: its peak is measured from here."""
        self._module.synchronize()
        self._module.reset_peak_memory_stats()
        stats = self._stats()
        self._start = {k: int(stats.get(key, 0)) for k, key in _KEYS.items()}
        self._current = int(stats.get("allocated_bytes.all.current", 0))

    def read(self) -> DeviceCounts:
        """What the block did on the device."""
        stats = self._stats()
        moved = {k: int(stats.get(key, 0)) - self._start[k] for k, key in _KEYS.items()}
        peak = int(stats.get("allocated_bytes.all.peak", 0)) - self._current
        return DeviceCounts(**moved, peak=max(0, peak))
