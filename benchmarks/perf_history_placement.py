"""How well benchkit places a step where the noise has no spells (benchkit.core.history.placement).

Three measurements on drawn series, written to one JSON file:

1. **calibration**: normal noise, one step of 1 or 2 noises at commit 100 of 200. The step is
   named at the best least-squares cut and placed where `PLACED_MASS` of its
   `cut_likelihood` lies within `PLACED_WITHIN` commits of it; how often a step placed with
   a given share lies within those commits, and how often a span (`likely_span`) holds it.
2. **least squares against medians**: the best cut within 2 commits of the step, scored by
   least squares (`least_squares`) or by least absolute deviation from the medians
   (`cut_costs`, how steps are placed in noise with spells), 60 commits a side.
3. **heavy tails**: the whole step finder (`time_steps`) on 1,000 commits of normal and of
   Student's t noise (3 degrees of freedom, the same median spread), a 10 % step at a random
   commit: found within 2 commits, a span holding it, and other steps named (false).

    .venv/bin/python benchmarks/perf_history_placement.py -o results/history_placement.json
"""
from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchkit.core.history import placement  # noqa: E402
from benchkit.core.history.series import Commit, Point, Series  # noqa: E402
from benchkit.core.history.steps import time_steps  # noqa: E402
from benchkit.system.files import atomic_write_bytes  # noqa: E402

BINS = (0.6, 0.7, 0.8, 0.9, 1.0 + 1e-9)


def calibration(height: float, draws: int, rng: np.random.Generator) -> dict:
    """Steps `height` noises high at commit 100 of 200: per share bin, how many were placed
    and the share of those within PLACED_WITHIN commits; spans and the share that hold it."""
    bins: dict[str, list[bool]] = collections.defaultdict(list)
    held = []
    for _ in range(draws):
        logs = rng.normal(0, 1, 200)
        logs[100:] += height
        cuts, weight = placement.cut_likelihood(logs, 1.0)
        at = int(cuts[np.argmax(weight)])
        span = placement.likely_span(logs, at, 1.0)
        if span is None:
            share = float(weight[np.abs(cuts - at) <= placement.PLACED_WITHIN].sum())
            low = max(b for b in BINS if b <= share)
            key = f"{low:.1f}-{BINS[BINS.index(low) + 1]:.1f}"
            bins[key].append(abs(at - 100) <= placement.PLACED_WITHIN)
        else:
            held.append(span[0] <= 100 <= span[1])
    placed = [near for group in bins.values() for near in group]
    return {"draws": draws, "placed": len(placed), "placed_near": float(np.mean(placed)),
            "by_share": {k: {"placed": len(v), "near": float(np.mean(v))}
                         for k, v in sorted(bins.items())},
            "spans": len(held), "spans_holding": float(np.mean(held)) if held else None}


def least_squares_against_medians(height: float, draws: int, rng: np.random.Generator
                                  ) -> dict:
    """The best cut within 2 commits of a step `height` noises high, 60 commits a side."""
    near = collections.Counter()
    for _ in range(draws):
        logs = rng.normal(0, 1, 120)
        at = 60 + int(rng.integers(-5, 6))
        logs[at:] += height
        cuts = list(range(50, 71))
        for name, costs in (("least_squares", placement.least_squares(logs, cuts)),
                            ("medians", placement.cut_costs(logs, cuts))):
            near[name] += abs(cuts[int(np.argmin(costs))] - at) <= 2
    return {name: near[name] / draws for name in ("least_squares", "medians")}


def heavy_tails(draws: int, rng: np.random.Generator) -> dict:
    """time_steps on 1,000 commits, a 10 % step at a random commit, normal and t(3) noise."""
    out = {}
    for kind in ("normal", "student_t3"):
        counts = collections.Counter()
        for _ in range(draws):
            # t(3)'s median absolute value is 0.765: scaled to the normal's 5 % spread there
            noise = (rng.normal(0, 0.05, 1000) if kind == "normal"
                     else rng.standard_t(3, 1000) * 0.05 * 0.6745 / 0.765)
            at = int(rng.integers(6, 995))
            values = np.exp(noise)
            values[at:] *= 1.10
            points = tuple(Point(Commit(f"c{i}", f"2026-01-01T{i:05d}"), v, v, v, 1, 1)
                           for i, v in enumerate(values.tolist()))
            steps = [s for s in time_steps(Series("b", "time", "m", points)) if s.to_act_on]
            order = {p.commit.sha: i for i, p in enumerate(points)}
            found = [s for s in steps if s.placed and abs(order[s.commit.sha] - at) <= 2]
            held = [s for s in steps if not s.placed
                    and order[s.span[0].sha] - 2 <= at <= order[s.span[1].sha] + 2]
            counts["found"] += bool(found)
            counts["span_holding"] += bool(held and not found)
            counts["false"] += len(steps) - len(found) - len(held)
        out[kind] = {"draws": draws, **counts}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--draws", type=int, default=2000, help="draws per height (1, 2)")
    parser.add_argument("--heavy-draws", type=int, default=150,
                        help="series of 1,000 commits per kind of noise")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("-o", "--output", type=Path, default=Path("results/history_placement.json"))
    args = parser.parse_args(argv)
    for name in ("draws", "heavy_draws"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} {getattr(args, name)}: give 1 or more")
    rng = np.random.default_rng(args.seed)
    result = {
        "settings": {"draws": args.draws, "heavy_draws": args.heavy_draws, "seed": args.seed,
                     "placed_mass": placement.PLACED_MASS,
                     "placed_within": placement.PLACED_WITHIN,
                     "credible": placement.CREDIBLE, "tame": placement.TAME},
        "calibration": {f"{h:g} noises": calibration(h, args.draws, rng) for h in (1.0, 2.0)},
        "least_squares_against_medians": {
            f"{h:g} noises": least_squares_against_medians(h, args.draws, rng)
            for h in (1.0, 2.0)},
        "heavy_tails": heavy_tails(args.heavy_draws, rng),
    }
    for height, cal in result["calibration"].items():
        shares = ", ".join(f"{k}: {v['placed']} placed, {v['near']:.0%} near"
                           for k, v in cal["by_share"].items())
        print(f"step of {height}: {shares}; spans {cal['spans']}, holding it "
              f"{cal['spans_holding']:.0%}")
    for height, near in result["least_squares_against_medians"].items():
        print(f"step of {height}: best cut within 2 commits, least squares "
              f"{near['least_squares']:.1%}, medians {near['medians']:.1%}")
    for kind, counts in result["heavy_tails"].items():
        print(f"{kind} noise, 10 % steps in 1,000 commits: {counts}")
    atomic_write_bytes(args.output, (json.dumps(result, indent=1) + "\n").encode())
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
