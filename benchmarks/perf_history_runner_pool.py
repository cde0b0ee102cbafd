"""A real history as a pool of CI runners of two kinds would have recorded it, with and
without the runs saying which kind they ran on: the steps benchkit and asv find in each.

Each commit's results file of an asv results directory is, with probability --share, taken
as run on a second kind of runner --factor times slower: every time value in it (results,
confidence bounds, quartiles) multiplied by --factor. Three copies are imported:

- `original`: the directory as it is;
- `pooled`: the slower files keep the machine's CPU (a pool whose kinds report one CPU
  string, or runs that do not record it): one series of both kinds;
- `recorded`: the slower files name another CPU in asv's `params` (as `asv machine` writes
  it on each runner): benchkit keeps each kind a series of its own (core/history/changes.py),
  as asv's graphs do.

Both detectors run on every wall-time series of each copy (benchkit: the steps `history
regressions` reports, not transient, after it looks for kinds of runner the runs do not
name; asv: `detect_steps` then
`detect_regressions(threshold=0.05)` in both directions, as `asv publish` reports
regressions and improvements). Each tool is scored against its own steps on the original:
`kept`, how many of those it still reports (in the same benchmark, at the point of the copy's
series that follows the original's commit, within --tolerance points), and
`new`, the steps it reports that match none (what the pool made up).

    .venv/bin/python benchmarks/perf_history_runner_pool.py DIR [DIR ...] --factor 1.3 \
        --share 0.5 -o results/history_runner_pool.json

DIRs used: numpy's, scipy's and xarray's suites run against their releases on this VM
(benchmarks/record_release_history.py; see perf_history_detection.py).
"""
from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

from benchkit.core.history.steps import steps_of
from benchkit.orchestration.asv_import import import_asv
from benchkit.core.history.machine.runners import on_one_kind
from benchkit.system.history_db import HistoryDB

TIME_COLUMNS = ("result", "stats_ci_99_a", "stats_ci_99_b", "stats_q_25", "stats_q_75")
OTHER_CPU = "a second kind of runner"
COPIES = ("original", "pooled", "recorded")


def slowed(document: dict, factor: float) -> dict:
    """An asv results file (format 2) as a runner `factor` times slower would have written
    it: every time_ benchmark's time columns multiplied."""
    columns = document["result_columns"]
    for name, row in document["results"].items():
        if not name.split(".")[-1].startswith("time_") or not isinstance(row, list):
            continue
        for column in TIME_COLUMNS:
            if column in columns and columns.index(column) < len(row):
                values = row[columns.index(column)]
                if isinstance(values, list):
                    row[columns.index(column)] = [v * factor if isinstance(v, (int, float))
                                                  and not isinstance(v, bool) else v
                                                  for v in values]
    return document


def copies(source: Path, out: Path, factor: float, share: float, seed: int) -> dict[str, Path]:
    """The three copies of `source` under `out`."""
    rng = np.random.default_rng(seed)
    made = {}
    for copy in COPIES:
        shutil.copytree(source, out / copy)
        made[copy] = out / copy
    for path in sorted(source.glob("*/*.json")):
        if path.name in ("machine.json", "benchmarks.json"):
            continue
        document = json.loads(path.read_text())
        if document.get("version") != 2:
            sys.exit(f"{path}: asv results format {document.get('version')}; this script "
                     "writes format 2 only")
        if rng.random() >= share:
            continue
        for copy in ("pooled", "recorded"):
            changed = slowed(json.loads(path.read_text()), factor)
            if copy == "recorded":
                changed["params"]["cpu"] = OTHER_CPU
            (made[copy] / path.relative_to(source)).write_text(json.dumps(changed))
    return made


