"""Real steps that come back: two recordings of the same commits, each tool's slower steps in both.

A step a detector names in the real series of one recording is a claim about the code; a
second recording of the same commits (same suite, same machine, another hour's noise)
should show it again, and a step that only one recording shows was that recording's noise
(a slow hour, a neighbour), not the code. For benchkit (its steps at a commit and its spans)
and asv (`asv.step_detect`'s regressions) on the same series:

    python benchmarks/perf_history_replication.py .bench-data/scipy-releases \\
        .bench-data/scipy-releases-2 --min-points 20 -o results/history_replication_scipy.json

A step at a commit is shown again where the other recording names a slower step of the same
series within --tolerance commits, or gives a span holding it; a span, where the other
recording's step or span meets it. No steps are taken out or put in: the series as recorded.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import perf_history_detection as detection  # noqa: E402

Claims = dict[str, tuple[list[int], list[tuple[int, int]]]]   # series -> (commits, spans)


def slower_steps(directory: Path, min_points: int) -> dict[str, Claims]:
    """Per tool, per series (benchmark and parameters): the slower steps at a commit (its
    index) and, for benchkit, those given a span (first, last index)."""
    series = detection.load_series([directory], min_points)
    out: dict[str, Claims] = {"asv": {}, "benchkit": {}}
    for label, values in series:
        name = label.split("/", 2)[2]
        placed, spans = detection.benchkit_report(
            detection.on_one_kind_values(series, label, values))
        out["benchkit"][name] = ([i for i, c in placed if c > 0],
                                 [(a, b) for a, b, c in spans if c > 0])
        out["asv"][name] = ([i for i, c in detection.asv_report(values)[0] if c > 0], [])
    return out


def shown_again(first: Claims, second: Claims, tolerance: int) -> dict:
    """How many of `first`'s claims `second` makes too, and the series of those it does not."""
    counts = {"at_a_commit": 0, "at_a_commit_again": 0, "spans": 0, "spans_again": 0}
    alone = []
    for name, (commits, spans) in first.items():
        if name not in second:
            continue
        other_commits, other_spans = second[name]
        for i in commits:
            again = any(abs(i - j) <= tolerance for j in other_commits) or any(
                a - tolerance <= i <= b + tolerance for a, b in other_spans)
            counts["at_a_commit"] += 1
            counts["at_a_commit_again"] += again
            if not again:
                alone.append({"series": name, "index": i})
        for a, b in spans:
            again = any(a - tolerance <= j <= b + tolerance for j in other_commits) or any(
                not (d < a or c > b) for c, d in other_spans)
            counts["spans"] += 1
            counts["spans_again"] += again
            if not again:
                alone.append({"series": name, "span": [a, b]})
    return {**counts, "not_shown_again": alone}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("first", type=Path, help="asv results directory: one recording")
    parser.add_argument("second", type=Path, help="the same commits recorded again")
    parser.add_argument("--min-points", type=int, default=25)
    parser.add_argument("--tolerance", type=int, default=1)
    parser.add_argument("-o", "--output", type=Path)
    args = parser.parse_args()
    for directory in (args.first, args.second):
        if not (directory / "benchmarks.json").is_file():
            parser.error(f"{directory}: not an asv results directory (no benchmarks.json)")
    if args.min_points < 2 or args.tolerance < 0:
        parser.error(f"--min-points {args.min_points} / --tolerance {args.tolerance}: give at "
                     "least 2 points and a tolerance of 0 or more commits")
    one, two = (slower_steps(d, args.min_points) for d in (args.first, args.second))
    result = {"settings": {"first": str(args.first), "second": str(args.second),
                           "min_points": args.min_points, "tolerance": args.tolerance},
              "series": len(one["asv"])}
    for tool in ("asv", "benchkit"):
        result[tool] = {"first_in_second": shown_again(one[tool], two[tool], args.tolerance),
                        "second_in_first": shown_again(two[tool], one[tool], args.tolerance)}
        for way, label in (("first_in_second", "1st in 2nd"), ("second_in_first", "2nd in 1st")):
            r = result[tool][way]
            print(f"{tool:9} {label}: {r['at_a_commit']} slower steps at a commit, "
                  f"{r['at_a_commit_again']} shown again; {r['spans']} in a span, "
                  f"{r['spans_again']} shown again")
    if args.output:
        args.output.write_text(json.dumps(result, indent=1) + "\n")
        print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
