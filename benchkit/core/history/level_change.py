"""Whether a wall-time level changed (pure): the per-process evidence of the commits next to
a step (a level may move beyond the noise band while the processes measured on either side
say no change; then the step is not claimed), after the rank test every step passes
(core.decisions.rank_test). A series a shared machine runs at two speeds: `two_speed`."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from benchkit.core.decisions.verdicts import decide_runs
from benchkit.core.history.series import Point
from benchkit.core.measure.measurement import pooled_measurement

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
    return decide_runs(pooled_measurement(before, reference),
                       pooled_measurement(after, reference), alpha=alpha, noise=noise)
