"""How cost grows with a parameter: least-squares fits of cost(n) to the usual complexity
classes, the best fit and its margin over the runner-up, and the sizes between which the
cost per unit of the fit jumps. Pure.

Each class is fitted as cost = coefficient * f(n) by least squares, as Google Benchmark
does (a constant term for the fixed cost of a call was tried: it lets O(n^2) absorb sorted()'s
wall times, which grow a little faster than n log n on a cache-bound machine, and named it
right in 7 of 10 trials against 9 of 10 without; benchmarks/perf_scaling.py). The error of a
fit is Google Benchmark's RMS: the root mean square of the residuals over the mean cost. The best
fit is the simplest class whose RMS is within TOLERANCE (1 % of the mean cost) of the
lowest: fits that close are not told apart by the data."""
from __future__ import annotations

import dataclasses
import math
import re
from typing import Sequence

import numpy as np

from benchkit.core.enums import TextEnum
from benchkit.errors import GateError


class Complexity(TextEnum):
    """A complexity class, written as in the `scaling` output and gates."""

    CONSTANT = "O(1)"
    LOG = "O(log n)"
    LINEAR = "O(n)"
    N_LOG_N = "O(n log n)"
    QUADRATIC = "O(n^2)"
    CUBIC = "O(n^3)"

    def of(self, n: np.ndarray) -> np.ndarray:
        """f(n) of this class."""
        return {Complexity.CONSTANT: np.ones_like(n), Complexity.LOG: np.log2(n),
                Complexity.LINEAR: n, Complexity.N_LOG_N: n * np.log2(n),
                Complexity.QUADRATIC: n ** 2, Complexity.CUBIC: n ** 3}[self]

    @property
    def order(self) -> int:
        """Its rank: O(1) is 0, O(n^3) is 5."""
        return list(Complexity).index(self)

    @classmethod
    def parse(cls, text: str) -> "Complexity":
        """'O(n log n)', 'o(nlogn)', 'n^2' and the like."""
        key = re.sub(r"\s+", "", text.lower()).removeprefix("o(").removesuffix(")")
        for member in cls:
            if re.sub(r"\s+", "", member.value.lower())[2:-1] == key:
                return member
        raise GateError(f"{text!r} is not a complexity class; use one of "
                        + ", ".join(m.value for m in cls))


@dataclasses.dataclass(frozen=True)
class Candidate:
    """One class fitted: cost = coefficient * f(n), and its RMS."""

    complexity: Complexity
    coefficient: float
    rms: float


@dataclasses.dataclass(frozen=True)
class Point:
    """One size: the cost and, where known, the interval around it (e.g. the IQR)."""

    n: float
    cost: float
    low: float | None = None
    high: float | None = None

    @property
    def spread(self) -> float:
        """The interval's half-width relative to the cost (0 for exact costs)."""
        if self.low is None or self.high is None or self.cost <= 0:
            return 0.0
        return (self.high - self.low) / 2 / self.cost


@dataclasses.dataclass(frozen=True)
class Jump:
    """Between sizes `after` and `before`, cost over the fit changed by `change` (0.3 =
    +30 %): more than the floor and three times the two points' spreads."""

    after: float
    before: float
    change: float


@dataclasses.dataclass(frozen=True)
class ScalingFit:
    """The fits of one benchmark over one parameter."""

    benchmark: str
    param: str
    points: tuple[Point, ...]
    candidates: tuple[Candidate, ...]       # best first
    jumps: tuple[Jump, ...]

    @property
    def best(self) -> Candidate:
        """The fit with the lowest RMS."""
        return self.candidates[0]

    @property
    def margin(self) -> float:
        """Runner-up RMS over the best's: how clearly the best fit wins (inf: exact)."""
        best, second = self.candidates[0].rms, self.candidates[1].rms
        if best == 0:
            return 1.0 if second == 0 else math.inf
        return second / best

    def to_json(self) -> dict:
        """The `scaling --json` entry."""
        best = self.best
        return {"benchmark": self.benchmark, "param": self.param, "fit": best.complexity.value,
                "coefficient": best.coefficient, "rms": best.rms,
                "runner_up": self.candidates[1].complexity.value,
                "runner_up_rms": self.candidates[1].rms,
                "points": [dataclasses.asdict(p) for p in self.points],
                "jumps": [dataclasses.asdict(j) for j in self.jumps]}


MIN_POINTS = 3
TOLERANCE = 0.01
JUMP_FLOOR = 0.10


