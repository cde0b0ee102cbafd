"""The per-process evidence of the commits next to a time step (pure): a level may move
beyond the noise band while the processes measured on either side say no change; then
the step is not claimed."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from benchkit.core.decisions.verdicts import decide_runs
from benchkit.core.history.series import Point
from benchkit.core.measure.measurement import probe_relative_times

NEIGHBOURS = 5             # commits on each side whose processes confirm a time step


def evidence_decision(points: Sequence[Point], at: int, start: int, end: int,
                      evidence: Callable[[Point], Sequence[Any]], alpha: float,
                      noise: float):
    """The A/B decision (`verdicts.decide_runs`) between the processes of up to NEIGHBOURS
    commits before `at` and after it, within the level (start, end); None when either
    side has no stored processes."""

    def measurements(chosen):
        return [m for p in chosen for m in evidence(p) if m.processes]
    before = measurements(points[max(start, at - NEIGHBOURS):at])
    after = measurements(points[at:min(end, at + NEIGHBOURS)])
    if not before or not after:
        return None
    probes = [x for m in before + after for p in m.processes for x in p.probes]
    reference = float(np.median(probes)) if probes else None
    return decide_runs(pooled(before, reference), pooled(after, reference), alpha=alpha,
                       noise=noise)


def pooled(ms: Sequence[Any], reference: float | None):
    """One Measurement holding the processes of several (per-run times). With speed probes
    on every process, times are taken at the `reference` probe's speed: a commit measured
    while the machine ran slow counts at the speed of the others."""
    from benchkit.core.measure.measurement import Measurement, ProcessSample
    relative = [probe_relative_times(m) for m in ms]
    scale = reference is not None and None not in relative
    times, processes = [], []
    for m, over_probes in zip(ms, relative):
        per_process = ([[t * reference for t in process] for process in over_probes]
                       if scale else m.process_times())
        for sample, process_times in zip(m.processes, per_process):
            times += process_times
            processes.append(ProcessSample(sample.chunks, (), None))
    return Measurement(1, times, ms[0].task_spec, None, processes)
