"""An interleaved A/B (`benchkit ab`): in each round a fresh BASE and a fresh NEW worker take
turns, trial by trial in random order, on every benchmark; both workers of a round share one
CPU and one process layout, so what the moment, the CPU and the layout do to the time cancels
in the round's ratio. The rounds are the evidence (core.round_verdicts.decide_rounds)."""
from __future__ import annotations

import dataclasses
import os
import time
from typing import Any, Callable, Sequence

from benchkit.core.decisions import round_verdicts, verdicts
from benchkit.core.measure.measurement import Measurement
from benchkit.core.records.records import AbRecord, AbSide, Failure, Phase, Side
from benchkit.core.records.schema import Results
from benchkit.core.decisions.sequential import SequentialPlan
from benchkit.errors import SuiteError
from benchkit.orchestration.sampling.runs import (Series, Settings, Slot, advance, check_same,
                                                  nothing_loaded)
from benchkit.orchestration.sampling.workers import (Interpreter, StartWorker, SuiteLoad,
                                                     start_process)


@dataclasses.dataclass
class Interleaved:
    """What an interleaved A/B measured so far, filled as it goes (a failure or an interrupt
    keeps the rounds that finished): per benchmark each side's Series, whose processes are
    the rounds and whose chunks are the trials (paired by position). A benchmark that fails
    on either side is in `failures` and measured no further."""

    base: list[Series] = dataclasses.field(default_factory=list)
    new: list[Series] = dataclasses.field(default_factory=list)
    rounds_done: int = 0
    sequential: SequentialPlan | None = None    # set by a sequential A/B
    only_base: list[str] = dataclasses.field(default_factory=list)
    only_new: list[str] = dataclasses.field(default_factory=list)
    environments: dict[str, dict] = dataclasses.field(default_factory=dict)
    failures: list[Failure] = dataclasses.field(default_factory=list)

    def failed(self, name: str) -> bool:
        """Whether benchmark `name` failed."""
        return any(f.benchmark == name for f in self.failures)

    def measurements(self, side: Side) -> list[Measurement]:
        """One side's Measurements (of rounds both sides finished), marked with the side."""
        out = []
        for series in (self.base if side is Side.BASE else self.new):
            if self.failed(series.benchmark.name):
                continue
            benchmark = dataclasses.replace(series.benchmark, side=side)
            m = series.measurement(metadata=benchmark.metadata())
            if m is not None:
                out.append(m)
        return out

    def results(self, base: Interpreter, new: Interpreter, revisions: dict[Side, str | None],
                trials: int, trial_time: float, seed: int | None,
                environment: dict[str, Any], partial: str | None = None) -> Results:
        """A results file of both sides, with the A/B's record."""
        def record_of(side: Side, where: Interpreter) -> AbSide:
            return AbSide(where.python, dict(where.env), revisions.get(side),
                          self.environments.get(side.value, {}))
        record = AbRecord(rounds=self.rounds_done, trials=trials, trial_time=trial_time,
                          seed=seed, sides={Side.BASE: record_of(Side.BASE, base),
                                            Side.NEW: record_of(Side.NEW, new)},
                          only_base=tuple(self.only_base), only_new=tuple(self.only_new),
                          sequential=self.sequential)
        return Results([*self.measurements(Side.BASE), *self.measurements(Side.NEW)], [],
                       environment, {}, record, list(self.failures), partial)


def _first_round(out: Interleaved, slots: dict[str, Slot], settings: Settings) -> None:
    """Match the two sides' benchmarks, record the environments, choose block sizes."""
    base, new = slots["base"].listing, slots["new"].listing
    if not base.benchmarks:
        raise nothing_loaded(base, "BASE")
    if not new.benchmarks:
        raise nothing_loaded(new, "NEW")
    base_names, new_names = base.names(), set(new.names())
    common = [(b, spec) for b, spec in base.benchmarks if b.name in new_names]
    out.only_base[:] = [n for n in base_names if n not in new_names]
    out.only_new[:] = [n for n in new.names() if n not in base_names]
    out.failures += _side_failures(base.failures, "BASE") + _side_failures(new.failures, "NEW")
    if not common and not out.failures:
        raise SuiteError("BASE and NEW have no benchmark in common")
    for name, slot in slots.items():
        out.environments[name] = slot.worker().environment()
    for benchmark, spec in common:
        # One block size for both sides: each pair times the same work.
        number = slots["base"].run(benchmark, Phase.WALL_TIME, lambda w: w.block_size(
            benchmark.name, settings.block_min_run_time))
        if isinstance(number, Failure):
            out.failures += _side_failures([number], "BASE")
            number = 0
        out.base.append(Series(benchmark, spec, number))
        out.new.append(Series(benchmark, spec, number))


def _side_failures(failures, side: str) -> list[Failure]:
    return [dataclasses.replace(f, error=f"{side}: {f.error}") for f in failures]