def fit(benchmark: str, param: str, points: Sequence[Point], jump_floor: float = JUMP_FLOOR
        ) -> ScalingFit:
    """Fit every class to `points` (at least three distinct sizes, all n >= 1)."""
    points = tuple(sorted(points, key=lambda p: p.n))
    sizes = np.array([p.n for p in points], dtype=float)
    costs = np.array([p.cost for p in points], dtype=float)
    if len(set(sizes)) < MIN_POINTS:
        raise ValueError(f"{benchmark}: {len(set(sizes))} sizes of {param}; a fit needs at "
                         f"least {MIN_POINTS}")
    if (sizes < 1).any():
        raise ValueError(f"{benchmark}: {param} must be >= 1 to fit (log n), got "
                         f"{sizes.min():g}")
    mean = float(np.mean(costs)) or 1.0
    candidates = []
    for complexity in Complexity:
        f = complexity.of(sizes)
        coefficient = float(f @ costs / (f @ f))
        rms = float(np.sqrt(np.mean((costs - coefficient * f) ** 2)) / mean)
        candidates.append(Candidate(complexity, coefficient, rms))
    best_rms = min(c.rms for c in candidates)
    simplest = min((c for c in candidates if c.rms <= best_rms + TOLERANCE),
                   key=lambda c: c.complexity.order)
    candidates.sort(key=lambda c: (c is not simplest, c.rms, c.complexity.order))
    return ScalingFit(benchmark, param, points, tuple(candidates),
                      _jumps(points, candidates[0], jump_floor))


def _jumps(points: Sequence[Point], best: Candidate, floor: float) -> tuple[Jump, ...]:
    """Neighbouring sizes whose cost over the fitted curve changes by more than their
    spread and `floor`: where the cost per unit of work steps (a cache level left)."""
    out = []
    ratios = []
    for p in points:
        model = best.coefficient * float(best.complexity.of(np.array(p.n)))
        ratios.append(p.cost / model if model > 0 else math.nan)
    for (a, ra), (b, rb) in zip(zip(points, ratios), zip(points[1:], ratios[1:])):
        if not (math.isfinite(ra) and math.isfinite(rb)) or ra <= 0:
            continue
        change = rb / ra - 1
        if abs(change) > max(floor, 3 * (a.spread + b.spread)):
            out.append(Jump(a.n, b.n, change))
    return tuple(out)


@dataclasses.dataclass(frozen=True)
class ComplexityGate:
    """`complexity>O(n log n)`: fails a benchmark whose best fit is of a higher class."""

    limit: Complexity

    @classmethod
    def parse(cls, text: str) -> "ComplexityGate":
        """From its text form."""
        match = re.match(r"^\s*complexity\s*>\s*(.+?)\s*$", text)
        if not match:
            raise GateError(f"{text!r} is not a complexity gate; write e.g. "
                            "'complexity>O(n log n)'")
        return cls(Complexity.parse(match.group(1)))

    def breaks(self, result: ScalingFit) -> bool:
        """Whether `result`'s best fit is above the limit."""
        return result.best.complexity.order > self.limit.order

    def __str__(self) -> str:
        return f"complexity>{self.limit.value}"


@dataclasses.dataclass(frozen=True)
class Series:
    """The points of one benchmark function (its other parameters fixed) over `param`."""

    benchmark: str          # 'file::fn', or 'file::fn[dtype=float32]' with other parameters
    param: str
    points: tuple[Point, ...]


def numeric_params(params: dict) -> list[str]:
    """The parameters whose value is a number (bools are not)."""
    return [k for k, v in params.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool)]


def series_of(items: Sequence[tuple[str, dict, Point]], param: str | None) -> list[Series]:
    """Group (benchmark name, its grid point, its cost at that point) into one series per
    function and values of the other parameters, over `param` (default: a function's only
    numeric parameter). Items without a grid point, or without `param`, are left out."""
    groups: dict[tuple[str, str], list[Point]] = {}
    for name, point, cost in items:
        if not point:
            continue
        numeric = numeric_params(point)
        chosen = param if param is not None else (numeric[0] if len(numeric) == 1 else None)
        if chosen is None or chosen not in numeric:
            continue
        base = name.split("[", 1)[0]
        others = ",".join(f"{k}={name_value(v)}" for k, v in point.items() if k != chosen)
        key = (f"{base}[{others}]" if others else base, chosen)
        groups.setdefault(key, []).append(dataclasses.replace(cost, n=float(point[chosen])))
    return [Series(benchmark, chosen, tuple(points))
            for (benchmark, chosen), points in groups.items()]


def name_value(value) -> str:
    """A stored parameter value as a name shows it."""
    from benchkit.core.measure.params import format_value
    return format_value(value)
