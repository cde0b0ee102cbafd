"""Two result sets side by side (pure): benchmarks matched by name, a wall-time Decision and
instruction-count bands per benchmark, gates applied, warnings about the environments, a
summary. `of_runs` judges two separately recorded files, `of_ab` one `benchkit ab` file.

Returns data; `core.report` formats it and the edges print it and pick the exit code.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Sequence

from benchkit.core.compare.side_warnings import collector_warnings, machine_warnings
from benchkit.core.decisions import round_verdicts, sequential, verdicts
from benchkit.core.decisions.bands import Band, CountVerdict, instruction_change
from benchkit.core.decisions.memory_compare import (
    MemoryChange,
    MemoryFigures,
    MemoryVerdict,
)
from benchkit.core.decisions.verdicts import Decision, Design, Verdict
from benchkit.core.measure import stats
from benchkit.core.measure.task import TaskSpec
from benchkit.core.metrics.gates import Gate
from benchkit.core.records import environment
from benchkit.core.records.records import Benchmark, Failure, Side, benchmark_name
from benchkit.core.records.schema import Results
from benchkit.core.records.values import ValueChange, compare_values

DEFAULT_NOISE = {Design.RUNS: 0.05, Design.ROUNDS: 0.02}
DEFAULT_ALPHA = 0.01


@dataclasses.dataclass(frozen=True)
class Row:
    """One benchmark of a comparison."""

    name: str
    wall: Decision | None                       # None when one side has no wall time
    base_instructions: Band | None = None       # per run, baseline subtracted
    new_instructions: Band | None = None
    threads: tuple[int | None, int | None] = (None, None)
    gates: tuple[Gate, ...] = ()
    failures: tuple[str, ...] = ()              # gates this row breaks (or cannot evaluate)
    note: str = ""
    skipped: tuple[str, ...] = ()               # gates not evaluated, with --allow-missing
    undecided: tuple[str, ...] = ()             # gates an inconclusive verdict left open
    memory: MemoryChange | None = None          # per run, when both sides counted memory
    work: TaskSpec | None = None                # NEW's spec, where it states its work
    values: tuple[ValueChange, ...] = ()        # the values it returned, on both sides

    @property
    def instructions_change(self) -> float | None:
        """Change of the median instructions per run (not yet judged against the bands)."""
        if self.base_instructions and self.new_instructions and self.base_instructions.median:
            return self.new_instructions.median / self.base_instructions.median - 1
        return None

    @property
    def instructions_verdict(self) -> CountVerdict | None:
        """More, fewer or the same instructions beyond both bands (None without counts)."""
        if not (self.base_instructions and self.new_instructions):
            return None
        change = instruction_change(self.base_instructions, self.new_instructions)
        return (CountVerdict.MORE if change > 0 else CountVerdict.FEWER if change < 0
                else CountVerdict.SAME)


@dataclasses.dataclass(frozen=True)
class Comparison:
    """Every matched benchmark's row, what only one side has, warnings and a summary."""

    rows: tuple[Row, ...]
    only_base: tuple[str, ...]
    only_new: tuple[str, ...]
    environment_warnings: tuple[str, ...]
    geomean_ratio: float
    geomean_instructions: float | None
    design: Design = Design.RUNS
    alpha: float = DEFAULT_ALPHA
    failed_base: tuple[Failure, ...] = ()       # benchmarks that could not be measured
    failed_new: tuple[Failure, ...] = ()
    partial: tuple[str, ...] = ()               # sides that stopped early, and why

    @property
    def test(self) -> str:
        """The statistical test, in words."""
        if self.design is Design.ROUNDS:
            return ("interleaved rounds: t interval over the rounds' paired log ratios "
                    "(trials within a round back to back, random order)")
        if self.design is Design.SEQUENTIAL:
            return ("sequential interleaved rounds: Yuen's 20%-trimmed-mean t interval over "
                    "the rounds' paired log ratios, the error spent over the looks "
                    "(Lan-DeMets, Pocock-type), so a benchmark stopped once clear keeps a "
                    f"valid interval; each benchmark's band follows its round spread (at "
                    f"least {sequential.BAND_FLOOR:.0%})")
        return ("separate runs: t interval over worker processes (hierarchical bootstrap "
                "SE), chunks taken at full machine speed only")

    @property
    def confidence(self) -> str:
        """The confidence level of the intervals, as shown: '99%'."""
        return f"{round((1 - self.alpha) * 100, 6):g}%"

    @property
    def compared(self) -> int:
        """Rows with a verdict, counts or memory on both sides (not gate-only rows)."""
        return sum(1 for r in self.rows if r.wall or r.base_instructions or r.memory)

    @property
    def regressions(self) -> tuple[Row, ...]:
        """The rows that break a gate."""
        return tuple(r for r in self.rows if r.failures)

    @property
    def undecided(self) -> tuple[Row, ...]:
        """The rows whose wall-time gate an inconclusive verdict could not decide (with
        `strict` they are regressions instead)."""
        return tuple(r for r in self.rows if r.undecided)

    def counts(self) -> dict[Verdict, int]:
        """How many rows got each verdict."""
        return {v: sum(1 for r in self.rows if r.wall and r.wall.verdict is v)
                for v in Verdict}

    def instruction_counts(self) -> dict[CountVerdict, int]:
        """How many rows with counts on both sides got each instruction-count verdict
        (more or fewer beyond both layout bands, or the same)."""
        verdicts = [r.instructions_verdict for r in self.rows]
        return {v: sum(1 for x in verdicts if x is v) for v in CountVerdict}

    def memory_counts(self) -> dict[MemoryVerdict, int]:
        """How many rows with memory on both sides got each memory verdict."""
        verdicts = [r.memory.verdict for r in self.rows if r.memory]
        return {v: sum(1 for x in verdicts if x is v) for v in MemoryVerdict}


