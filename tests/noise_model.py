"""A synthetic machine with known truth, shaped like this project's shared 2-core VM:

- two speed states (full speed, and ~1.7x slower while a neighbour is busy) that last
  seconds, shared by everything running at that moment, seen by the speed probe too;
- a per-process effect (layout, hash seeds) of a few percent;
- a per-run effect (what separately recorded runs cannot see) of about a percent;
- small per-block jitter.
"""
from __future__ import annotations

import numpy as np

from benchkit.core.measure.measurement import Measurement, ProcessSample
from benchkit.core.measure.task import TaskSpec

PROBE = 340e-6
SLOW = 1.7


class Machine:
    def __init__(self, seed: int, slow_fraction: float = 0.35, dwell_chunks: float = 60.0,
                 process_sd: float = 0.02, run_sd: float = 0.01, jitter: float = 0.01):
        self.rng = np.random.default_rng(seed)
        self.slow = self.rng.random() < slow_fraction
        self.slow_fraction, self.dwell = slow_fraction, dwell_chunks
        self.process_sd, self.run_sd, self.jitter = process_sd, run_sd, jitter

    def _state(self) -> float:
        """Advance one chunk; the state flips with probability 1/dwell (kept in balance)."""
        if self.rng.random() < 1 / self.dwell:
            self.slow = self.rng.random() < self.slow_fraction
        return SLOW if self.slow else 1.0

    def chunk(self, true_time: float, effect: float, blocks: int) -> tuple[float, list[float]]:
        state = self._state()
        probe = PROBE * state * (1 + self.jitter * abs(self.rng.normal()))
        times = true_time * effect * state * (1 + self.jitter * np.abs(
            self.rng.normal(size=blocks)))
        return probe, list(times)

    def run(self, true_time: float, processes: int = 10, chunks: int = 4,
            blocks: int = 20, layouts: bool = False) -> Measurement:
        """A `benchkit run` of one benchmark: `processes` processes, each `chunks` chunks.
        With `layouts`, process p has reproducible layout p: its effect is the same in every
        run (as hash seed and stack position fixed per process make it), plus a little
        that is not."""
        run_effect = np.exp(self.rng.normal(0, self.run_sd))
        raw, samples = [], []
        fixed = np.random.default_rng(12345).normal(0, self.process_sd, processes)
        for p in range(processes):
            if layouts:
                effect = run_effect * np.exp(fixed[p] + self.rng.normal(0, self.jitter / 2))
            else:
                effect = run_effect * np.exp(self.rng.normal(0, self.process_sd))
            probes = []
            for _ in range(chunks):
                probe, times = self.chunk(true_time, effect, blocks)
                probes.append(probe)
                raw += times
            samples.append(ProcessSample((blocks,) * chunks, tuple(probes),
                                         p if layouts else None))
        return Measurement(1, raw, TaskSpec("x", "pass"), processes=samples)

    def interleaved(self, base_time: float, new_time: float, rounds: int = 8,
                    trials: int = 20, blocks: int = 10):
        """A `benchkit ab`: per round fresh processes; each trial pair back to back (the state
        rarely flips between the two)."""
        base, new = [], []
        for _ in range(rounds):
            effects = np.exp(self.rng.normal(0, self.process_sd, 2))
            b_round, n_round = [], []
            for _ in range(trials):
                b_round.append(self.chunk(base_time, effects[0], blocks)[1])
                n_round.append(self.chunk(new_time, effects[1], blocks)[1])
            base.append(b_round)
            new.append(n_round)
        return base, new
