"""The history's own figures: false steps on a real A/A history, detection on a real history
with known steps, side by side with asv's step detector on the same per-commit values; scale.

1. A/A: a synthetic git project whose code never changes, 30 commits (each touches a text
   file only), measured by `benchkit history run --callgrind` (wall time: 10 processes of
   0.05 s per commit, as the end-to-end test); then `history regressions --json`. Every step
   it reports is false.
2. Steps: the same project where `work()` does 10 % more work from commit 10 on and another
   5 % more from commit 20 on (the other two benchmarks never change).
   Both histories also go through asv's own detector (`asv.step_detect`, as `asv publish`
   runs it, 5 % threshold) on the per-commit medians.
3. Scale: a database of 1,000 commits x 200 benchmarks x 2 metrics (400,000 observations),
   `regressions` and `report` over all of it; the size per stored observation.

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


WALL_TIME = ("--processes", "10", "--min-run-time", "0.05")


def asv_regressions(values: list[float]) -> list[int]:
    """Where asv's detector (as `asv publish` runs it, 5 % threshold) puts regressions in a
    series of per-commit values: the index of the first commit after each upward step."""
    from asv import step_detect
    steps = step_detect.detect_steps(values)
    _, _, found = step_detect.detect_regressions(steps, threshold=0.05)
    return sorted(after for _, after, _, _ in found or [])


def measured_history(commits: int, work: dict[int, int]) -> dict:
    """A project of `commits` commits in which work() sums range(work[n]) from commit n on,
    measured and searched for steps by benchkit and by asv's detector."""
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        repo = tmp / "repo"
        (repo / "aapkg").mkdir(parents=True)
        _git(repo, "init", "-q")
        size = work[0]
        for n in range(commits + 1):
            size = work.get(n, size)
            (repo / "aapkg" / "__init__.py").write_text(
                f"def work():\n    return sum(range({size}))\n\n\n"
                "def small():\n    return [i for i in range(50)]\n")
            (repo / "NOTES.txt").write_text(f"note {n}\n")
            _git(repo, "add", "-A")
            _git(repo, "commit", "-qm", f"note {n}", n=n + 1)
        (tmp / "bench_aa.py").write_text(SUITE)
        db = tmp / "aa.db"
        start = time.perf_counter()
        benchkit("history", "run", str(tmp / "bench_aa.py"), "--repo", str(repo), "--revs",
                 "HEAD~%d..HEAD" % commits, "--callgrind", *WALL_TIME, "--install",
                 FAST_INSTALL, "--db", str(db), cwd=tmp)
        seconds = time.perf_counter() - start
        steps = json.loads(benchkit("history", "regressions", "--json", "--db", str(db),
                                    cwd=tmp).stdout)
        rows = json.loads(benchkit("history", "export", "--db", str(db), cwd=tmp).stdout)
        size = db.stat().st_size
        order = [line.split()[0] for line in subprocess.run(
            ["git", "-C", str(repo), "log", "--reverse", "--format=%H %s"], text=True,
            capture_output=True, check=True).stdout.splitlines()]
    number = {sha: n for n, sha in enumerate(order)}       # commit n of the project
    asv_found = {}
    for name in sorted({r["benchmark"] for r in rows}):
        timed = sorted((number[r["commit"]], r["value"]) for r in rows
                       if r["benchmark"] == name and r["metric"] == "time")
        asv_found[name] = [timed[i][0] for i in asv_regressions([v for _, v in timed])]
    found = [{"benchmark": s["benchmark"], "metric": s["metric"], "commit": number[s["commit"]],
              "change": round(s["change"], 4)} for s in steps]
    return {"commits": commits, "benchmarks": 3, "work": work, "steps_benchkit": found,
            "regressions_asv_step_detect": asv_found,
            "history_run_seconds": round(seconds, 1), "observations": len(rows),
            "bytes_per_observation": round(size / len(rows))}


def scale(commits: int = 1000, benchmarks: int = 200) -> dict:
    from benchkit.core.history.series import Commit, Observation
    from benchkit.orchestration.dashboard import gather, write_report
    from benchkit.orchestration.history import find_steps
    from benchkit.system.history_db import HistoryDB
    from benchkit.core.records.schema import callgrind_to_dict, measurement_to_dict
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
                    obs.append(Observation(f"bench_{b}", "time", t, t * 0.98,
                                           t * 1.02, 10, timed))
                    n = 10_000.0 * (1 + b) + (500 if b % 40 == 0 and c >= 700 else 0)
                    obs.append(Observation(f"bench_{b}", "instructions", n, n, n,
                                           1, counted))
                db.add(obs, commit=Commit(f"{c:040x}", f"2026-01-01T{c:06d}", c), machine="m",
                       measured_at=str(c), source="synthetic", digest=str(c), environment={})
        fill = time.perf_counter() - start
        size = path.stat().st_size
        with HistoryDB(path) as db:
            start = time.perf_counter()
            steps = find_steps(db)
            seconds = time.perf_counter() - start
            start = time.perf_counter()
            site = write_report(gather(db), Path(tmp) / "site", source=str(path))
            report_seconds = time.perf_counter() - start
            site_bytes = sum(p.stat().st_size for p in site.rglob("*") if p.is_file())
    return {"commits": commits, "benchmarks": benchmarks, "observations":
            commits * benchmarks * 2, "regressions_seconds": round(seconds, 2),
            "steps_found": len(steps), "planted_steps": benchmarks // 50 + benchmarks // 40,
            "fill_seconds": round(fill, 1), "report_seconds": round(report_seconds, 1),
            "report_megabytes": round(site_bytes / 1e6, 1),
            "bytes_per_observation": round(size / (commits * benchmarks * 2))}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--commits", type=int, default=30)
    parser.add_argument("--skip-aa", action="store_true")
    args = parser.parse_args()
    written = ROOT / "results" / "perf_history.json"
    out = {"machine": f"{os.cpu_count()} cores", "scale": scale()}
    if args.skip_aa and written.exists():        # keep the histories measured before
        out = {**json.loads(written.read_text()), **out}
    print(json.dumps(out["scale"], indent=1))
    if not args.skip_aa:
        out["aa"] = measured_history(args.commits, {0: 3000})
        print(json.dumps(out["aa"], indent=1))
        out["steps"] = measured_history(args.commits, {0: 3000, 10: 3300, 20: 3465})
        print(json.dumps(out["steps"], indent=1))
    written.parent.mkdir(exist_ok=True)
    written.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
