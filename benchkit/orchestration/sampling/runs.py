"""Who measures what, when: benchmarks sampled across fresh worker processes (an edge).

- `sample_suite` / `sample_timers`: one run. Process after process, each measuring every
  benchmark once in a shuffled order, so drift and machine state spread evenly.
- `interleave`: an A/B between two environments. In each round a fresh BASE and a fresh NEW
  worker take turns, trial by trial in random order, on every benchmark.

Every chunk of blocks is preceded by a tiny fixed speed probe, so the analysis can tell the
machine's state at the time (on shared machines the same code runs up to ~1.7x slower when a
neighbour is busy, for seconds at a time).
"""
from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import random
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from benchkit.errors import BenchkitError, SuiteError
from benchkit.core.measurement import Measurement, ProcessSample
from benchkit.orchestration.sampling.workers import WorkerProcess
from benchkit.system.processes import owned_prefix



def _advance(progress: Any, total: int) -> None:
    """Step a tqdm-like progress bar, setting its total once it is known."""
    if progress is None:
        return
    if progress.total != total:
        progress.total = total
        progress.refresh()
    progress.update(1)


@dataclasses.dataclass(frozen=True)
class Side:
    """Where a worker runs: interpreter, extra environment variables, working directory."""

    name: str = "run"
    python: str = sys.executable
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None

    def start(self, label: str, cpu: int | None = None,
              layout: int | None = None) -> WorkerProcess:
        return WorkerProcess(self.python, dict(self.env), self.cwd, label=label, cpu=cpu,
                             layout=layout)


@dataclasses.dataclass(frozen=True)
class Settings:
    """How long to measure. `min_run_time` is per benchmark per process (run) or per side
    per round (A/B); `chunk_time` is the length of one chunk (an A/B trial)."""

    processes: int = 6
    min_run_time: float = 0.15
    chunk_time: float = 0.025
    block_min_run_time: float = 0.2      # block size chosen like blocked_autorange's
    timeout: float = 600.0               # per request
    seed: int | None = None


@dataclasses.dataclass
class Benchmark:
    """A benchmark as a worker reported it."""

    name: str
    task_spec: dict[str, Any]
    gates: list[str]
    number: int = 0


def _task_spec(d: dict[str, Any]):
    from benchkit.core.schema import task_spec_from_dict
    return task_spec_from_dict(d, "task_spec")


def _load(worker: WorkerProcess, request: dict[str, Any], timeout: float) -> list[Benchmark]:
    reply = worker.request(timeout=timeout, **request)
    return [Benchmark(b["name"], b.get("task_spec", {}), b.get("gates", []))
            for b in reply["benchmarks"]]


def _chunks(reply: dict[str, Any], layout: int | None) -> tuple[list[float], ProcessSample]:
    times: list[float] = []
    sizes, probes = [], []
    for chunk in reply["chunks"]:
        times += chunk["times"]
        sizes.append(len(chunk["times"]))
        probes.append(chunk["probe"])
    return times, ProcessSample(tuple(sizes), tuple(probes), layout)


def _measure(worker: WorkerProcess, b: Benchmark, settings: Settings, min_time: float,
             chunk_time: float, warmup: bool) -> dict[str, Any]:
    return worker.request("measure", timeout=settings.timeout, name=b.name, number=b.number,
                          min_time=min_time, chunk_time=chunk_time, warmup=warmup)


def _rng(settings: Settings) -> random.Random:
    return random.Random(settings.seed)


def _sample(load_request: dict[str, Any], side: Side, settings: Settings,
            progress: Any, partial: list, what: str = "the suite"
            ) -> tuple[list[Benchmark], dict]:
    """Run `settings.processes` workers one after another; returns the benchmarks and,
    per benchmark name, (raw times, [ProcessSample])."""
    rng = _rng(settings)
    benchmarks: list[Benchmark] = []
    collected: dict[str, tuple[list[float], list[ProcessSample]]] = {}
    partial.append((benchmarks, collected))
    for p in range(settings.processes):
        with side.start(f"{side.name} worker {p + 1}", layout=p) as worker:
            listed = _load(worker, load_request, settings.timeout)
            if p == 0:
                benchmarks.extend(listed)
                if not benchmarks:
                    raise SuiteError(f"no benchmarks in {what}")
                for b in benchmarks:
                    b.number = worker.request(
                        "block_size", timeout=settings.timeout, name=b.name,
                        min_run_time=settings.block_min_run_time)["number"]
                    collected[b.name] = ([], [])
            elif [b.name for b in listed] != [b.name for b in benchmarks]:
                raise SuiteError(f"{side.name} worker {p + 1} found other benchmarks than the "
                                 "first; the suite must define the same benchmarks every time")
            order = list(benchmarks)
            rng.shuffle(order)
            for b in order:
                times, sample = _chunks(_measure(worker, b, settings, settings.min_run_time,
                                                 settings.chunk_time, warmup=True), p)
                collected[b.name][0].extend(times)
                collected[b.name][1].append(sample)
                _advance(progress, settings.processes * len(benchmarks))
    return benchmarks, collected