def _trials(i: int, out: Interleaved, slots: dict[str, Slot], trials: int,
            settings: Settings, rng) -> dict[str, list] | Failure:
    """One benchmark's trials in one round: a warm-up on each side, then `trials` pairs
    back to back in random order; or the Failure that stopped it."""
    benchmark, number = out.base[i].benchmark, out.base[i].number
    chunks: dict[str, list] = {"base": [], "new": []}

    def measure(side: str, min_time: float, warmup: bool):
        got = slots[side].run(benchmark, Phase.WALL_TIME, lambda w: w.measure(
            benchmark.name, number, min_time, settings.chunk_time, warmup))
        if isinstance(got, Failure):
            return _side_failures([got], side.upper())[0]
        return got
    for side in ("base", "new"):
        got = measure(side, 0.0, True)
        if isinstance(got, Failure):
            return got
    for _ in range(trials):
        pair = ["base", "new"]
        rng.shuffle(pair)
        for side in pair:
            got = measure(side, settings.chunk_time, False)
            if isinstance(got, Failure):
                return got
            chunks[side] += got[:1]
    return chunks


@dataclasses.dataclass(frozen=True)
class Stopping:
    """A sequential A/B: a benchmark gets rounds only while its verdict is open (looks and
    error spending by `plan`), and no round starts that would end past `max_time` seconds."""

    plan: SequentialPlan
    alpha: float = 0.01
    noise: float | None = None          # None: each benchmark's band follows its spread
    max_time: float | None = None

    def settled(self, base: Series, new: Series) -> bool:
        """Whether this benchmark's verdict is clear after the rounds it has."""
        rounds = len(base.processes)
        if not self.plan.is_look(rounds):
            return False
        decision = round_verdicts.decide_rounds(base.measurement().chunk_times(),
                                          new.measurement().chunk_times(), alpha=self.alpha,
                                          noise=self.noise, plan=self.plan)
        return decision.verdict is not verdicts.Verdict.INCONCLUSIVE


def interleave(paths: Sequence[str], base: Interpreter, new: Interpreter, *, rounds: int = 8,
               trials: int = 20, keyword: str | None = None, num_threads: int | None = None,
               settings: Settings = Settings(), progress: Any = None,
               into: Interleaved | None = None, start: StartWorker = start_process,
               cpus: Sequence[int | None] | None = None, stopping: Stopping | None = None,
               clock: Callable[[], float] = time.monotonic) -> Interleaved:
    """Interleaved A/B: `rounds` rounds (with `stopping`, up to its plan's max_rounds, each
    benchmark only while its verdict is open), each with a fresh worker per side; per
    benchmark `trials` pairs of chunks of `settings.chunk_time`, each pair in random order.
    Fills `into` as it goes, so a failure keeps what was measured; a benchmark that fails
    on either side is recorded and the others go on."""
    rng = settings.rng()
    load = SuiteLoad(tuple(map(str, paths)), keyword, num_threads)
    out = into if into is not None else Interleaved()
    first_names: dict[str, list[str]] = {}
    if cpus is None:
        cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else [None]
    if stopping is not None:
        rounds = stopping.plan.max_rounds
        out.sequential = stopping.plan
    started, longest = clock(), 0.0
    settled: set[int] = set()
    for r in range(rounds):
        if stopping is not None and stopping.max_time is not None and r > 0 and (
                clock() - started + longest > stopping.max_time):
            break       # the next round would end past the budget
        round_start = clock()
        sides = [("base", base), ("new", new)]
        rng.shuffle(sides)   # which side's worker starts first
        # Both workers of a round on one CPU: on shared machines each CPU has its own
        # neighbours, so a pair split across CPUs would compare two machine states.
        cpu = cpus[r % len(cpus)]
        # The same layout for both sides of a round: what hash seeds and stack position do
        # to the time cancels in the round's ratio.
        slots = {name: Slot(start, where, f"{name} worker (round {r + 1})", cpu, r, settings,
                            load) for name, where in sides}
        try:
            for slot in slots.values():
                slot.worker()
            if r == 0:
                _first_round(out, slots, settings)
                first_names = {name: slot.listing.names() for name, slot in slots.items()}
            else:
                for name, slot in slots.items():
                    check_same(slot, first_names[name])
            order = [i for i in range(len(out.base)) if i not in settled]
            rng.shuffle(order)
            for i in order:
                if not out.failed(out.base[i].benchmark.name):
                    chunks = _trials(i, out, slots, trials, settings, rng)
                    if isinstance(chunks, Failure):
                        out.failures.append(chunks)
                    else:
                        out.base[i].add(chunks["base"], r)
                        out.new[i].add(chunks["new"], r)
                        if stopping is not None and stopping.settled(out.base[i], out.new[i]):
                            settled.add(i)
                if stopping is None:
                    advance(progress, rounds * len(out.base))
            out.rounds_done = r + 1
        finally:
            for slot in slots.values():
                slot.close()
        longest = max(longest, clock() - round_start)
        open_now = [i for i in range(len(out.base))
                    if i not in settled and not out.failed(out.base[i].benchmark.name)]
        if stopping is not None:
            advance(progress, rounds)
            if progress is not None and hasattr(progress, "set_postfix_str"):
                progress.set_postfix_str(f"{len(open_now)} open")
            if not open_now:
                break
    return out
