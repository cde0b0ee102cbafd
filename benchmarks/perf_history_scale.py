"""History at scale: import + regressions + dashboard with benchkit, beside `asv publish`,
on the same asv results directory of thousands of files.

The directory is built from a real recording (benchmarks/record_noise_history.py: one file
per commit, real timings of this VM) scaled out the way a project's CI results grow: the
recorded commits become commits of a real git repository made here, each benchmark becomes
a parameter grid, and the whole is measured on several machines (each its own folder, its
values scaled by a machine factor). Both tools read the same files; asv needs the git
repository for commit order, benchkit gets it with --repo.

    .venv/bin/python benchmarks/perf_history_scale.py RECORDING_DIR [--machines 25] [--rounds 3]

Three shapes of 5,000 files: many machines (25 machines, the recording's 200 commits each:
results/history_scale.json), a long history (one machine, 5,000 commits, the recording
repeated 25 times with `--commits 5000`; where its last commits differ from its first,
each wrap-around is a step; results/history_scale_long.json), and the same with each
benchmark one series, a small suite (`--no-grid`: results/history_scale_small_suite.json);
and large files (25 machines, each benchmark a 25 x 4 grid, `--params 25`: 800 values a
file, 4,000,000 in all: results/history_scale_large_files.json).

A project's own results directory, as it is (`--asv-results DIR --repo CHECKOUT`): the
same steps on it, asv publishing it with the project's `asv.conf.json` (`--asv-conf`; its
repo, results and html folders pointed here) or, without one, the checkout's current branch.
The directory is copied first, so neither tool writes into it.

    .venv/bin/python benchmarks/perf_history_scale.py --asv-results RESULTS --repo CHECKOUT \
        [--asv-conf RESULTS_REPO/asv.conf.json] [--rounds 3]

Reported: wall time and peak memory (max RSS of the process tree) of each step, the
dashboard's size on disk, and a second import of the same directory (incremental). This
VM's speed drifts by tens of percent over minutes, so the two tools take turns, `--rounds`
times (a fresh database and site each round), and the median of each step is reported.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GRID = (["1", "10", "100"], ["'a'", "'b'", "'c'", "'d'"])
ONE_POINT = (["1"], ["'a'"])     # --no-grid: a small suite, one series a benchmark


def build(recording: Path, out: Path, machines: int, commits: int | None = None,
          grid: tuple[list[str], list[str]] = GRID) -> tuple[Path, Path, int]:
    """(results dir, git repo, files) of the scaled-out directory."""
    runs = sorted(p for p in recording.glob("*/*.json") if p.name != "machine.json")
    repo = out / "repo"
    repo.mkdir(parents=True)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True, env=env)
    docs = []
    for path in runs:
        with contextlib.suppress(ValueError):
            doc = json.loads(path.read_text())
            if isinstance(doc, dict) and {"date", "results", "result_columns"} <= doc.keys():
                docs.append(doc)
    if not docs:
        sys.exit(f"{recording}: no asv results files of format 2 (MACHINE/COMMIT-ENV.json); "
                 "pass a directory benchmarks/record_noise_history.py wrote")
    docs.sort(key=lambda d: d["date"])
    if commits:
        # a long history of one project: the recording over and over, a minute a commit
        docs = [dict(docs[i % len(docs)], date=docs[0]["date"] + 60_000 * i)
                for i in range(commits)]
    shas = []
    for i, doc in enumerate(docs):
        stamp = f"@{doc['date'] // 1000} +0000"
        (repo / "f.txt").write_text(str(i))
        subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True, env=env)
        subprocess.run(["git", "-C", str(repo), "commit", "-qm", f"commit {i}"], check=True,
                       env={**env, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp})
        shas.append(subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], check=True,
                                   capture_output=True, text=True).stdout.strip())
    (repo / "asv.conf.json").write_text(json.dumps({
        "version": 1, "project": "scaled", "repo": ".", "branches": ["main"],
        "environment_type": "existing", "results_dir": str(out / "results"),
        "html_dir": str(out / "asv-html")}))
    benchmarks = json.loads((recording / "benchmarks.json").read_text())
    grid_benchmarks = {}
    for name, info in benchmarks.items():
        if name == "version":
            continue
        grid_benchmarks[name] = {**info, "params": [list(g) for g in grid],
                                 "param_names": ["n", "kind"]}
    grid_benchmarks["version"] = 2
    results = out / "results"
    results.mkdir()
    (results / "benchmarks.json").write_text(json.dumps(grid_benchmarks))
    files = 0
    points = len(grid[0]) * len(grid[1])
    for m in range(machines):
        name = f"machine-{m:02d}"
        folder = results / name
        folder.mkdir()
        (folder / "machine.json").write_text(json.dumps({"machine": name, "version": 1}))
        factor = 1 + 0.03 * m
        for doc, sha in zip(docs, shas):
            new = dict(doc, commit_hash=sha, params={**doc["params"], "machine": name})
            columns = doc["result_columns"]
            rows = {}
            for bench, row in doc["results"].items():
                column = dict(zip(columns, row))
                value = column["result"][0] * factor
                entry = dict(column, result=[value * (1 + 0.01 * k) for k in range(points)],
                             params=[list(g) for g in grid],
                             stats_q_25=[None] * points, stats_q_75=[None] * points,
                             stats_ci_99_a=[None] * points, stats_ci_99_b=[None] * points,
                             stats_number=[None] * points, stats_repeat=[None] * points,
                             samples=None)
                rows[bench] = [entry.get(c) for c in columns]
            new["results"] = rows
            (folder / f"{sha[:8]}-{doc['env_name']}.json").write_text(json.dumps(new))
            files += 1
    return results, repo, files


def as_it_is(results: Path, repo: Path, conf: Path | None, out: Path) -> tuple[Path, Path, int]:
    """(results dir, the directory asv publishes from, files) of a project's own results:
    a copy of `results`, and an asv.conf.json (the project's, if given) that reads the copy,
    the checkout `repo` and writes its site under `out`."""
    from asv import util as asv_util
    copy = out / "results"
    shutil.copytree(results, copy)
    files = sum(1 for p in copy.glob("*/*.json") if p.name != "machine.json")
    if conf is not None:
        settings = asv_util.load_json(str(conf), js_comments=True)
    else:
        branch = subprocess.run(["git", "-C", str(repo), "symbolic-ref", "--short", "HEAD"],
                                capture_output=True, text=True).stdout.strip()
        if not branch:
            sys.exit(f"--repo {repo}: HEAD is not on a branch; check one out, or pass "
                     "--asv-conf with the branches asv should publish")
        settings = {"version": 1, "project": repo.name, "branches": [branch]}
    settings.update(repo=str(repo.resolve()), results_dir=str(copy),
                    html_dir=str(out / "asv-html"))
    settings.pop("repo_subdir", None)
    publish_from = out / "asv-conf"
    publish_from.mkdir()
    (publish_from / "asv.conf.json").write_text(json.dumps(settings))
    return copy, publish_from, files


# Runs a command and prints the peak RSS of it and its children (KiB), on its own.
_PEAK = ("import resource, subprocess, sys; done = subprocess.run(sys.argv[1:]); "
         "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); "
         "sys.exit(done.returncode)")


def timed(command: list[str], cwd: Path) -> tuple[float, float]:
    """(seconds, peak RSS of the command and its children in MiB)."""
    began = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _PEAK, *command], cwd=cwd,
                          capture_output=True, text=True)
    seconds = time.perf_counter() - began
    if done.returncode not in (0, 1):
        sys.exit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return seconds, int(done.stderr.strip().splitlines()[-1]) / 1024


def size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("recording", type=Path, nargs="?",
                        help="a directory record_noise_history.py wrote, scaled out here")
    parser.add_argument("--asv-results", type=Path, metavar="DIR",
                        help="measure a project's own asv results directory as it is "
                             "(needs --repo; not with RECORDING)")
    parser.add_argument("--repo", type=Path, metavar="CHECKOUT",
                        help="--asv-results: the project's git checkout or bare clone "
                             "(commit order)")
    parser.add_argument("--asv-conf", type=Path, metavar="FILE",
                        help="--asv-results: the project's asv.conf.json (its branches and "
                             "settings; default: the checkout's current branch)")
    parser.add_argument("--machines", type=int, default=25)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--commits", type=int, help="repeat the recording's runs to this "
                        "many commits (default: each run once)")
    parser.add_argument("--no-grid", action="store_true", help="each benchmark one series, "
                        "not a 3 x 4 parameter grid (a small suite)")
    parser.add_argument("--params", type=int, default=len(GRID[0]), metavar="N",
                        help="values of the grid's first parameter: N x 4 series a "
                             "benchmark (default 3: a 3 x 4 grid)")
    parser.add_argument("-o", "--output", type=Path)
    args = parser.parse_args()
    for name in ("machines", "rounds", "commits", "params"):
        value = getattr(args, name)
        if value is not None and value < 1:
            parser.error(f"--{name} must be at least 1, not {value}")
    if (args.recording is None) == (args.asv_results is None):
        parser.error("give a RECORDING to scale out or --asv-results DIR, one of the two")
    if args.asv_results is not None:
        scaling = [f"--{n.replace('_', '-')}" for n in ("machines", "commits", "params")
                   if getattr(args, n) != parser.get_default(n)] + (
                       ["--no-grid"] if args.no_grid else [])
        if scaling:
            parser.error(f"{', '.join(scaling)} scale out a RECORDING; --asv-results is "
                         "measured as it is")
        from benchkit.system.git import history_source     # what import-asv --repo takes
        if args.repo is None or history_source(args.repo.resolve()) is None:
            parser.error(f"--asv-results needs --repo, the project's git checkout or a bare "
                         f"clone of it (got {args.repo})")
        if not (args.asv_results / "benchmarks.json").is_file():
            parser.error(f"{args.asv_results}: no benchmarks.json; pass an asv results "
                         "directory (MACHINE/COMMIT-ENV.json files beside benchmarks.json)")
        if args.asv_conf is not None and not args.asv_conf.is_file():
            parser.error(f"--asv-conf {args.asv_conf}: no such file")
    elif args.repo is not None or args.asv_conf is not None:
        parser.error("--repo and --asv-conf go with --asv-results")
    asv = shutil.which("asv", path=str(Path(sys.executable).parent))
    if asv is None:
        sys.exit("asv is not installed: pip install asv (benchkit's [bench] extra)")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        grid = ONE_POINT if args.no_grid else (
            (GRID[0] + [str(1000 * k) for k in range(1, args.params)])[:args.params],
            GRID[1])
        if args.asv_results is not None:
            results, publish_from, files = as_it_is(args.asv_results, args.repo,
                                                    args.asv_conf, out)
            repo, machines = args.repo.resolve(), sum(
                1 for p in results.glob("*/machine.json"))
        else:
            results, repo, files = build(args.recording, out, args.machines, args.commits,
                                         grid)
            publish_from, machines = repo, args.machines
        bk = [sys.executable, "-m", "benchkit"]
        measured: dict[str, list[tuple[float, float]]] = {}
        for round_ in range(args.rounds):
            db = out / f"history-{round_}.db"
            site = out / f"site-{round_}"
            shutil.rmtree(out / "asv-html", ignore_errors=True)
            steps = {
                # each measured alone, so each peak is its own (RUSAGE_CHILDREN keeps the max)
                "benchkit import-asv": bk + ["history", "import-asv", str(results), "--repo",
                                             str(repo), "--db", str(db)],
                "benchkit regressions": bk + ["history", "regressions", "--json", "--db",
                                              str(db)],
                "benchkit report": bk + ["report", str(site), "--db", str(db)],
                "benchkit import-asv again": bk + ["history", "import-asv", str(results),
                                                   "--repo", str(repo), "--db", str(db)],
                "asv publish": [asv, "publish", "--config",
                                str(publish_from / "asv.conf.json")],
            }
            for name, command in steps.items():
                measured.setdefault(name, []).append(timed(command, publish_from if name ==
                                                           "asv publish" else out))
        rows = {name: (statistics.median(s for s, _ in runs), max(p for _, p in runs))
                for name, runs in measured.items()}
        pipeline = ("benchkit import-asv", "benchkit regressions", "benchkit report")
        totals = [sum(measured[k][r][0] for k in pipeline) for r in range(args.rounds)]
        # paired: each round's benchkit total over the asv publish run next to it
        ratios = [measured["asv publish"][r][0] / totals[r] for r in range(args.rounds)]
        total, ratio = statistics.median(totals), statistics.median(ratios)
        result = {
            "files": files, "machines": machines, "rounds": args.rounds,
            **({"asv_results": str(args.asv_results)} if args.asv_results else
               {"series_per_benchmark": len(grid[0]) * len(grid[1])}),
            "seconds_each_round": {k: [round(t, 2) for t, _ in v] for k, v in measured.items()},
            "seconds": {k: round(v[0], 2) for k, v in rows.items()},
            "peak_rss_mib": {k: round(v[1]) for k, v in rows.items()},
            "benchkit_total_seconds": round(total, 2),
            "asv_publish_over_benchkit_total": round(ratio, 2),
            "benchkit_site_bytes": size(site),
            "benchkit_database_bytes": db.stat().st_size,
            "asv_site_bytes": size(out / "asv-html"),
        }
    print(f"{files} asv results files ({machines} machines), median of {args.rounds} "
          "rounds")
    for name, (seconds, peak) in rows.items():
        print(f"  {name:28} {seconds:8.1f} s   peak {peak:7.0f} MiB")
    print(f"  benchkit import + regressions + report: {total:.1f} s "
          f"(asv publish / benchkit, median of the rounds' ratios: {ratio:.2f})")
    print(f"  site: benchkit {result['benchkit_site_bytes'] / 2**20:.1f} MiB, asv "
          f"{result['asv_site_bytes'] / 2**20:.1f} MiB; database "
          f"{result['benchkit_database_bytes'] / 2**20:.1f} MiB")
    if args.output:
        args.output.write_text(json.dumps(result, indent=1) + "\n")
        print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
