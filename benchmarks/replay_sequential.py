"""Replay the sequential `ab` rule on recorded rounds: how a design choice changes the
verdicts and the rounds to them, on the very same data.

Records fixed 30-round A/Bs of benchmarks/decisions_suite.py (`benchkit ab --rounds 30`,
about 4 minutes each: identical code, and NEW with 2 % more work), keeps them in --dir, then
re-judges every benchmark look by look with core.round_verdicts.decide_rounds as a sequential
A/B would have, for each error an "unchanged" verdict may spend (equivalence_error; 0.01 is
the A/B's alpha, i.e. one error for both ways). Writes results/replay_sequential.json.

    .venv/bin/python benchmarks/replay_sequential.py [--aa 3] [--changed 1] [--dir DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import benchkit
from benchkit.core.decisions import round_verdicts
from benchkit.core.decisions.sequential import SequentialPlan
from benchkit.system import machine
from benchkit.system.files import atomic_write_bytes

ROOT = Path(__file__).resolve().parent.parent
SUITE = ROOT / "benchmarks" / "decisions_suite.py"
OUT = ROOT / "results" / "replay_sequential.json"
ROUNDS = 30
KINDS = {"A/A": 100, "+2%": 102}
ERRORS = (0.01, 0.05, 0.10)


def record(directory: Path, kind: str, i: int) -> Path:
    path = directory / f"{'aa' if kind == 'A/A' else 'p2'}-{i}.json"
    if not path.exists():
        done = subprocess.run(
            [sys.executable, "-m", "benchkit", "ab", str(SUITE), "--rounds", str(ROUNDS),
             "--new-env", f"BENCH_WORK={KINDS[kind]}", "--json", "-o", str(path)],
            capture_output=True, text=True, env={**os.environ, "BENCH_WORK": "100"})
        if done.returncode not in (0, 1):
            raise RuntimeError(done.stderr[-2000:])
    return path


def benchmarks_of(path: Path) -> list[tuple[list, list]]:
    """(BASE rounds, NEW rounds) of each benchmark of a recorded A/B."""
    sides: dict[str, dict[str, list]] = {}
    for m in benchkit.load(path).measurements:
        sides.setdefault(m.metadata["benchmark"], {})[m.metadata["side"]] = m.chunk_times()
    return [(s["base"], s["new"]) for s in sides.values()]


def replay(base: list, new: list, plan: SequentialPlan) -> tuple[str, int]:
    """The verdict a sequential A/B with `plan` reaches on these rounds, and its rounds."""
    for n in plan.looks():
        decision = round_verdicts.decide_rounds(base[:n], new[:n], alpha=0.01, noise=None,
                                                plan=plan)
        if decision.verdict.value != "inconclusive":
            break
    return decision.verdict.value, n


def main(aa: int, changed: int, directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    recorded = {"A/A": [record(directory, "A/A", i) for i in range(aa)],
                "+2%": [record(directory, "+2%", i) for i in range(changed)]}
    figures: dict = {"environment": machine.collect(str(ROOT)), "rounds_recorded": ROUNDS,
                     "sessions": {k: len(v) for k, v in recorded.items()}, "replays": {}}
    for error in ERRORS:
        plan = SequentialPlan(ROUNDS, equivalence_error=error)
        row = {}
        for kind, paths in recorded.items():
            outcomes = [replay(b, n, plan) for p in paths for b, n in benchmarks_of(p)]
            verdicts = [v for v, _ in outcomes]
            row[kind] = {"verdicts": {v: verdicts.count(v) for v in sorted(set(verdicts))},
                         "median_rounds": statistics.median(n for _, n in outcomes)}
        figures["replays"][f"equivalence_error={error}"] = row
        print(error, json.dumps(row), flush=True)
    atomic_write_bytes(OUT, (json.dumps(figures, indent=1) + "\n").encode())
    print(f"wrote {OUT}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--aa", type=int, default=3, help="identical-code A/Bs to record")
    parser.add_argument("--changed", type=int, default=1, help="+2 %% A/Bs to record")
    parser.add_argument("--dir", type=Path, default=ROOT / "results" / "replay_rounds",
                        help="where the recorded A/Bs are kept (and reused)")
    args = parser.parse_args()
    main(args.aa, args.changed, args.dir)
