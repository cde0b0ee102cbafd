"""The history's own figures: false steps on a real A/A history, and scale.

1. A/A: a synthetic git project whose code never changes, 30 commits (each touches a text
   file only), measured by `benchkit history run --callgrind --fast`; then
   `history regressions --json`. Every step it reports is false.
2. Scale: a database of 1,000 commits x 200 benchmarks x 2 metrics (400,000 observations),
   `regressions` over all of it; the size per stored observation.

    python benchmarks/perf_history.py [--commits 30] [--skip-aa]

Writes results/perf_history.json.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
FAST_INSTALL = ("{python} -m venv --without-pip {env} && {python} -c \"import sys; "
                "open(sys.argv[1], 'w').write(sys.argv[2] + chr(10) + sys.argv[3])\" "
                "{env_pth} {src} {caller_site}")
SUITE = '''
from benchkit import Timer
bench_work = Timer("work()", "from aapkg import work", label="work")
bench_small = Timer("small()", "from aapkg import small", label="small")
bench_sorted = Timer("sorted(data)", "import random\\nrandom.seed(0)\\n"
                     "data = [random.random() for _ in range(300)]", label="sorted")
'''


def _git(repo: Path, *args: str, n: int = 0) -> None:
    stamp = f"@{1767225600 + n * 3600} +0000"
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@a",
                        "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@a",
                        "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp})


def benchkit(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "benchkit", *args], cwd=cwd,
                          capture_output=True, text=True, check=True)


def aa_history(commits: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        repo = tmp / "repo"
        (repo / "aapkg").mkdir(parents=True)
        (repo / "aapkg" / "__init__.py").write_text(
            "def work():\n    return sum(range(3000))\n\n\n"
            "def small():\n    return [i for i in range(50)]\n")
        _git(repo, "init", "-q")
        for n in range(commits + 1):
            (repo / "NOTES.txt").write_text(f"note {n}\n")
            _git(repo, "add", "-A")
            _git(repo, "commit", "-qm", f"note {n}", n=n + 1)
        (tmp / "bench_aa.py").write_text(SUITE)
        db = tmp / "aa.db"
        start = time.perf_counter()
        benchkit("history", "run", str(tmp / "bench_aa.py"), "--repo", str(repo), "--revs",
                 "HEAD~%d..HEAD" % commits, "--callgrind", "--fast", "--install", FAST_INSTALL,
                 "--db", str(db), cwd=tmp)
        seconds = time.perf_counter() - start
        steps = json.loads(benchkit("history", "regressions", "--json", "--db", str(db),
                                    cwd=tmp).stdout)
        rows = json.loads(benchkit("history", "export", "--db", str(db), cwd=tmp).stdout)
        size = db.stat().st_size
    false = {m: sum(s["metric"] == m for s in steps) for m in ("time", "instructions")}
    series = len({(r["benchmark"], r["metric"]) for r in rows})
    return {"commits": commits, "benchmarks": 3, "series": series,
            "false_steps": false, "steps": steps, "history_run_seconds": round(seconds, 1),
            "observations": len(rows), "bytes_per_observation": round(size / len(rows))}


def scale(commits: int = 1000, benchmarks: int = 200) -> dict:
    from benchkit.core.history.series import Commit, HistoryMetric, Observation
    from benchkit.orchestration.history import find_steps
    from benchkit.system.history_db import HistoryDB
    from benchkit.core.schema import callgrind_to_dict, measurement_to_dict
    from benchkit.system.results_files import load
    tour = load(ROOT / "results" / "tour_seed003.json")     # real items as evidence
    timed, counted = measurement_to_dict(tour.measurements[0]), callgrind_to_dict(
        tour.callgrind[0])
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scale.db"
        start = time.perf_counter()
        with HistoryDB(path) as db:
            for c in range(commits):
                obs = []
                for b in range(benchmarks):
                    base = 1e-6 * (1 + b) * (1.1 if b % 50 == 0 and c >= 500 else 1.0)
                    t = base * float(np.exp(rng.normal(0, 0.02)))
                    obs.append(Observation(f"bench_{b}", HistoryMetric.TIME, t, t * 0.98,
                                           t * 1.02, 10, timed))
                    n = 10_000.0 * (1 + b) + (500 if b % 40 == 0 and c >= 700 else 0)
                    obs.append(Observation(f"bench_{b}", HistoryMetric.INSTRUCTIONS, n, n, n,
                                           1, counted))
                db.add(obs, commit=Commit(f"{c:040x}", f"2026-01-01T{c:06d}", c), machine="m",
                       measured_at=str(c), source="synthetic", digest=str(c), environment={})
        fill = time.perf_counter() - start
        size = path.stat().st_size
        with HistoryDB(path) as db:
            start = time.perf_counter()
            steps = find_steps(db)
            seconds = time.perf_counter() - start
    return {"commits": commits, "benchmarks": benchmarks, "observations":
            commits * benchmarks * 2, "regressions_seconds": round(seconds, 2),
            "steps_found": len(steps), "planted_steps": benchmarks // 50 + benchmarks // 40,
            "fill_seconds": round(fill, 1),
            "bytes_per_observation": round(size / (commits * benchmarks * 2))}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--commits", type=int, default=30)
    parser.add_argument("--skip-aa", action="store_true")
    args = parser.parse_args()
    out = {"machine": f"{os.cpu_count()} cores", "scale": scale()}
    print(json.dumps(out["scale"], indent=1))
    if not args.skip_aa:
        out["aa"] = aa_history(args.commits)
        print(json.dumps({k: v for k, v in out["aa"].items() if k != "steps"}, indent=1))
    (ROOT / "results").mkdir(exist_ok=True)
    (ROOT / "results" / "perf_history.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