@dataclasses.dataclass(frozen=True)
class _Side:
    """One side's results by benchmark name: wall time, counts, memory, failures, and the
    values benchmarks returned, by (benchmark, metric)."""

    label: str
    measurements: dict[str, Any]
    counts: dict[str, Any]
    failed: dict[str, Failure]
    memory: dict[str, Any] = dataclasses.field(default_factory=dict)
    values: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)

    @classmethod
    def of(cls, label: str, results: Results) -> "_Side":
        values: dict[str, dict[str, Any]] = {}
        for v in results.values:
            values.setdefault(benchmark_name(v), {})[v.kind] = v
        return cls(label, _index(results.measurements), _index(results.callgrind),
                   {f.benchmark: f for f in results.failures}, _index(results.memory),
                   values)

    def names(self) -> list[str]:
        """Every benchmark this side knows, measured or failed, in first-seen order."""
        return list(dict.fromkeys([*self.measurements, *self.counts, *self.memory,
                                   *self.failed, *self.values]))

    def has_value(self, name: str, metric: str) -> bool:
        """Whether benchmark `name` returned a value of `metric` here."""
        return metric in self.values.get(name, {})

    def valued(self, name: str) -> bool:
        """Whether `name` only returned values (asv's track_, mem_, peakmem_): no Timer."""
        return (name in self.values and name not in self.measurements
                and name not in self.counts and name not in self.memory)

    def gates(self, name: str) -> tuple[Gate, ...]:
        item = (self.measurements.get(name) or self.counts.get(name)
                or self.memory.get(name))
        return Benchmark.of(item).gates if item is not None else ()


def _unevaluable(gate: Gate, name: str, base: _Side, new: _Side) -> str | None:
    """Why `gate` cannot be evaluated for benchmark `name` (None: it can)."""
    for side in (base, new):
        if name in side.failed:
            failure = side.failed[name]
            return f"it failed in {side.label} ({failure.kind.value} in {failure.phase.value})"
        if name not in side.names():
            return f"not in {side.label}"
    judge = gate.of
    for side in (base, new):
        if not judge.holds(side, name):
            return f"{side.label} has no {judge.figures} for it{judge.hint}"
    return None


