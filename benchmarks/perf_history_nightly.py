"""False alerts night by night: each commit of a history, judged as the history stood then.

A team reads its history after each nightly run: the steps reported at the newest commits
are that night's alerts. On a noise history (benchmarks/record_noise_history.py: the code
never changed) every one is false, and a shared runner's slow night at the newest end is
where one series alone cannot tell a spell from a step. For each night k from --first on,
every wall-time series of each directory (asv's layout) is cut at the history's k-th commit
and both tools judge it as they would that night:

- asv: `detect_steps` then `detect_regressions(steps, threshold=0.05)` per series, as
  `asv publish` reports regressions;
- benchkit: as `benchkit history regressions` does (`runners.on_one_kind` over the history,
  `steps_of` per series, `slower_stretches.told_by_stretches`, `slower_share.
  held_by_shares`, then `newest_spell.held_by_spells`), the steps to act on (not pending,
  not transient); and the same without `held_by_spells` (`benchkit_without_machine_spell`)
  and without `held_by_shares` (`benchkit_without_machine_share`): what the rules for a
  slow spell of the whole machine and for its share of slower commits take off.

An alert is a slower step whose commit (a span: its last commit) is one of the night's
--newest commits. Figures per directory: alerts per series and night, the nights with any
alert, the nights a machine spell was found, and benchkit's alerts listed.

    .venv/bin/python benchmarks/perf_history_nightly.py DIR [DIR ...] [--first 60]
        [--newest 10] [--spell AGREEMENT SIGMAS ...] -o results/history_nightly.json
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import perf_history_detection as detection  # noqa: E402

from benchkit.core.history.machine import newest_spell  # noqa: E402
from benchkit.core.history.machine.newest_spell import held_by_spells, spell_of  # noqa: E402
from benchkit.core.history.machine.slower_share import held_by_shares  # noqa: E402
from benchkit.core.history.machine.slower_stretches import told_by_stretches  # noqa: E402
from benchkit.core.history.machine.runners import on_one_kind  # noqa: E402
from benchkit.core.history.series import Series, values_of  # noqa: E402
from benchkit.core.history.steps import steps_of  # noqa: E402
from benchkit.orchestration.asv_import import import_asv  # noqa: E402
from benchkit.system.history_db import HistoryDB  # noqa: E402


def histories(directory: Path) -> dict[tuple[str, str], list[Series]]:
    """The wall-time series of each history (machine, environment) of an asv results
    directory, as `benchkit history import-asv` stores them."""
    out: dict[tuple[str, str], list[Series]] = {}
    with tempfile.TemporaryDirectory() as tmp, HistoryDB(Path(tmp) / "h.db") as db:
        import_asv(db, directory)
        for series in db.series(metric="time"):
            if len(series.points) and np.all(values_of(series.points) > 0):
                out.setdefault((series.machine, series.environment), []).append(series)
    return out


def on_night(members: list[Series], order: dict[str, int], night: int) -> list[Series]:
    """The series of a history as they stood after its commit `night` (1-based) in
    `order`: each with the points up to it (series with fewer than 2 left out)."""
    cut = []
    for series in members:
        points = [p for p in series.points if order.get(p.commit.sha, night) < night]
        if len(points) >= 2:
            cut.append(dataclasses.replace(series, points=type(series.points).of(points)))
    return cut


def alerts_of(steps, series: Series, newest: int) -> list[tuple[int, float]]:
    """(index, change) of the slower steps to act on among the series' newest commits."""
    index = {p.commit.sha: i for i, p in enumerate(series.points)}
    return [(index[s.range[1].sha], s.change) for s in steps
            if s.to_act_on and s.change > 0 and index[s.range[1].sha] >= len(index) - newest]


