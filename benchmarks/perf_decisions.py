"""Decision quality on this machine: false claims on identical code, detection of real changes.

The six micro-benchmarks of benchmarks/decisions_suite.py, judged three ways, on a quiet
machine and with a CPU-burning neighbour process:
  - `benchkit run` recorded separately several times + `benchkit compare` (every pair),
  - `benchkit ab` (interleaved, in one session),
  - pyperf: `pyperf timeit` per benchmark + `pyperf compare_to` (when pyperf is installed).
A/A compares identical code; A/B gives NEW 5 %, 2 % (and for `ab` 1 %) more work per run.
`ab` runs with its defaults: sequential, each benchmark stopped once its verdict is clear.
Writes the false-claim rates, detection rates, wrong-direction claims, wall time per
benchmark and, for `ab`, the rounds and seconds each benchmark took to its verdict to
results/perf_decisions.json.

    .venv/bin/python benchmarks/perf_decisions.py [--quick] [--conditions quiet,neighbour]
    (about an hour; --quick ~15 min). Conditions not run keep their figures from an earlier
    results file, which records the commit each condition was measured at.
"""
from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchkit.system import machine
from benchkit.system.files import atomic_write_bytes

ROOT = Path(__file__).resolve().parent.parent
SUITE = ROOT / "benchmarks" / "decisions_suite.py"
OUT = ROOT / "results" / "perf_decisions.json"
WORK = {"A": 100, "+5%": 105, "+2%": 102, "+1%": 101}
RUN_CHANGES = ("+5%", "+2%")            # run + compare and pyperf
AB_CHANGES = ("+5%", "+2%", "+1%")
NAMES = ["sum", "sorted", "dict", "join", "numpy", "listcomp"]


def benchkit_cli(*args: str, work: int) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "benchkit", *args], capture_output=True,
                          text=True, env={**os.environ, "BENCH_WORK": str(work)}, check=False)


@contextlib.contextmanager
def neighbour(on: bool):
    """A process burning a CPU for the duration, when `on`."""
    if not on:
        yield
        return
    burner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield
    finally:
        burner.kill()
        burner.wait()


def tally(verdicts: list[str], expected: str | None) -> dict:
    claims = [v for v in verdicts if v in ("faster", "slower")]
    out = {"comparisons": len(verdicts), "claims": len(claims),
           "verdicts": {v: verdicts.count(v) for v in sorted(set(verdicts))}}
    if expected:
        out["detected"] = verdicts.count(expected)
        out["wrong_direction"] = len(claims) - out["detected"]
        out["detection_rate"] = out["detected"] / len(verdicts) if verdicts else None
    else:
        out["false_claim_rate"] = len(claims) / len(verdicts) if verdicts else None
    return out


def run_and_compare(tmp: Path, runs_a: int, runs_b: int) -> dict:
    files: dict[str, list[Path]] = {k: [] for k in WORK}
    spent = 0.0
    for kind, count in (("A", runs_a), *((k, runs_b) for k in RUN_CHANGES)):
        for i in range(count):
            path = tmp / f"run-{kind}-{i}.json"
            start = time.monotonic()
            done = benchkit_cli("run", str(SUITE), "-o", str(path), work=WORK[kind])
            spent += time.monotonic() - start
            if done.returncode != 0:
                raise RuntimeError(done.stderr)
            files[kind].append(path)

    def verdicts(pairs):
        out = []
        for base, new in pairs:
            done = benchkit_cli("compare", str(base), str(new), "--json", work=WORK["A"])
            out += [r["wall"]["verdict"] for r in json.loads(done.stdout)["rows"]]
        return out
    result = {"A/A": tally(verdicts(itertools.combinations(files["A"], 2)), None)}
    for kind in RUN_CHANGES:
        result[kind] = tally(verdicts(itertools.product(files["A"], files[kind])), "slower")
    total_runs = runs_a + len(RUN_CHANGES) * runs_b
    result["seconds_per_benchmark"] = spent / total_runs / len(NAMES)
    return result


def ab(tmp: Path, sessions_aa: int, sessions_b: int, sessions_one: int) -> dict:
    """`benchkit ab` with its defaults; per benchmark the rounds to its verdict and the
    seconds that took (the session's time shared out by rounds)."""
    result, spent, count = {}, 0.0, 0
    plan = (("A/A", sessions_aa, None),) + tuple(
        (k, sessions_one if k == "+1%" else sessions_b, "slower") for k in AB_CHANGES)
    for kind, sessions, expected in plan:
        verdicts, rounds, seconds = [], [], []
        for i in range(sessions):
            start = time.monotonic()
            work = WORK["A"] if kind == "A/A" else WORK[kind]
            done = benchkit_cli("ab", str(SUITE), "--new-env", f"BENCH_WORK={work}", "--json",
                                "-o", str(tmp / f"ab-{kind}-{i}.json"), work=WORK["A"])
            took = time.monotonic() - start
            spent += took
            count += 1
            if done.returncode not in (0, 1):
                raise RuntimeError(done.stderr)
            rows = json.loads(done.stdout)["rows"]
            verdicts += [r["wall"]["verdict"] for r in rows]
            used = [r["wall"]["units"]["base"] for r in rows]
            rounds += used
            seconds += [took * n / sum(used) for n in used]
        result[kind] = tally(verdicts, expected)
        result[kind]["rounds_to_verdict"] = {"median": statistics.median(rounds),
                                             "max": max(rounds)}
        result[kind]["seconds_to_verdict"] = {"median": round(statistics.median(seconds), 2),
                                              "max": round(max(seconds), 2)}
    result["seconds_per_benchmark"] = spent / count / len(NAMES)
    return result


