"""An interleaved A/B (`benchkit ab`): in each round a fresh BASE and a fresh NEW worker take
turns, trial by trial in random order, on every benchmark; both workers of a round share one
CPU and one process layout, so what the moment, the CPU and the layout do to the time cancels
in the round's ratio. The rounds are the evidence (core.verdicts.decide_rounds)."""
from __future__ import annotations

import dataclasses
import os
from typing import Any, Sequence

from benchkit.core.measurement import Measurement
from benchkit.core.records import AbRecord, AbSide, Side
from benchkit.core.schema import Results
from benchkit.errors import SuiteError
from benchkit.orchestration.sampling.runs import Series, Settings, advance
from benchkit.orchestration.sampling.workers import (Interpreter, StartWorker, SuiteLoad,
                                                     Worker, start_process)


@dataclasses.dataclass
class Interleaved:
    """What an interleaved A/B measured so far, filled as it goes (a failure keeps the rounds
    that finished): per benchmark each side's Series, whose processes are the rounds and
    whose chunks are the trials (paired by position)."""

    base: list[Series] = dataclasses.field(default_factory=list)
    new: list[Series] = dataclasses.field(default_factory=list)
    rounds_done: int = 0
    only_base: list[str] = dataclasses.field(default_factory=list)
    only_new: list[str] = dataclasses.field(default_factory=list)
    environments: dict[str, dict] = dataclasses.field(default_factory=dict)

    def measurements(self, side: Side) -> list[Measurement]:
        """One side's Measurements, marked with the side in their metadata."""
        out = []
        for series in (self.base if side is Side.BASE else self.new):
            benchmark = dataclasses.replace(series.benchmark, side=side)
            m = series.measurement(metadata=benchmark.metadata())
            if m is not None:
                out.append(m)
        return out

    def results(self, base: Interpreter, new: Interpreter, revisions: dict[Side, str | None],
                trials: int, trial_time: float, seed: int | None,
                environment: dict[str, Any]) -> Results:
        """A results file of both sides, with the A/B's record."""
        def record_of(side: Side, where: Interpreter) -> AbSide:
            return AbSide(where.python, dict(where.env), revisions.get(side),
                          self.environments.get(side.value, {}))
        record = AbRecord(rounds=self.rounds_done, trials=trials, trial_time=trial_time,
                          seed=seed, sides={Side.BASE: record_of(Side.BASE, base),
                                            Side.NEW: record_of(Side.NEW, new)},
                          only_base=tuple(self.only_base), only_new=tuple(self.only_new))
        return Results([*self.measurements(Side.BASE), *self.measurements(Side.NEW)], [],
                       environment, {}, record)


def _first_round(out: Interleaved, workers: dict[str, Worker], listed: dict[str, list],
                 settings: Settings) -> None:
    """Match the two sides' benchmarks, record the environments, choose block sizes."""
    base_names = [b.name for b, _ in listed["base"]]
    new_names = {b.name for b, _ in listed["new"]}
    common = [(b, spec) for b, spec in listed["base"] if b.name in new_names]
    out.only_base[:] = [n for n in base_names if n not in new_names]
    out.only_new[:] = [b.name for b, _ in listed["new"] if b.name not in base_names]
    if not common:
        raise SuiteError("BASE and NEW have no benchmark in common")
    for name, worker in workers.items():
        out.environments[name] = worker.environment()
    for benchmark, spec in common:
        # One block size for both sides: each pair times the same work.
        number = workers["base"].block_size(benchmark.name, settings.block_min_run_time)
        out.base.append(Series(benchmark, spec, number))
        out.new.append(Series(benchmark, spec, number))


def interleave(paths: Sequence[str], base: Interpreter, new: Interpreter, *, rounds: int = 8,
               trials: int = 20, keyword: str | None = None, num_threads: int | None = None,
               settings: Settings = Settings(), progress: Any = None,
               into: Interleaved | None = None, start: StartWorker = start_process,
               cpus: Sequence[int | None] | None = None) -> Interleaved:
    """Interleaved A/B: `rounds` rounds, each with a fresh worker per side; per benchmark
    `trials` pairs of chunks of `settings.chunk_time`, each pair in random order.
    Fills `into` as it goes, so a failure keeps what was measured."""
    rng = settings.rng()
    load = SuiteLoad(tuple(map(str, paths)), keyword, num_threads)
    out = into if into is not None else Interleaved()
    if cpus is None:
        cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else [None]
    for r in range(rounds):
        sides = [("base", base), ("new", new)]
        rng.shuffle(sides)   # which side's worker starts first
        # Both workers of a round on one CPU: on shared machines each CPU has its own
        # neighbours, so a pair split across CPUs would compare two machine states.
        cpu = cpus[r % len(cpus)]
        workers: dict[str, Worker] = {}
        try:
            listed = {}
            for name, where in sides:
                # The same layout for both sides of a round: what hash seeds and stack
                # position do to the time cancels in the round's ratio.
                workers[name] = start(where, f"{name} worker (round {r + 1})", cpu, r,
                                      settings.timeout)
                listed[name] = workers[name].load(load)
            if r == 0:
                _first_round(out, workers, listed, settings)
            order = list(range(len(out.base)))
            rng.shuffle(order)
            for i in order:
                name = out.base[i].benchmark.name
                chunks: dict[str, list] = {"base": [], "new": []}
                for side_name in ("base", "new"):   # warm both up before the first pair
                    workers[side_name].measure(name, out.base[i].number, 0.0,
                                               settings.chunk_time, True)
                for _ in range(trials):
                    pair = ["base", "new"]
                    rng.shuffle(pair)
                    for side_name in pair:
                        chunks[side_name] += workers[side_name].measure(
                            name, out.base[i].number, settings.chunk_time,
                            settings.chunk_time, False)[:1]
                out.base[i].add(chunks["base"], r)
                out.new[i].add(chunks["new"], r)
                advance(progress, rounds * len(out.base))
            out.rounds_done = r + 1
        finally:
            for worker in workers.values():
                worker.close()
    return out