def _check(row: Row, gates: Sequence[Gate], base: _Side, new: _Side,
           allow_missing: bool, strict: bool = False) -> Row:
    """The row with the gates it breaks, or cannot evaluate (a failure, unless
    allow_missing: then skipped), or that its inconclusive verdict leaves open (a failure
    when strict)."""
    failures, skipped, undecided = [], [], []
    for gate in gates:
        why = _unevaluable(gate, row.name, base, new)
        if why is not None:
            (skipped if allow_missing else failures).append(f"{gate}: cannot be evaluated: {why}")
            continue
        judged = gate.of.judge(row, gate)
        if judged.broken:
            failures.append(judged.broken)
        elif judged.open:
            (failures if strict else undecided).append(judged.open)
    return dataclasses.replace(row, failures=tuple(failures), skipped=tuple(skipped),
                               undecided=tuple(undecided))


def _index(items) -> dict[str, Any]:
    return {benchmark_name(item): item for item in items}


def _rows(names, base: _Side, new: _Side, gates, judge, allow_missing: bool,
          strict: bool = False) -> list[Row]:
    """A row per benchmark both sides measured, and per gated benchmark only one side has
    (or that failed), whose gates cannot be evaluated."""
    rows = []
    for name in names:
        wall, threads = None, (None, None)
        if name in base.measurements and name in new.measurements:
            a, b = base.measurements[name], new.measurements[name]
            wall = judge(a, b)
            threads = (a.task_spec.num_threads, b.task_spec.num_threads)
        bi = ni = None
        if name in base.counts and name in new.counts:
            bi, ni = Band.of(base.counts[name]), Band.of(new.counts[name])
        memory = None
        if name in base.memory and name in new.memory:
            memory = MemoryChange(MemoryFigures.of(base.memory[name]),
                                  MemoryFigures.of(new.memory[name]))
        values = tuple(compare_values(list(base.values.get(name, {}).values()),
                                      list(new.values.get(name, {}).values())))
        # a benchmark that only returns values answers to the gates of value metrics, a
        # timed one to the rest: `--fail-on slower>5%` asks nothing of an asv track_
        valued = new.valued(name) or base.valued(name)
        item_gates = new.gates(name) or base.gates(name) or tuple(
            g for g in gates if g.of.valued == valued)
        note = "threads differ" if threads[0] != threads[1] else ""
        item = new.measurements.get(name) or new.counts.get(name)
        work = item.task_spec if item is not None and (
            item.task_spec.elements or item.task_spec.bytes) else None
        row = _check(Row(name, wall, bi, ni, threads, item_gates, note=note, memory=memory,
                         work=work, values=values), item_gates, base, new, allow_missing,
                     strict)
        if wall or bi or memory or row.failures or row.skipped:
            rows.append(row)
    return rows


def _summary(rows: list[Row], base: _Side, new: _Side, only_base, only_new,
             warnings: list[str], design: Design, alpha: float,
             partial: tuple[str, ...]) -> Comparison:
    if any(r.note == "threads differ" for r in rows):
        warnings.append("thread counts differ for some benchmarks (see rows)")
    ratios = [r.wall.ratio for r in rows if r.wall is not None]
    instr = [r.new_instructions.median / r.base_instructions.median for r in rows
             if r.base_instructions and r.new_instructions and r.base_instructions.median]
    return Comparison(tuple(rows), tuple(only_base), tuple(only_new), tuple(warnings),
                      stats.geometric_mean(ratios),
                      stats.geometric_mean(instr) if instr else None, design, alpha,
                      tuple(base.failed.values()), tuple(new.failed.values()), partial)


def _partial(base: Results, new: Results) -> tuple[str, ...]:
    return tuple(f"{label} stopped early: {r.partial}" for label, r in (("BASE", base),
                                                                         ("NEW", new))
                 if r.partial)