def score(members: list[Series], first: int, newest: int) -> dict:
    longest = max(members, key=lambda s: len(s.points))
    order = {p.commit.sha: i for i, p in enumerate(longest.points)}
    counts = {"asv": 0, "benchkit": 0, "benchkit_without_machine_spell": 0,
              "benchkit_without_machine_share": 0}
    nights_with = dict.fromkeys(counts, 0)
    listed, spell_nights, series_nights, seconds = [], 0, 0, 0.0
    for night in range(first, len(longest.points) + 1):
        cut = on_night(members, order, night)
        began = time.perf_counter()
        adjusted, _ = on_one_kind(cut)
        spanned = told_by_stretches(adjusted, [steps_of(s) for s in adjusted],
                                    lambda i, s: steps_of(s))
        found = held_by_shares(adjusted, spanned, lambda i, s: steps_of(s))
        held = held_by_spells(adjusted, found, lambda i, s: steps_of(s))
        seconds += time.perf_counter() - began
        unshared = held_by_spells(adjusted, spanned, lambda i, s: steps_of(s))
        spell_nights += spell_of(cut) is not None
        series_nights += len(cut)
        tonight = dict.fromkeys(counts, 0)
        for series, before, after, alone in zip(adjusted, found, held, unshared):
            values = values_of(cut[adjusted.index(series)].points)
            asv = [(i, c) for i, c in detection.asv_steps(values)
                   if c > 0 and i >= len(values) - newest]
            tonight["asv"] += len(asv)
            tonight["benchkit_without_machine_spell"] += len(alerts_of(before, series, newest))
            tonight["benchkit_without_machine_share"] += len(alerts_of(alone, series, newest))
            mine = alerts_of(after, series, newest)
            tonight["benchkit"] += len(mine)
            listed += [{"night": night, "benchmark": series.benchmark, "at": i,
                        "change": round(c, 4)} for i, c in mine]
        for name, count in tonight.items():
            counts[name] += count
            nights_with[name] += count > 0
    nights = len(longest.points) - first + 1
    return {"series": len(members), "nights": nights, "series_nights": series_nights,
            "alerts_per_series_night": {k: v / max(series_nights, 1) for k, v in counts.items()},
            "alerts": counts, "nights_with_an_alert": nights_with,
            "nights_with_a_machine_spell": spell_nights, "benchkit_alerts": listed,
            "benchkit_seconds_per_night": seconds / max(nights, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="+", type=Path)
    parser.add_argument("--first", type=int, default=60, help="the first night judged")
    parser.add_argument("--newest", type=int, default=10,
                        help="an alert: a slower step among a night's newest commits")
    parser.add_argument("--spell", nargs=2, type=float, action="append", default=[],
                        metavar=("AGREEMENT", "SIGMAS"),
                        help="also score benchkit with newest_spell's SPELL_AGREEMENT and "
                             "SPELL_SIGMAS at these (its alerts in `sensitivity`); repeatable")
    parser.add_argument("-o", "--output", type=Path)
    args = parser.parse_args()
    if args.first < 2 or args.newest < 1:
        parser.error(f"--first {args.first} --newest {args.newest}: the first night judged "
                     "needs 2 commits or more, and an alert at least the newest commit")
    for agreement, sigmas in args.spell:
        if not (0 < agreement <= 1 and 0 < sigmas < float("inf")):
            parser.error(f"--spell {agreement} {sigmas}: AGREEMENT is a share in (0, 1], "
                         "SIGMAS a positive number of noises")
    out = {"command": " ".join(["benchmarks/perf_history_nightly.py", *sys.argv[1:]]),
           "first": args.first, "newest": args.newest,
           "spell": [newest_spell.SPELL_AGREEMENT, newest_spell.SPELL_SIGMAS],
           "histories": {}, "sensitivity": {}}
    chosen = (newest_spell.SPELL_AGREEMENT, newest_spell.SPELL_SIGMAS)
    for directory in args.dirs:
        for (machine, env), members in sorted(histories(directory).items()):
            if max(len(s.points) for s in members) <= args.first:
                print(f"{directory.name} {machine} {env}: left out, no night after --first "
                      f"{args.first}", flush=True)
                continue
            name = f"{directory.name}/{machine}/{env}"
            for agreement, sigmas in args.spell:
                newest_spell.SPELL_AGREEMENT, newest_spell.SPELL_SIGMAS = agreement, sigmas
                other = score(members, args.first, args.newest)
                out["sensitivity"].setdefault(f"{agreement}/{sigmas}", {})[name] = {
                    "alerts": other["alerts"], "nights_with_a_machine_spell":
                        other["nights_with_a_machine_spell"]}
            newest_spell.SPELL_AGREEMENT, newest_spell.SPELL_SIGMAS = chosen
            figures = score(members, args.first, args.newest)
            out["histories"][name] = figures
            per = figures["alerts_per_series_night"]
            print(f"{directory.name} {machine} {env}: {figures['series']} series, "
                  f"{figures['nights']} nights, machine spell on "
                  f"{figures['nights_with_a_machine_spell']}; alerts per series-night "
                  + ", ".join(f"{k} {v:.4f}" for k, v in per.items()), flush=True)
    if args.output:
        args.output.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