def pyperf_available() -> bool:
    return subprocess.run([sys.executable, "-c", "import pyperf"],
                          capture_output=True).returncode == 0


def _suite_snippets(work: int) -> list[tuple[str, str]]:
    code = ("import json, importlib.util, sys\n"
            f"spec = importlib.util.spec_from_file_location('s', {str(SUITE)!r})\n"
            "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
            "print(json.dumps([(t.task_spec.stmt, t.task_spec.setup) for n, t in vars(m).items()"
            " if n.startswith('bench_')]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "BENCH_WORK": str(work)}, check=True)
    return [tuple(x) for x in json.loads(out.stdout)]


def pyperf(tmp: Path, runs_a: int, runs_b: int) -> dict:
    spent = 0.0
    files: dict[str, list[list[Path]]] = {k: [] for k in WORK}
    for kind, count in (("A", runs_a), *((k, runs_b) for k in RUN_CHANGES)):
        snippets = _suite_snippets(WORK[kind])
        for i in range(count):
            paths = []
            for name, (stmt, setup) in zip(NAMES, snippets):
                path = tmp / f"pyperf-{kind}-{i}-{name}.json"
                start = time.monotonic()
                subprocess.run([sys.executable, "-m", "pyperf", "timeit", "--quiet", "-o",
                                str(path), "-s", setup, stmt], check=True, capture_output=True)
                spent += time.monotonic() - start
                paths.append(path)
            files[kind].append(paths)

    def verdicts(pairs):
        out = []
        for base, new in pairs:
            for a, b in zip(base, new):
                text = subprocess.run([sys.executable, "-m", "pyperf", "compare_to", str(a),
                                       str(b)], capture_output=True, text=True).stdout
                if "Not significant" in text:
                    out.append("not significant")
                elif re.search(r"slower", text):
                    out.append("slower")
                elif re.search(r"faster", text):
                    out.append("faster")
                else:
                    out.append("unchanged")
        return out
    result = {"A/A": tally(verdicts(itertools.combinations(files["A"], 2)), None)}
    for kind in RUN_CHANGES:
        result[kind] = tally(verdicts(itertools.product(files["A"], files[kind])), "slower")
    result["seconds_per_benchmark"] = spent / (runs_a + len(RUN_CHANGES) * runs_b) / len(NAMES)
    return result


def main(quick: bool, conditions: list[str], no_pyperf: bool = False,
         tools: tuple[str, ...] = ("run", "ab", "pyperf")) -> None:
    plan = {"runs_a": 3 if quick else 5, "runs_b": 1 if quick else 2,
            "ab_aa": 2 if quick else 6, "ab_b": 1 if quick else 2, "ab_one": 1,
            "pyperf_a": 0 if quick else 3, "pyperf_b": 0 if quick else 1}
    environment = machine.collect(str(ROOT))
    figures = {"environment": environment, "plan": plan, "conditions": {}}
    if OUT.exists():
        figures["conditions"] = json.loads(OUT.read_text()).get("conditions", {})
    with tempfile.TemporaryDirectory() as tmp:
        for condition in conditions:
            out: dict = {}
            with neighbour(condition == "neighbour"):
                if "run" in tools:
                    print(f"[{condition}] benchkit run + compare ...", flush=True)
                    out["benchkit run + compare"] = run_and_compare(
                        Path(tmp), plan["runs_a"], plan["runs_b"])
                if "ab" in tools:
                    print(f"[{condition}] benchkit ab ...", flush=True)
                    out["benchkit ab"] = ab(Path(tmp), plan["ab_aa"], plan["ab_b"],
                                           plan["ab_one"])
                if ("pyperf" in tools and plan["pyperf_a"] and not no_pyperf
                        and pyperf_available()):
                    print(f"[{condition}] pyperf ...", flush=True)
                    try:
                        out["pyperf timeit + compare_to"] = pyperf(Path(tmp), plan["pyperf_a"],
                                                                   plan["pyperf_b"])
                    except subprocess.CalledProcessError as exc:
                        out["pyperf timeit + compare_to"] = {
                            "error": f"pyperf exited {exc.returncode}: {exc.stderr!r:.500}"}
            for figures_of_tool in out.values():
                figures_of_tool["measured_at"] = {
                    "commit": environment.get("git", {}).get("commit"),
                    "timestamp": environment.get("timestamp"), "plan": plan}
            # tools not run this time keep their figures (each says when it was measured)
            figures["conditions"][condition] = {**figures["conditions"].get(condition, {}),
                                                **out}
            print(json.dumps(out, indent=1), flush=True)
    atomic_write_bytes(OUT, (json.dumps(figures, indent=1) + "\n").encode())
    print(f"wrote {OUT}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-pyperf", action="store_true",
                        help="skip pyperf (its figures do not depend on benchkit's code)")
    parser.add_argument("--tools", default="run,ab,pyperf",
                        help="comma-separated subset of run,ab,pyperf")
    parser.add_argument("--conditions", default="quiet,neighbour",
                        help="comma-separated subset of quiet,neighbour")
    args = parser.parse_args()
    chosen = [c for c in args.conditions.split(",") if c]
    if not chosen or set(chosen) - {"quiet", "neighbour"}:
        parser.error(f"--conditions {args.conditions!r}: use quiet, neighbour or both")
    tools = tuple(t for t in args.tools.split(",") if t)
    if not tools or set(tools) - {"run", "ab", "pyperf"}:
        parser.error(f"--tools {args.tools!r}: use run, ab, pyperf or a comma list of them")
    main(args.quick, chosen, args.no_pyperf, tools)