def _measurements(benchmarks: Sequence[Benchmark], collected: dict,
                  metadata: Callable[[Benchmark], dict] | None = None) -> list[Measurement]:
    out = []
    for b in benchmarks:
        times, samples = collected.get(b.name, ([], []))
        if not times:
            continue
        out.append(Measurement(b.number, times, _task_spec(b.task_spec),
                               metadata(b) if metadata else None, processes=samples))
    return out


def suite_request(paths: Sequence[str], keyword: str | None,
                  num_threads: int | None) -> dict[str, Any]:
    return {"cmd": "suite", "paths": [str(Path(p).resolve()) for p in paths],
            "keyword": keyword, "num_threads": num_threads}


def suite_metadata(b: Benchmark) -> dict[str, Any]:
    return {"benchmark": b.name, "gates": list(b.gates)}


def sample_suite(paths: Sequence[str], *, keyword: str | None = None,
                 num_threads: int | None = None, side: Side = Side(),
                 settings: Settings = Settings(), progress: Any = None,
                 partial: list | None = None) -> list[Measurement]:
    """Measure a suite's benchmarks across `settings.processes` fresh worker processes."""
    partial = [] if partial is None else partial
    what = " ".join(map(str, paths)) + (f" match -k {keyword!r}" if keyword else "")
    benchmarks, collected = _sample(suite_request(paths, keyword, num_threads), side,
                                    settings, progress, partial, what)
    return _measurements(benchmarks, collected, suite_metadata)


def partial_measurements(partial: list) -> list[Measurement]:
    """What `sample_suite` had measured when it failed (for saving)."""
    out = []
    for benchmarks, collected in partial:
        out += _measurements(benchmarks, collected, suite_metadata)
    return out


@contextlib.contextmanager
def _shipped(timers: Sequence[Any]) -> Iterator[str]:
    """A job file describing `timers` for worker processes (globals pickled)."""
    from benchkit.engines import transfer
    from benchkit.engines.callgrind.workdir import extra_sys_path
    workdir = Path(tempfile.mkdtemp(prefix=owned_prefix("timers")))
    try:
        tasks = []
        for i, t in enumerate(timers):
            spec = t.task_spec
            stmt = spec.stmt if isinstance(t._stmt, str) else t._stmt
            setup = spec.setup if isinstance(t._setup, str) else t._setup
            tasks.append({"id": i, "num_threads": spec.num_threads,
                          "language": t._language.name.lower(),
                          "global_setup": spec.global_setup,
                          **transfer.write_task(i, stmt, setup, t._user_globals, workdir)})
        job = {"tasks": tasks, "extra_sys_path": extra_sys_path(workdir)}
        (workdir / "job.json").write_text(json.dumps(job), encoding="utf-8")
        yield str(workdir / "job.json")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def sample_timers(timers: Sequence[Any], settings: Settings = Settings(),
                  progress: Any = None) -> list[Measurement]:
    """Measure Timers across fresh worker processes of this interpreter."""
    timers = list(timers)
    with _shipped(timers) as job:
        benchmarks, collected = _sample({"cmd": "tasks", "job": job}, Side(), settings,
                                        progress, [])
    out = []
    for timer, b in zip(timers, benchmarks):
        times, samples = collected[b.name]
        out.append(Measurement(b.number, times, timer.task_spec, processes=samples))
    return out


# ----------------------------------------------------------------------------- interleaved A/B


