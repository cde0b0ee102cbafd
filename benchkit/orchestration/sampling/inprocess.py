"""A Measurement taken in this process in chunks behind the speed probe.

One process says nothing about process-to-process variance, but the chunks and probes let a
comparison keep only what was timed at full machine speed (used by the pytest fixture)."""
from __future__ import annotations

from benchkit.core.measurement import Measurement, ProcessSample
from benchkit.engines.wall.chunks import measure_chunks
from benchkit.engines.wall import autorange
CHUNK_TIME = 0.025


def chunked_autorange(timer, min_run_time: float = 0.2) -> Measurement:
    """blocked_autorange's block size, then blocks in chunks for `min_run_time` seconds."""
    with timer._threads():
        number = autorange.estimate_block_size(timer._time_block, min_run_time)
        chunks = measure_chunks(timer._time_block, number, min_run_time, CHUNK_TIME)
    times = [t for c in chunks for t in c["times"]]
    sample = ProcessSample(tuple(len(c["times"]) for c in chunks),
                           tuple(c["probe"] for c in chunks))
    return Measurement(number, times, timer.task_spec, processes=[sample])
