"""Pure A/B comparison of two result sets: matching, verdicts, gates, summary.

Returns data; `report.py` formats it and the CLI prints it and picks the exit code.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Sequence

from benchkit import stats
from benchkit.results import fingerprint
from benchkit.results.schema import Results
from benchkit.suite import Gate


def benchmark_name(item: Any) -> str:
    """Name of a Measurement/CallgrindStats: its suite name, else its task title."""
    meta = getattr(item, "metadata", None) or {}
    if isinstance(meta, dict) and meta.get("benchmark"):
        return meta["benchmark"]
    spec = item.task_spec
    parts = [spec.label or spec.stmt, spec.sub_label, spec.description]
    return " / ".join(p for p in parts if p)


def gates_of(item: Any) -> tuple[Gate, ...]:
    from benchkit.suite import parse_gate
    meta = getattr(item, "metadata", None) or {}
    return tuple(parse_gate(g) for g in (meta.get("gates") or []))


@dataclasses.dataclass(frozen=True)
class Row:
    name: str
    wall: stats.ABResult | None                 # None when one side has no wall time
    base_instructions: float | None = None      # per run, baseline subtracted
    new_instructions: float | None = None
    threads: tuple[int | None, int | None] = (None, None)
    gates: tuple[Gate, ...] = ()
    failures: tuple[str, ...] = ()              # gates this row breaks
    note: str = ""

    @property
    def instructions_change(self) -> float | None:
        if self.base_instructions and self.new_instructions is not None:
            return self.new_instructions / self.base_instructions - 1
        return None


@dataclasses.dataclass(frozen=True)
class Comparison:
    rows: tuple[Row, ...]
    only_base: tuple[str, ...]
    only_new: tuple[str, ...]
    environment_warnings: tuple[str, ...]
    geomean_ratio: float
    geomean_instructions: float | None
    test: str = "Mann-Whitney U (two-sided) + bootstrap 99% CI of the median ratio"

    @property
    def regressions(self) -> tuple[Row, ...]:
        return tuple(r for r in self.rows if r.failures)


def _check(row: Row, gates: Sequence[Gate]) -> tuple[str, ...]:
    failures = []
    for gate in gates:
        if gate.metric == "slower" and row.wall is not None:
            if row.wall.verdict == "slower" and row.wall.change > gate.limit:
                failures.append(f"{gate}: {row.wall.change:+.1%} (p={row.wall.p_value:.2g})")
        elif gate.metric == "instructions":
            change = row.instructions_change
            if change is not None and change > gate.limit:
                failures.append(f"{gate}: {change:+.2%} instructions")
    return tuple(failures)


def compare(base: Results, new: Results, gates: Sequence[Gate] = (),
            noise: float = 0.02, alpha: float = 0.01) -> Comparison:
    """Match benchmarks by name and decide per benchmark. Per-benchmark gates stored in the
    NEW results replace `gates` for that benchmark."""
    def index(items):
        out: dict[str, Any] = {}
        for item in items:
            out[benchmark_name(item)] = item
        return out

    base_m, new_m = index(base.measurements), index(new.measurements)
    base_c, new_c = index(base.callgrind), index(new.callgrind)
    base_names = list(dict.fromkeys([*base_m, *base_c]))
    new_names = list(dict.fromkeys([*new_m, *new_c]))
    rows = []
    for name in [n for n in new_names if n in base_names]:
        wall = None
        threads = (None, None)
        if name in base_m and name in new_m:
            a, b = base_m[name], new_m[name]
            wall = stats.compare_samples(a.times, b.times, alpha=alpha, noise=noise)
            threads = (a.task_spec.num_threads, b.task_spec.num_threads)
        bi = ni = None
        if name in base_c and name in new_c:
            bi, ni = base_c[name].per_run(), new_c[name].per_run()
        item_gates = gates_of(new_m.get(name) or new_c.get(name)) or tuple(gates)
        note = "threads differ" if threads[0] != threads[1] else ""
        row = Row(name, wall, bi, ni, threads, item_gates, note=note)
        rows.append(dataclasses.replace(row, failures=_check(row, item_gates)))
    warnings = fingerprint.differences(_single_env(base.environment),
                                       _single_env(new.environment))
    if any(r.note == "threads differ" for r in rows):
        warnings.append("thread counts differ for some benchmarks (see rows)")
    ratios = [r.wall.ratio for r in rows if r.wall is not None]
    instr = [r.new_instructions / r.base_instructions for r in rows
             if r.base_instructions and r.new_instructions]
    return Comparison(tuple(rows), tuple(n for n in base_names if n not in new_names),
                      tuple(n for n in new_names if n not in base_names), tuple(warnings),
                      stats.geometric_mean(ratios),
                      stats.geometric_mean(instr) if instr else None)


def _single_env(env: dict[str, Any]) -> dict[str, Any]:
    if "merged" in env and env["merged"]:
        return env["merged"][0]
    return env