def of_runs(base: Results, new: Results, gates: Sequence[Gate] = (),
            noise: float | None = None, alpha: float = DEFAULT_ALPHA,
            allow_missing: bool = False, strict: bool = False) -> Comparison:
    """Two separately recorded result sets: match benchmarks by name and decide per
    benchmark. Per-benchmark gates stored in the results replace `gates` for that one. A
    gate that cannot be evaluated (no counts on a side, a benchmark missing or failed on a
    side) fails, unless `allow_missing`. A `slower` gate an inconclusive verdict cannot
    decide is reported as undecided, or fails when `strict`."""
    noise = DEFAULT_NOISE[Design.RUNS] if noise is None else noise
    sides = _Side.of("BASE", base), _Side.of("NEW", new)
    base_names, new_names = sides[0].names(), sides[1].names()
    names = [n for n in new_names if n in base_names] + [
        n for n in dict.fromkeys([*base_names, *new_names])
        if n not in base_names or n not in new_names]
    rows = _rows(names, *sides, gates,
                 lambda a, b: verdicts.decide_runs(a, b, alpha=alpha, noise=noise),
                 allow_missing, strict)
    warnings = environment.differences(environment.single(base.environment),
                                       environment.single(new.environment))
    warnings += machine_warnings(base, new) + collector_warnings(base, new)
    return _summary(rows, *sides, [n for n in base_names if n not in new_names],
                    [n for n in new_names if n not in base_names], warnings, Design.RUNS, alpha,
                    _partial(base, new))


def split_ab(results: Results) -> tuple[Results, Results]:
    """The BASE and NEW sides of a `benchkit ab` results file."""
    if not results.ab:
        raise ValueError("not an A/B results file")

    def side_of(results_: Results, side: Side) -> Results:
        other = "NEW: " if side is Side.BASE else "BASE: "
        return Results([m for m in results_.measurements if Benchmark.of(m).side is side],
                       [c for c in results_.callgrind if Benchmark.of(c).side is side],
                       dict(results_.ab.sides[side].environment),
                       failures=[f for f in results_.failures if not f.error.startswith(other)],
                       partial=results_.partial,
                       memory=[m for m in results_.memory if Benchmark.of(m).side is side])
    return side_of(results, Side.BASE), side_of(results, Side.NEW)


def of_ab(results: Results, gates: Sequence[Gate] = (), noise: float | None = None,
          alpha: float = DEFAULT_ALPHA, allow_missing: bool = False,
          strict: bool = False) -> Comparison:
    """Verdicts of an interleaved A/B (rounds paired by position, trials by position).
    Gates that cannot be evaluated fail, and undecided ones are handled, as in of_runs."""
    plan = results.ab.sequential
    if noise is None and plan is None:
        noise = DEFAULT_NOISE[Design.ROUNDS]
    base, new = split_ab(results)
    sides = _Side.of("BASE", base), _Side.of("NEW", new)
    names = list(dict.fromkeys(
        n for kind in ("measurements", "counts", "memory")
        for n in getattr(sides[0], kind) if n in getattr(sides[1], kind)))
    names += [n for n in dict.fromkeys([*results.ab.only_base, *results.ab.only_new,
                                        *(f.benchmark for f in results.failures)])
              if n not in names]

    def judge(a, b):
        return round_verdicts.decide_rounds(a.chunk_times(), b.chunk_times(), alpha=alpha,
                                      noise=noise, plan=plan)
    rows = _rows(names, *sides, gates, judge, allow_missing, strict)
    warnings = environment.differences(base.environment, new.environment,
                                       fields=environment.MACHINE_FIELDS)
    warnings += collector_warnings(base, new)
    partial = (f"the A/B stopped early: {results.partial}",) if results.partial else ()
    return _summary(rows, *sides, results.ab.only_base, results.ab.only_new, warnings,
                    Design.ROUNDS if plan is None else Design.SEQUENTIAL, alpha, partial)


def finite(x: float | None) -> bool:
    """A number that is neither None, NaN nor infinite."""
    return x is not None and math.isfinite(x)