def found_steps(directory: Path) -> dict[str, list[tuple[str, str, list[str]]]]:
    """Per tool, each step as (benchmark, commit, the commits of its series in order)."""
    from asv.step_detect import detect_regressions, detect_steps
    out: dict[str, list] = {"benchkit": [], "asv": []}
    with tempfile.TemporaryDirectory() as tmp, HistoryDB(Path(tmp) / "h.db") as db:
        import_asv(db, directory)
        raw = db.series(metric="time")
        # benchkit as `history regressions` reads the series: kinds of runner the runs do not
        # name, if any, found across each history's series first (runners.on_one_kind)
        for series, seen_by_benchkit in zip(raw, on_one_kind(raw)[0]):
            shas = [p.commit.sha for p in series.points]
            out["benchkit"] += [(series.benchmark, s.commit.sha, shas)
                                for s in steps_of(seen_by_benchkit) if not s.transient]
            if len(shas) < 2:
                continue
            values = [p.value for p in series.points]
            # regressions, then improvements: the regressions of the reciprocal values
            for seen in (values, [1 / v for v in values]):
                _, _, found = detect_regressions(detect_steps(seen), threshold=0.05)
                out["asv"] += [(series.benchmark, shas[after], shas)
                               for _, after, _, _ in found or []]
    return out


def scored(original: list, copy: list, order: dict[str, int], tolerance: int
           ) -> dict[str, int]:
    """`kept` and `new` (module docstring); `order`: each commit's place in history."""
    def matches(step, truth) -> bool:
        benchmark, sha, shas = step
        if benchmark != truth[0]:
            return False
        i = shas.index(sha)
        earliest = order[shas[i - 1 - tolerance]] if i > tolerance else -1
        return earliest < order[truth[1]] <= order[shas[min(i + tolerance, len(shas) - 1)]]
    kept = sum(any(matches(step, truth) for step in copy) for truth in original)
    new = sum(not any(matches(step, truth) for truth in original) for step in copy)
    return {"steps": len(copy), "kept": kept, "new": new}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="+", type=Path)
    parser.add_argument("--factor", type=float, default=1.3)
    parser.add_argument("--share", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--tolerance", type=int, default=1,
                        help="a step this many points of its series from the original's "
                             "still matches it")
    parser.add_argument("-o", "--output", type=Path)
    args = parser.parse_args()
    if not (0 < args.factor < math.inf and 0 <= args.share <= 1 and args.tolerance >= 0):
        parser.error(f"--factor {args.factor:g} --share {args.share:g} --tolerance "
                     f"{args.tolerance}: the factor must be a finite number above 0, the share "
                     "between 0 and 1 and the tolerance 0 or more")
    for directory in args.dirs:
        if not directory.is_dir():
            parser.error(f"{directory}: not a directory; pass asv results directories")
    result = {"settings": {"factor": args.factor, "share": args.share, "seed": args.seed,
                           "tolerance": args.tolerance},
              "data": []}
    for directory in args.dirs:
        with tempfile.TemporaryDirectory() as tmp:
            made = copies(directory, Path(tmp), args.factor, args.share, args.seed)
            steps = {copy: found_steps(path) for copy, path in made.items()}
        # history order: the longest series' (a release history's series hold every commit)
        longest = max((shas for copy in steps.values() for tool in copy.values()
                       for _, _, shas in tool), key=len, default=[])
        order = {sha: i for i, sha in enumerate(longest)}
        row = {"directory": str(directory), "tools": {}}
        for tool in ("benchkit", "asv"):
            original = steps["original"][tool]
            row["tools"][tool] = {copy: scored(original, steps[copy][tool], order,
                                               args.tolerance)
                                  for copy in COPIES}
        result["data"].append(row)
        print(f"\n{directory}: {args.share:.0%} of the runs {args.factor:g}x slower")
        for tool, by_copy in row["tools"].items():
            print(f"{tool:9}" + "".join(
                f"  {copy}: {s['steps']} steps, {s['kept']} of the original's kept, "
                f"{s['new']} new;" for copy, s in by_copy.items()))
    if args.output:
        args.output.write_text(json.dumps(result, indent=1) + "\n")
        print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