@dataclasses.dataclass
class Interleaved:
    """What an interleaved A/B measured: per benchmark, each side's Measurement, whose
    processes are the rounds and whose chunks are the trials (paired by position)."""

    benchmarks: list[Benchmark]
    base: dict[str, tuple[list[float], list[ProcessSample]]]
    new: dict[str, tuple[list[float], list[ProcessSample]]]
    rounds_done: int = 0
    only_base: list[str] = dataclasses.field(default_factory=list)
    only_new: list[str] = dataclasses.field(default_factory=list)
    environments: dict[str, dict] = dataclasses.field(default_factory=dict)

    def measurements(self, side: str) -> list[Measurement]:
        data = self.base if side == "base" else self.new
        return _measurements(self.benchmarks, data,
                             lambda b: {**suite_metadata(b), "side": side})


def interleave(paths: Sequence[str], base: Side, new: Side, *, rounds: int = 8,
               trials: int = 20, keyword: str | None = None, num_threads: int | None = None,
               settings: Settings = Settings(), progress: Any = None,
               result: Interleaved | None = None) -> Interleaved:
    """Interleaved A/B: `rounds` rounds, each with a fresh worker per side; per benchmark
    `trials` pairs of chunks of `settings.chunk_time`, each pair in random order.
    Fills `result` as it goes, so a failure keeps what was measured."""
    rng = _rng(settings)
    request = suite_request(paths, keyword, num_threads)
    out = result if result is not None else Interleaved([], {}, {})
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else [None]
    for r in range(rounds):
        sides = [("base", base), ("new", new)]
        rng.shuffle(sides)
        # Both workers of a round on one CPU: on shared machines each CPU has its own
        # neighbours, so a pair split across CPUs would compare two machine states.
        cpu = cpus[r % len(cpus)]
        workers: dict[str, WorkerProcess] = {}
        try:
            listed = {}
            for name, side in sides:
                # The same layout for both sides of a round: what hash seeds and stack
                # position do to the time cancels in the round's ratio.
                workers[name] = side.start(f"{name} worker (round {r + 1})", cpu, layout=r)
                listed[name] = _load(workers[name], request, settings.timeout)
            if r == 0:
                base_names = [b.name for b in listed["base"]]
                new_names = {b.name for b in listed["new"]}
                out.benchmarks[:] = [b for b in listed["base"] if b.name in new_names]
                out.only_base[:] = [n for n in base_names if n not in new_names]
                out.only_new[:] = [b.name for b in listed["new"] if b.name not in base_names]
                if not out.benchmarks:
                    raise SuiteError("BASE and NEW have no benchmark in common")
                for name, worker in workers.items():
                    out.environments[name] = worker.request(
                        "environment", timeout=settings.timeout)["environment"]
                for b in out.benchmarks:
                    # One block size for both sides: each pair times the same work.
                    b.number = workers["base"].request(
                        "block_size", timeout=settings.timeout, name=b.name,
                        min_run_time=settings.block_min_run_time)["number"]
                    out.base[b.name] = ([], [])
                    out.new[b.name] = ([], [])
            order = list(out.benchmarks)
            rng.shuffle(order)
            for b in order:
                chunks: dict[str, list] = {"base": [], "new": []}
                for name in ("base", "new"):   # warm both up before the first pair
                    _measure(workers[name], b, settings, 0.0, settings.chunk_time, True)
                for _ in range(trials):
                    pair = ["base", "new"]
                    rng.shuffle(pair)
                    for name in pair:
                        reply = _measure(workers[name], b, settings, settings.chunk_time,
                                         settings.chunk_time, False)
                        chunks[name].append(reply["chunks"][0])
                for name, data in (("base", out.base), ("new", out.new)):
                    times, sample = _chunks({"chunks": chunks[name]}, r)
                    data[b.name][0].extend(times)
                    data[b.name][1].append(sample)
                _advance(progress, rounds * len(out.benchmarks))
            out.rounds_done = r + 1
        finally:
            for worker in workers.values():
                worker.close()
    return out


def check_settings(settings: Settings) -> None:
    for field in ("min_run_time", "chunk_time", "block_min_run_time", "timeout"):
        value = getattr(settings, field)
        if (isinstance(value, bool) or not isinstance(value, (int, float))
                or not 0 < value < float("inf")):
            raise BenchkitError(f"{field} must be a positive finite number of seconds, "
                                f"got {value!r}")
    if (isinstance(settings.processes, bool) or not isinstance(settings.processes, int)
            or settings.processes < 1):
        raise BenchkitError(f"processes must be a positive integer, got {settings.processes!r}")
