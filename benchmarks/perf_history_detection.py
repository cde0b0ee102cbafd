"""Step detection on real history series: benchkit beside asv's own `asv.step_detect`.

Each results directory (asv's layout) is imported with `benchkit history import-asv`; every
wall-time series with at least --min-points values becomes a test series. Its real steps are
taken out first (`flatten_together`: ruptures' change points with a strict penalty, found on
a series' medians and first quartiles at once; pieces shorter than --keep-spells kept as
spells or joined to the level after them; each level divided by its median, or in a series
that runs at two speeds interleaved by the median of its commits at the slower:
`slower_speed`), so what is left is the series' own noise, short slow spells included.
Then, per trial, one step of 5, 10, 25 or 50 % (slower) is put in at a random commit at
least --margin commits from either end, and both detectors run on the same values:

- asv: `detect_steps` then `detect_regressions(steps, threshold=0.05)`, as `asv publish`
  reports regressions by default;
- benchkit: `steps_of` on the series, as `benchkit history regressions` reports them; a
  step it cannot place at one commit (reported with a span of commits to bisect) is not a
  step at a commit: one whose span holds the injected commit (within --tolerance) is
  counted apart (`benchkit_unplaced`), neither found nor false; one whose span does not
  is a false step. A step benchkit lists as pending (fewer than its MIN_LEVEL commits after
  it, at the newest end: a slow spell there cannot be told from a step yet) is not a claim:
  counted apart too (`benchkit_pending_per_series`; no step is injected there). benchkit
  is given each commit's first quartile as well (asv's `stats_q_25`, as `history
  import-asv` stores it; its own real steps taken out, as the median's are) and reads it
  where it is the quieter, as `history regressions` does; asv reads its result, the median,
  as `asv publish` does (`--asv-first-quartile`: the first quartile too).

Recall: a slower step reported within --tolerance commits of the injected one. False steps
per series: slower steps reported anywhere else (at a commit, or in a span that does not
hold the injected commit), on the flattened series without any injected step (null
trials) and around the injected ones, counted apart in
`false_steps_where`: on a null series, within NEAR commits of the injected step (that step,
named at the wrong commit) or elsewhere; of those near it, `near_injected_at_best_cut` are
at the commit (within one) where the values themselves put it: the best cut of two levels
within NEAR commits (a spell the flattened series keeps next to the injected commit moves
it there). The real steps each tool finds in the original series are listed too, and
`real_steps_agreement` says of asv's regressions there how many benchkit names at the
commit (within --tolerance), in a span holding it, or misses (listed, also on stdout), and
how many slower steps benchkit names that asv does not report.

    .venv/bin/python benchmarks/perf_history_detection.py DIR [DIR ...] [--trials 400]

`--every-position` puts the step in at every commit of every series instead (each series
weighted alike, each size as --trials: the sampled figures' exact expectation) and counts
the distinct cases with a false step (`false_cases`; results/history_detection_every_
position*.json).

`--window N [N ...]` scores pieces of N commits of each series instead (one starting every
N / 4 commits), for series of lengths the data does not have: the noise histories' 200
commits cut to 40, 61, 100 and 150 in results/history_detection_lengths.json. A piece that
ends inside a slow spell reads as a step at its end (counted in `false_steps_at_ends`:
false steps within --margin commits of either end, where no step is put). `--join DIR ...`
puts the same benchmark's series of several histories end to end: the three noise
histories make 600 commits whose noise changes from quiet to busy
(results/history_detection_joined.json); with `--join-no-steps` the histories are taken
as --no-steps takes each, every history's part divided by its own median and nothing else
taken out (results/history_detection_joined_no_steps_sixth_vm.json). `--seed` takes
several seeds, a run for each and their means (results/history_detection_seeds*.json:
nine seeds). `--runners FACTOR SHARE` makes each history a pool of two kinds of CI
runner: each commit, with probability SHARE, ran FACTOR times slower, every series of
the history alike, after the real steps are taken out (results/history_detection_runners*.
json; benchmarks/perf_history_runner_pool.py does the same to real results files, with and
without the runs naming their CPU).
`--independent SERIES COMMITS NOISE` adds a set of series whose noise is independent from
commit to commit (log-normal, seeded): a quiet machine's, which no history recorded on this
VM has (results/history_detection_independent.json); `--autocorrelated SERIES COMMITS NOISE
PHI` one whose log noise carries PHI of each commit's to the next (AR(1)): a machine whose
speed drifts from night to night. `--e-divisive PYTHON` adds E-divisive
means (`signal-processing-algorithms`, as Otava and MongoDB's CI use it) as a third column,
run by benchmarks/e_divisive_worker.py in PYTHON, an interpreter that has the package (it
pins numpy below 2), at each p of `--e-divisive-p` (results/history_detection_e_divisive*).

DIRs used for results/history_detection.json: asv's own example results (real astropy
benchmark runs on one laptop, asv format 1; `pip download --no-deps --no-binary :all:
asv==0.6.6`, then test/example_results in the archive), numpy's own asv suite run against
each numpy release since 1.24 on this VM (benchmarks/record_release_history.py, as `make
bench-history` runs it) and a noise history recorded on this VM with
benchmarks/record_noise_history.py (200 fresh processes, code unchanged).
results/history_detection_scipy.json: scipy's suite run against its 21 releases since
1.10.0 on this VM (record_release_history.py, --min-points 20), recorded after the method
was chosen, as a check on data it was not tuned on. The current figures:
results/history_detection_far_tail.json (astropy, numpy's releases and three noise
histories of this VM, as `make bench-history` runs it), and scipy's and xarray's releases
recorded again (results/history_detection_{scipy,xarray}_rerecorded.json, held out).
"""
from __future__ import annotations

import argparse
import json
import math
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

import numpy as np

from benchkit.core.history.series import Commit, Point, Points, Series, values_of
from benchkit.core.history.steps import steps_of
from benchkit.orchestration.asv_import import import_asv
from benchkit.system.history_db import HistoryDB

SIZES = (0.05, 0.10, 0.25, 0.50)
SPEEDS_APART = 0.3     # log: two speeds this far apart are not one level's noise
TWO_SPEEDS_FROM = 60   # ... looked for in series longer than this (slower_speed)
NEAR = 8          # false steps this close to an injected one are that step, misplaced
SHAS: dict[str, list[str]] = {}     # each loaded series' commits (a piece's: its slice)
# each series of load_series' last call: its commits' first quartiles over their values
# (asv's stats_q_25 over its result, the median). benchkit reads a commit's first quartile
# where that is quieter (time_steps), asv its median; a step scales both alike, so the
# ratio goes with a series through injected steps, runners and pieces unchanged (score
# takes a real history's steps out of its first quartiles and its medians at the same commits)
LAST_QUARTILES: dict[str, np.ndarray] = {}


# what load_series left out of each set it read: (wall-time series, shorter than
# --min-points, the longest series' length)
LEFT_OUT: dict[str, tuple[int, int, int]] = {}


def load_series(dirs: list[Path], min_points: int) -> list[tuple[str, np.ndarray]]:
    """(label, values) of every wall-time series with enough points."""
    out: list[tuple[str, np.ndarray]] = []
    counted, short, longest = 0, 0, 0
    LAST_QUARTILES.clear()
    with tempfile.TemporaryDirectory() as tmp:
        with HistoryDB(Path(tmp) / "h.db") as db:
            for d in dirs:
                import_asv(db, d)
            for s in db.series(metric="time"):
                values = np.array([p.value for p in s.points], dtype=float)
                if not np.all(values > 0):
                    continue
                counted, longest = counted + 1, max(longest, len(values))
                if len(values) >= min_points:
                    out.append((f"{s.machine}/{s.environment}/{s.benchmark}", values))
                    SHAS[out[-1][0]] = [p.commit.sha for p in s.points]
                    lows = np.array([p.low or 0.0 for p in s.points], dtype=float)
                    if np.all(lows > 0):
                        LAST_QUARTILES[out[-1][0]] = lows / values
                else:
                    short += 1
    LEFT_OUT["+".join(map(str, dirs))] = (counted, short, longest)
    return out


def left_out_line(directory: str, min_points: int) -> str | None:
    """One line on the series of `directory` too short to score, if there were any."""
    counted, short, longest = LEFT_OUT.get(directory, (0, 0, 0))
    if not short:
        return None
    return (f"{directory}: {short} of {counted} wall-time series have fewer than "
            f"--min-points {min_points} values and are left out (the longest has {longest}; "
            "a smaller --min-points scores shorter series: docs/performance.md scores "
            "scipy's 23 releases with 20)")


def windows(series: list[tuple[str, np.ndarray]], size: int | None
            ) -> list[tuple[str, np.ndarray]]:
    """Each series cut into pieces of `size` commits, one starting every quarter of `size`
    (where a piece begins and ends matters: a slow spell cut at its end reads as a step),
    to score series of that length; the whole series when `size` is None."""
    if size is None:
        return series
    pieces = [(label, f"{label}@{start}", start) for label, values in series
              for start in range(0, len(values) - size + 1, max(1, size // 4))]
    SHAS.update({piece: SHAS[label][start:start + size] for label, piece, start in pieces
                 if label in SHAS})
    values_of = dict(series)
    return [(piece, values_of[label][start:start + size]) for label, piece, start in pieces]


def autocorrelated(count: int, commits: int, sigma: float, phi: float
                   ) -> list[tuple[str, np.ndarray]]:
    """`count` series of `commits` values whose log noise is AR(1): each commit `phi` times
    the one before plus a fresh normal of `sigma` (seeded by the four)."""
    from scipy.signal import lfilter
    rng = np.random.default_rng([count, commits, round(sigma * 1e6), round(phi * 1e6)])
    return [(f"autocorrelated/{k}", np.exp(lfilter([1.0], [1.0, -phi],
                                                   rng.normal(0, sigma, commits))))
            for k in range(count)]


def joined(histories: list[list[tuple[str, np.ndarray]]]) -> list[tuple[str, np.ndarray]]:
    """Each series that every history holds, its histories' values end to end."""
    found = [dict(history) for history in histories]
    return [(label, np.concatenate([h[label] for h in found])) for label, _ in histories[0]
            if all(label in h for h in found)]


def by_own_median(series: list[tuple[str, np.ndarray]]) -> list[tuple[str, np.ndarray]]:
    """Each series divided by its own median (--join-no-steps: a history's part of a joined
    series, nothing else taken out)."""
    return [(label, v / float(np.median(v))) for label, v in series]


def joined_quartiles(quartiles: list[dict[str, np.ndarray]], labels: list[str]
                     ) -> dict[str, np.ndarray]:
    """The first quartiles (LAST_QUARTILES of each history) of the joined series `labels`:
    end to end where every history has them."""
    return {label: np.concatenate([q[label] for q in quartiles]) for label in labels
            if all(label in q for q in quartiles)}


def quartiles_of(quartiles: dict[str, np.ndarray], label: str, length: int
                 ) -> np.ndarray | None:
    """The first quartiles over the values of series `label` (a piece `label@start`: its
    slice, unless the piece has its own), or None where its history has none."""
    if label in quartiles:
        return quartiles[label]
    whole, _, start = label.rpartition("@") if "@" in label else (label, "", "0")
    ratios = quartiles.get(whole)
    if ratios is None:
        return None
    return ratios[int(start):int(start) + length]


def asv_steps(values: np.ndarray) -> list[tuple[int, float]]:
    """(index of the first commit after the step, relative change) of each regression
    asv reports."""
    from asv.step_detect import detect_regressions, detect_steps
    steps = detect_steps(list(values))
    _, _, regressions = detect_regressions(steps, threshold=0.05)
    return [(after, best / before - 1) for before_i, after, before, best in regressions or []]


def asv_report(values: np.ndarray) -> tuple[list[tuple[int, float]], list]:
    """asv's regressions, each at a commit (asv gives no spans)."""
    return asv_steps(values), []


def change_point_steps(values: np.ndarray, points: list[int]) -> list[tuple[int, float]]:
    """Change points (each the index of the first value after a change) as steps: (index,
    relative change between the medians of the pieces on either side, each up to the
    neighbouring change point or the series' end)."""
    edges = [0, *sorted(points), len(values)]
    return [(at, float(np.median(values[at:after]) / np.median(values[before:at]) - 1))
            for before, at, after in zip(edges, edges[1:], edges[2:])]


class EDivisive:
    """E-divisive means (`signal-processing-algorithms`, as Otava and MongoDB's CI use it)
    run by benchmarks/e_divisive_worker.py in the interpreter `python`, which has that
    package (it pins numpy below 2), its permutation test at `pvalue`: one process for a
    whole run, a series a line. Its slower change points are its regressions; it gives no
    spans."""

    def __init__(self, python: str, pvalue: float):
        self.process = subprocess.Popen(
            [python, str(Path(__file__).with_name("e_divisive_worker.py")), repr(pvalue)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def change_points(self, values: np.ndarray) -> list[int]:
        self.process.stdin.write(json.dumps([float(x) for x in np.log(values)]) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            sys.exit(f"--e-divisive: {self.process.args[0]} stopped (exit code "
                     f"{self.process.wait()}): is signal-processing-algorithms installed "
                     "for it? (benchmarks/e_divisive_worker.py says how)")
        return json.loads(line)

    def __call__(self, values: np.ndarray) -> tuple[list[tuple[int, float]], list]:
        return change_point_steps(values, self.change_points(values)), []


def _history_of(label: str) -> tuple[str, str, str]:
    """(machine, environment, piece) of a series label (`machine/env/benchmark[@start]`)."""
    machine, env, rest = (label.split("/", 2) + ["", ""])[:3]
    return machine, env, rest.rsplit("@", 1)[1] if "@" in rest else ""


# (id of a group, machine, environment, piece) -> (the group, its members' names and
# series): a history's other series are the same in every trial; built once, not per trial
_HISTORIES: dict[tuple, tuple[list, list[str], list[Series]]] = {}


def _time_series(name: str, machine: str, env: str, values: np.ndarray) -> Series:
    shas = SHAS.get(name)      # a joined series' commits are its histories': positions then
    keys = shas if shas is not None and len(shas) == len(values) else range(len(values))
    column = [float(x) for x in values]
    return Series(name, "time", machine, Points(
        [Commit(str(key), "", i) for i, key in enumerate(keys)], column, column, column,
        [1] * len(column), [1] * len(column)), env)


def _history(group: list[tuple[str, np.ndarray]], label: str) -> tuple[tuple, list[str],
                                                                       list[Series]]:
    """The key, members' names and series of the history of series `label` in `group`."""
    machine, env, piece = _history_of(label)
    key = (id(group), machine, env, piece)
    if key not in _HISTORIES:       # the group is held there too: its id is not reused
        members = [(name, v) for name, v in group if _history_of(name) == (machine, env, piece)]
        _HISTORIES[key] = (group, [name for name, _ in members],
                           [_time_series(name, machine, env, v) for name, v in members])
    return key, _HISTORIES[key][1], _HISTORIES[key][2]


def one_kind_history(group: list[tuple[str, np.ndarray]], label: str, values: np.ndarray
                     ) -> tuple[list[Series], int, bool]:
    """The history of series `label` in `group`, with `values` as that series' values, as
    `benchkit history regressions` reads it (runners.on_one_kind: where the runs fall into
    two kinds of runner that they do not name, each series' values on the slower kind taken
    down by its own gap): its series, the place of `label`'s among them, and whether any
    other series was changed. Commits are the series' own (SHAS), else positions."""
    from benchkit.core.history.machine.runners import on_one_kind
    machine, env, _ = _history_of(label)
    _, names, series = _history(group, label)
    at = names.index(label)
    mine = _time_series(label, machine, env, values)
    found, notes = on_one_kind([*series[:at], mine, *series[at + 1:]])
    return found, at, any(key != mine.key for key in notes)


def on_one_kind_values(group: list[tuple[str, np.ndarray]], label: str, values: np.ndarray
                       ) -> np.ndarray:
    """`values` of series `label` as `benchkit history regressions` reads them beside the
    other series of its history in `group` (`one_kind_history`)."""
    found, at, _ = one_kind_history(group, label, values)
    return np.array(values_of(found[at].points), dtype=float)


def _keys(name: str, length: int) -> list:
    """A series' commits for the newest spell: its own (SHAS), else its places counted from
    the newest (series of one history end at the same commit)."""
    shas = SHAS.get(name)
    return shas if shas is not None and len(shas) == length else list(range(-length, 0))


# --no-machine-spell: benchkit without machine.newest_spell's rule (False here)
MACHINE_SPELL = [True]
# --no-machine-stretches: ... without machine.slower_stretches' (False here)
MACHINE_STRETCHES = [True]
# --no-machine-stretch-spells: ... without machine.slower_stretches' held_by_stretch_spells
MACHINE_STRETCH_SPELLS = [True]
# --no-machine-share: ... without machine.slower_share's (False here)
MACHINE_SHARE = [True]
# (history key) -> machine.newest_spell.spell_window of the history's series and spell_in of it
_WINDOWS: dict[tuple, tuple] = {}


def spell_values(group: list[tuple[str, np.ndarray]], label: str, values: np.ndarray,
                 history: list[Series] | None = None) -> tuple[frozenset, float] | None:
    """The newest spell of the history of `label` in `group` (machine.newest_spell.newest_spell,
    with `values` as that series' values, as `benchkit history regressions` finds it), as
    the places of `values` it holds and this series' gap; None without one. `history`: the
    history's series where others than `label`'s are not as in `group` (on one kind of
    runner: `one_kind_history`), read afresh."""
    from benchkit.core.history.machine.newest_spell import spell_in, spell_window
    key, names, members = _history(group, label)

    def spell_of(series: list[Series]) -> tuple:
        window = spell_window([(_keys(n, len(s.points)), values_of(s.points))
                               for n, s in zip(names, series)])
        return window, None if window is None else spell_in(window[1])
    if history is None and key not in _WINDOWS:
        _WINDOWS[key] = spell_of(members)
    window, spell = _WINDOWS[key] if history is None else spell_of(history)
    at = names.index(label)
    if window is None or at not in window[2]:
        return None
    row, logs = window[2].index(at), window[1]
    width = logs.shape[1]
    if not np.all(values[-width:] > 0):
        return None
    mine = np.log(values[-width:])
    # a step before the window scales its values alike: the spell is the history's own
    if np.ptp(mine - logs[row]) > 1e-12:
        changed = logs.copy()
        changed[row] = mine
        spell = spell_in(changed)
    if spell is None:
        return None
    first, gaps, _ = spell
    return frozenset(range(len(values) - width + first, len(values))), float(gaps[row])


def machine_values(history: list[Series], at: int
                   ) -> tuple[Callable[[], dict[int, tuple[int, int]]],
                              Callable[[], frozenset[int]]]:
    """What the machine's rules read of a history (its series on one kind of runner, as
    `one_kind_history` gives them), as `benchkit history regressions` finds it: its
    stretches that most series ran slower at once (machine.slower_stretches.stretches_of:
    each place -> (place just after the stretch, length)) and the places they ran slower
    at (machine.slower_share.slower_commits_of); both from one `clearly_slower_at_once`,
    found when first asked for (most series have no step to look them up for). Places
    are those of series `at`'s commits."""
    found_once: list[tuple[dict, frozenset]] = []

    def found() -> tuple[dict[int, tuple[int, int]], frozenset[int]]:
        if not found_once:
            from benchkit.core.history.machine.runners import (clearly_slower_at_once,
                                                               commits_and_values)
            from benchkit.core.history.machine.slower_share import slower_commits_of
            from benchkit.core.history.machine.slower_stretches import stretches_of
            at_once = clearly_slower_at_once(commits_and_values(history))
            place = {p.commit.sha: i for i, p in enumerate(history[at].points)}
            found_once.append((
                {place[first]: (place[end], length)
                 for first, (end, length) in stretches_of(at_once).items()
                 if first in place and end in place},
                frozenset(place[sha] for sha in slower_commits_of(at_once) if sha in place)))
        return found_once[0]
    return (lambda: found()[0]), (lambda: found()[1])


def benchkit_report(values: np.ndarray, quartiles: np.ndarray | None = None,
                    spell: tuple[frozenset, float] | None = None,
                    stretches: Callable[[], dict[int, tuple[int, int]]] | None = None,
                    slower: Callable[[], frozenset[int]] | None = None
                    ) -> tuple[list[tuple[int, float]], list[tuple[int, int, float]]]:
    """The steps benchkit places, as (index, relative change), and those it reports
    without a place, as (first, last index the step may be at, relative change); each
    commit's first quartile is its value times `quartiles` (None: the value); `spell`: the
    places of its history's newest spell and this series' gap there (`spell_values`);
    `stretches`: its history's slower stretches, `slower`: the places its history ran
    slower (both `machine_values`)."""
    lows = values if quartiles is None else values * quartiles
    points = tuple(Point(Commit(f"{i:040x}", "", i), float(v), float(low), float(v), 1, 1)
                   for i, (v, low) in enumerate(zip(values, lows)))
    series = Series("b", "time", "m", points)
    index = {p.commit.sha: i for i, p in enumerate(points)}
    found = steps_of(series)
    if stretches is not None and any(s.placed and not s.transient and s.change > 0
                                     for s in found):
        from benchkit.core.history.machine.slower_stretches import spanned_by_stretches
        found = spanned_by_stretches(series, found, {
            f"{first:040x}": (f"{end:040x}", length)
            for first, (end, length) in stretches().items()}, steps_of)
    if stretches is not None and MACHINE_STRETCH_SPELLS[0] and any(
            s.change > 0 and not s.transient and not s.pending for s in found):
        from benchkit.core.history.machine.slower_stretches import held_by_stretch_spells
        found = held_by_stretch_spells(series, found, {
            f"{first:040x}": (f"{end:040x}", length)
            for first, (end, length) in stretches().items()}, steps_of)
    if slower is not None and any(s.change > 0 and not s.transient and not s.pending
                                  for s in found):
        from benchkit.core.history.machine.slower_share import held_by_slower_share
        found = held_by_slower_share(series, found,
                                     frozenset(f"{i:040x}" for i in slower()), steps_of)
    if spell is not None:
        from benchkit.core.history.machine.newest_spell import NewestSpell, held_by_the_machine
        places, gap = spell
        found = held_by_the_machine(series, found, NewestSpell(
            frozenset(f"{i:040x}" for i in places), len(places), 0, 0, ()), gap, steps_of)
    # pending (the newest few commits, not yet a level): listed, not claimed; kept apart
    LAST_PENDING[:] = [(index[s.commit.sha], s.change) for s in found
                       if s.pending and not s.transient]
    steps = [s for s in found if s.to_act_on]
    return ([(index[s.commit.sha], s.change) for s in steps if s.placed],
            [(index[s.span[0].sha] + 1, index[s.span[1].sha], s.change)
             for s in steps if not s.placed])


# benchkit's pending steps of its last call, (index, change): not claims, counted apart
LAST_PENDING: list[tuple[int, float]] = []
# each: the steps at a commit, (index, change), and those given a span, (first, last, change)
DETECTORS = {"asv": asv_report, "benchkit": benchkit_report}
# --asv-first-quartile: asv reads each commit's first quartile too, not its result (the
# median): how much of benchkit's lead is the figure it reads, how much the method
ASV_AT_FIRST_QUARTILE = [False]


def read_by(name: str, values: np.ndarray, quartiles: np.ndarray | None) -> np.ndarray:
    """The values a detector other than benchkit judges: asv's result (the median), or
    with --asv-first-quartile each commit's first quartile where the series has them."""
    if name == "asv" and ASV_AT_FIRST_QUARTILE[0] and quartiles is not None:
        return values * quartiles
    return values


def read_for(name: str, group: list[tuple[str, np.ndarray]], label: str, values: np.ndarray,
             quartiles: np.ndarray | None) -> tuple:
    """The arguments detector `name` judges series `label` (of `group`) with: benchkit its
    values at one kind of runner and the first quartiles, any other what `read_by` gives."""
    if name == "benchkit":
        # the machine's rules read the history on one kind of runner, as the steps are found
        history, at, others = one_kind_history(group, label, values)
        mine = np.array(values_of(history[at].points), dtype=float)
        stretches, slower = machine_values(history, at)
        return (mine, quartiles,
                spell_values(group, label, mine, history if others else None)
                if MACHINE_SPELL[0] else None,
                stretches if MACHINE_STRETCHES[0] else None,
                slower if MACHINE_SHARE[0] else None)
    return (read_by(name, values, quartiles),)


def flatten(values: np.ndarray, keep_spells: int) -> np.ndarray:
    """The series with its real level changes taken out (module docstring)."""
    return flatten_together([values], keep_spells)[0]


def flatten_together(figures: list[np.ndarray], keep_spells: int) -> list[np.ndarray]:
    """Figures of the same commits (a series' medians and first quartiles) with their real
    level changes taken out at the same commits: pieces found on all of them at once, each
    piece of each figure divided by its median (where the series runs at two speeds,
    interleaved, the median of the piece's commits at the slower: `slower_speed`). The
    pieces come from neither detector under test: ruptures' least-squares change points on
    the log values (each figure in units of its own noise) with a strict penalty (5 log n a
    figure). A short piece (under `keep_spells` commits, not at the newest end) within 2.5x
    of the level before is a spell, kept; one left before a level begins it."""
    import ruptures
    logs = np.column_stack([np.log(figure) for figure in figures])
    sigma = [max(float(np.median(np.abs(np.diff(column)))) / (0.6745 * math.sqrt(2)), 1e-3)
             for column in logs.T]
    # a change of level in d figures is d parameters: the penalty is d times one figure's
    # (a figure given twice, as astropy's first quartiles that are its values, splits as once)
    ends = ruptures.KernelCPD(kernel="linear", min_size=1).fit(logs / sigma).predict(
        pen=5 * logs.shape[1] * math.log(len(logs)))
    pieces = [[a, b] for a, b in zip([0, *ends[:-1]], ends)]

    def short(piece):     # a piece at the end is a level of its own (too new to tell)
        return piece[1] - piece[0] < keep_spells and piece[1] < len(logs)

    def apart(one, other):    # the farthest two pieces' medians are, in any figure (log)
        return float(np.max(np.abs(np.median(logs[one[0]:one[1]], axis=0)
                                    - np.median(logs[other[0]:other[1]], axis=0))))

    merged: list[list[int]] = []
    i = 0
    while i < len(pieces):
        j = i + 1
        while short(pieces[i]) and j < len(pieces) and short(pieces[j]):
            j += 1
        run = pieces[i:j]
        # a run of short pieces that is short as a whole and within 2.5x of the level before
        # it is a spell, kept as noise; a run as long as a level (e.g. two short pieces of
        # 5 and 4 commits: a 9-commit plateau) or 100x away (a benchmark rewritten) is not
        if (merged and short(run[0]) and run[-1][1] - run[0][0] < keep_spells
                and all(apart(p, merged[-1]) < math.log(2.5) for p in run)):
            merged[-1][1] = run[-1][1]
        elif (merged and not short(run[0]) and merged[-1][0] > 0 and short(merged[-1])
              and apart(run[0], merged[-1]) < math.log(2.5)):
            merged[-1][1] = run[0][1]     # a level that began with a short piece
        else:
            merged.extend([list(p) for p in run])
        i = j
    slower = slower_speed(logs[:, 0])
    flattened = []
    for figure in figures:
        out = figure.copy()
        for left, right in merged:
            level = figure[left:right]
            if slower is not None and 3 <= np.count_nonzero(slower[left:right]) < right - left:
                level = level[slower[left:right]]
            out[left:right] = figure[left:right] / np.median(level)
        flattened.append(out * float(np.median(figure)))
    return flattened


def slower_speed(logs: np.ndarray) -> np.ndarray | None:
    """Where a series runs at two speeds far apart, interleaved (a shared machine's runs),
    which commits ran at the slower: a piece is then divided by the median of those (its
    median falls at either speed by the share of each, and a step would be put in where the
    share changes); None otherwise. The two speeds are two medians, each of the values on
    its side of their midpoint (k-medians, k = 2); they are two speeds where they stand
    SPEEDS_APART or more apart, the faster holds 5-50 % of the commits, at most a tenth lie
    within a quarter of the gap of the midpoint, and half the faster commits have a slower
    one within 5 commits on either side. Of the sets scored, this VM's noise histories'
    Python snippets are such series (5 of 8 in each); astropy's results are not. Series of
    at most TWO_SPEEDS_FROM commits (every release set) are flattened by the medians as
    before: two of scipy's 23 releases would read as two speeds, and the sets of releases
    were not on the machine where this was measured, so their figures stand as recorded."""
    if len(logs) <= TWO_SPEEDS_FROM:
        return None
    low, high = np.quantile(logs, [0.1, 0.9])
    if not high > low:
        return None
    for _ in range(50):
        split = (low + high) / 2
        new_low, new_high = np.median(logs[logs < split]), np.median(logs[logs >= split])
        if (new_low, new_high) == (low, high):
            break
        low, high = new_low, new_high
    gap = high - low
    faster = logs < (low + high) / 2
    between = np.abs(logs - (low + high) / 2) < gap / 4
    if (gap < SPEEDS_APART or not 0.05 <= faster.mean() <= 0.5
            or between.mean() > 0.1 or interleaved(faster) < 0.5):
        return None
    return ~faster


def interleaved(faster: np.ndarray) -> float:
    """The share of a series' faster commits that have a slower commit within 5 on either
    side (a speed of the machine, scattered, not a level the code held for a while)."""
    at = np.flatnonzero(faster)
    slow = np.flatnonzero(~faster)
    if not len(at) or not len(slow):
        return 0.0
    left = np.searchsorted(slow, at)
    before = np.where(left > 0, at - slow[np.maximum(left - 1, 0)], 10**9)
    after = np.where(left < len(slow), slow[np.minimum(left, len(slow) - 1)] - at, 10**9)
    return float(np.mean((before <= 5) & (after <= 5)))


def recall_interval(hits: int, trials: int) -> list[float]:
    """Wilson's 95 % interval of a recall of hits / trials."""
    if trials == 0:
        return [math.nan, math.nan]
    z, share = 1.96, hits / trials
    middle = (share + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z * math.sqrt(share * (1 - share) / trials + z * z / (4 * trials * trials)) / (
        1 + z * z / trials)
    return [max(0.0, middle - half), min(1.0, middle + half)]


def rate_interval(count: int, runs: int) -> list[float]:
    """Garwood's exact 95 % interval of a Poisson rate of count events in runs series."""
    from scipy.stats import chi2
    low = chi2.ppf(0.025, 2 * count) / 2 if count else 0.0
    high = chi2.ppf(0.975, 2 * count + 2) / 2
    return [low / runs, high / runs]


def on_runners(series: list[tuple[str, np.ndarray]], factor: float, share: float, seed: int
               ) -> list[tuple[str, np.ndarray]]:
    """The series as a pool of shared runners of two kinds would have measured them: each
    commit ran on the slower kind with probability `share`, every value of that commit
    (all the history's series alike) `factor` times slower."""
    if not series:
        return series
    slower = np.random.default_rng([seed, 7]).random(max(len(v) for _, v in series)) < share
    return [(label, v * np.where(slower[:len(v)], factor, 1.0)) for label, v in series]


def best_cut(values: np.ndarray, at: int) -> int:
    """Where the values themselves put a step injected at `at`: the cut within NEAR commits
    of it that splits the log values into two levels with the least absolute deviation from
    each side's median (a short spell of the flattened series next to `at` moves it)."""
    logs = np.log(values)
    cuts = range(max(1, at - NEAR), min(len(logs) - 1, at + NEAR) + 1)
    return min(cuts, key=lambda c: float(np.abs(logs[:c] - np.median(logs[:c])).sum()
                                          + np.abs(logs[c:] - np.median(logs[c:])).sum()))


def injected_cases(usable, trials: int, margin: int, rng, every_position: bool):
    """(size, label, values, commit, weight) of each injected step. Sampled: `trials` per
    size, each a series drawn at random, then a commit in it, weight 1. Every position: each
    series at each commit at least `margin` from either end, weighted so that each series
    counts alike and each size's weights add up to `trials`: the exact expectation of the
    sampled figures, without their sampling error."""
    if not every_position:
        for size in SIZES:
            for _ in range(trials):
                label, v = usable[rng.integers(len(usable))]
                yield size, label, v, int(rng.integers(margin, len(v) - margin + 1)), 1.0
        return
    for size in SIZES:
        for label, v in usable:
            positions = range(margin, len(v) - margin + 1)
            for at in positions:
                yield size, label, v, at, trials / (len(usable) * len(positions))


def score(series, flat_series, trials: int, margin: int, tolerance: int, keep_spells: int,
          seed: int, runners: tuple[float, float] | None = None, every_position: bool = False,
          quartiles: dict[str, np.ndarray] | None = None):
    rng = np.random.default_rng(seed)
    # the real steps of what each tool reads are taken out: of the first quartiles too, at
    # the same commits as the medians' (both figures of a commit come from the same runs)
    quartiles = dict(quartiles or {})
    flat = []
    for label, values in series:
        ratios = quartiles_of(quartiles, label, len(values))
        medians, *lows = flatten_together(
            [values] if ratios is None else [values, values * ratios], keep_spells)
        flat.append((label, medians))
        if lows:
            quartiles[label] = lows[0] / medians
    flat += flat_series
    if runners is not None:
        flat = on_runners(flat, *runners, seed)
    usable = [(label, v) for label, v in flat if len(v) >= 2 * margin + 1]
    found = {name: {size: 0 for size in SIZES} for name in DETECTORS}
    false = {name: 0 for name in DETECTORS}
    # where the false steps are: on a series with no injected step, within NEAR commits of
    # the injected one (a step found at the wrong commit), or elsewhere
    # (near_injected_at_best_cut: of those near it, the ones at the commit where the values
    # themselves put the step: the best cut of two levels within NEAR of the injected one)
    where = {name: {"null": 0, "near_injected": 0, "near_injected_at_best_cut": 0,
                    "elsewhere": 0} for name in DETECTORS}
    # false steps within `margin` commits of either end, where no step is ever put: a slow
    # spell that the series' end cuts reads as a step there
    at_ends = {name: 0 for name in DETECTORS}
    runs = {name: 0.0 for name in DETECTORS}      # weighted
    seconds = {name: 0.0 for name in DETECTORS}
    timed = 0
    cases = [(None, label, v, None, 1.0) for label, v in usable]
    cases += injected_cases(usable, trials, margin, rng, every_position)
    total = sum(weight for *_, weight in cases)
    # steps reported with a span, not a commit (benchkit's): how many, and how many of those
    # hold the injected commit in their span
    unplaced = {"per_series": 0.0, "holding_the_injected_commit": 0.0}
    pending = 0.0           # benchkit's slower pending steps (the newest few commits)
    # distinct (series, size, commit) cases with a false step: sampling draws the same
    # few again and again on a short series
    false_cases: dict[str, set] = {name: set() for name in DETECTORS}
    for size, label, v, at, weight in cases:
        timed += 1
        values = v.copy()
        if at is not None:
            values[at:] *= 1 + size
        cut = None if at is None else best_cut(values, at)
        ratios = quartiles_of(quartiles, label, len(values))
        for name, detect in DETECTORS.items():
            # what each tool reads (benchkit looks for kinds of runner once per history, not
            # per series): not timed
            arguments = read_for(name, usable, label, values, ratios)
            began = time.perf_counter()
            placed, spans = detect(*arguments)
            seconds[name] += time.perf_counter() - began
            if name == "benchkit":
                pending += weight * sum(1 for _, c in LAST_PENDING if c > 0)
            spans = [(a, b) for a, b, c in spans if c > 0]
            # a span holds the injected commit with the tolerance a commit has
            holding = [at is not None and a - tolerance <= at <= b + tolerance
                       for a, b in spans]
            unplaced["per_series"] += weight * len(spans)
            unplaced["holding_the_injected_commit"] += weight * sum(holding)
            reported = [(i, c) for i, c in placed if c > 0]
            runs[name] += weight
            hit = at is not None and any(abs(i - at) <= tolerance for i, _ in reported)
            if hit:
                found[name][size] += weight
            # how far from the injected commit each false claim is: a step at a commit, or a
            # span that does not hold it (a step said to lie where none was put)
            misses = [abs(i - at) if at is not None else None for i, _ in reported
                      if at is None or abs(i - at) > tolerance]
            misses += [None if at is None else min(abs(a - at), abs(b - at))
                       for (a, b), held in zip(spans, holding) if not held]
            end = len(values) - margin
            at_ends[name] += weight * sum(
                1 for i, _ in reported if (at is None or abs(i - at) > tolerance)
                and not margin <= i <= end)
            at_ends[name] += weight * sum(1 for (a, b), held in zip(spans, holding)
                                          if not held and (a < margin or b > end))
            for miss in misses:
                where[name]["null" if miss is None else
                            "near_injected" if miss <= NEAR else "elsewhere"] += weight
            where[name]["near_injected_at_best_cut"] += weight * sum(
                1 for i, _ in reported if cut is not None and tolerance < abs(i - at) <= NEAR
                and abs(i - cut) <= 1)
            false[name] += weight * len(misses)
            if misses:
                false_cases[name].add((label, size, at))
    return {
        "series": len(usable), "trials_per_size": trials, "null_series": len(usable),
        "recall": {name: {f"{size:.0%}": found[name][size] / trials for size in SIZES}
                   for name in DETECTORS},
        "false_steps_per_series": {name: false[name] / runs[name] for name in DETECTORS},
        # 95 % intervals: the estimates above rest on a few hundred trials (none where
        # every position was scored: no sampling error is left)
        "recall_95": None if every_position else {
            name: {f"{size:.0%}": recall_interval(found[name][size], trials)
                   for size in SIZES} for name in DETECTORS},
        "false_steps_per_series_95": None if every_position else {
            name: rate_interval(false[name], runs[name]) for name in DETECTORS},
        "false_cases": {name: len(false_cases[name]) for name in DETECTORS},
        "runs": timed,          # series scored per tool (null and injected)
        "every_position": every_position,
        "seconds_per_series": {name: seconds[name] / timed for name in DETECTORS},
        "false_steps_where": where,
        "false_steps_at_ends": at_ends,
        "benchkit_unplaced": {"per_series": unplaced["per_series"] / total,
                              "holding_the_injected_commit":
                                  unplaced["holding_the_injected_commit"] / total},
        # slower steps benchkit lists as pending (fewer than MIN_LEVEL commits after them
        # at the newest end, where no step is injected, or held by the machine's rules:
        # machine.slower_stretches, slower_share, newest_spell): not counted above
        "benchkit_pending_per_series": pending / total,
    }


def over_seeds(data: list[dict]) -> dict:
    """Per directory (and piece length): each tool's recall and false steps per series, the
    means over the seeds' runs (each seed the same number of runs)."""
    def key(d: dict) -> str:
        return d["directory"] + (f" @{d['window']}" if "window" in d else "")
    out: dict = {}
    for name_of_set in dict.fromkeys(map(key, data)):
        runs = [d for d in data if key(d) == name_of_set]
        out[name_of_set] = {name: {
            "recall": {size: float(np.mean([d["recall"][name][size] for d in runs]))
                       for size in runs[0]["recall"][name]},
            "false_steps_per_series": float(np.mean(
                [d["false_steps_per_series"][name] for d in runs])),
            "seeds": [d["seed"] for d in runs]} for name in DETECTORS}
    return out


def real_steps(series, quartiles: dict[str, np.ndarray] | None = None) -> list[dict]:
    """The steps each tool reports in the original series (both directions for benchkit,
    regressions for asv, as each reports them)."""
    out = []
    for label, values in series:
        ratios = quartiles_of(quartiles or {}, label, len(values))
        for name, detect in DETECTORS.items():
            placed, spans = detect(*read_for(name, series, label, values, ratios))
            out += [{"series": label, "tool": name, "index": int(i),
                     "change": round(float(change), 4), "points": len(values)}
                    for i, change in placed]
            # not placed: the span of indexes it may be at
            out += [{"series": label, "tool": name, "index": None, "span": [first, last],
                     "change": round(float(change), 4), "points": len(values)}
                    for first, last, change in spans]
    return out


def agreement(steps: list[dict], tolerance: int) -> dict:
    """asv's regressions in the original series beside benchkit's steps there: each one
    benchkit also names, slower, within `tolerance` commits (`at_the_commit`) or in a span
    holding it (`in_a_span`), or not at all (`missed`, listed); and how many slower steps
    benchkit names that asv does not report (`benchkit_only`)."""
    def mine(series):
        return [s for s in steps if s["tool"] == "benchkit" and s["series"] == series
                and s["change"] > 0]

    def near(step, index):
        if step["index"] is not None:
            return abs(step["index"] - index) <= tolerance
        first, last = step["span"]
        return first - tolerance <= index <= last + tolerance

    theirs = [s for s in steps if s["tool"] == "asv" and s["change"] > 0]
    out: dict = {"asv_regressions": len(theirs), "at_the_commit": 0, "in_a_span": 0,
                 "missed": []}
    for step in theirs:
        matched = [m for m in mine(step["series"]) if near(m, step["index"])]
        if any(m["index"] is not None for m in matched):
            out["at_the_commit"] += 1
        elif matched:
            out["in_a_span"] += 1
        else:
            out["missed"].append(step)
    out["benchkit_only"] = sum(
        1 for s in steps if s["tool"] == "benchkit" and s["change"] > 0 and not any(
            a["series"] == s["series"] and near(s, a["index"]) for a in theirs))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="*", type=Path,
                        help="real histories: their real steps are taken out first")
    parser.add_argument("--no-steps", nargs="*", type=Path, default=[], metavar="DIR",
                        help="histories known to hold no step (the code never changed, as "
                             "record_noise_history.py writes): used as they are")
    parser.add_argument("--join", nargs="+", type=Path, action="append", default=[],
                        metavar="DIR",
                        help="histories of the same benchmarks, each series joined end to "
                             "end in the order given (a long series whose noise changes; "
                             "the level shifts at the joins are taken out as real steps); "
                             "again for another set (e.g. another order)")
    parser.add_argument("--join-no-steps", action="store_true",
                        help="--join's histories hold no step (as --no-steps): each "
                             "history's part of a joined series is divided by its own "
                             "median and nothing else is taken out (ruptures' pieces are "
                             "not: a piece's median moves with its share of fast runs, and "
                             "dividing by it moves the piece's other runs)")
    parser.add_argument("--trials", type=int, default=400, help="injected steps per size")
    parser.add_argument("--every-position", action="store_true",
                        help="inject at every commit of every series instead of --trials "
                             "random ones (each series weighted alike: the sampled figures' "
                             "exact expectation; runs 4 x series x commits cases, so for "
                             "sets of tens of series, minutes each)")
    parser.add_argument("--min-points", type=int, default=25,
                        help="series shorter than this are left out (and said so on stderr; "
                             "at least 2 x --margin + 1)")
    parser.add_argument("--margin", type=int, default=6,
                        help="commits between an injected step and either end")
    parser.add_argument("--tolerance", type=int, default=2,
                        help="a reported step this many commits from the injected one counts")
    parser.add_argument("--keep-spells", type=int, default=6,
                        help="pieces shorter than this stay in as noise")
    parser.add_argument("--window", type=int, nargs="+", metavar="N",
                        help="score pieces of N commits of each series (series of lengths "
                             "the data does not have), for each N given")
    parser.add_argument("--seed", type=int, nargs="+", default=[1], metavar="SEED",
                        help="the injected steps' random seed; several: a run per seed")
    parser.add_argument("--runners", type=float, nargs=2, metavar=("FACTOR", "SHARE"),
                        help="shared runners of two kinds: each commit, with probability "
                             "SHARE, ran on one FACTOR times slower (all its series alike)")
    parser.add_argument("--independent", nargs=3, type=float, action="append", default=[],
                        metavar=("SERIES", "COMMITS", "NOISE"),
                        help="a set of SERIES series of COMMITS commits whose noise is "
                             "independent from commit to commit (log-normal, NOISE its "
                             "standard deviation, e.g. 0.05): a quiet machine's, which none "
                             "of the recorded histories has; no real steps (seeded)")
    parser.add_argument("--autocorrelated", nargs=4, type=float, action="append", default=[],
                        metavar=("SERIES", "COMMITS", "NOISE", "PHI"),
                        help="a set of series like --independent's whose log noise is "
                             "AR(1): each commit PHI (0 to 1) times the one before, plus a "
                             "fresh normal of NOISE: a machine whose speed drifts; no real "
                             "steps (seeded)")
    parser.add_argument("--e-divisive", metavar="PYTHON",
                        help="score E-divisive means beside them: PYTHON is an interpreter "
                             "with signal-processing-algorithms installed "
                             "(benchmarks/e_divisive_worker.py)")
    parser.add_argument("--e-divisive-p", type=float, nargs="+", default=[0.05], metavar="P",
                        help="E-divisive's permutation test at P (default the library's "
                             "0.05); several: a column each")
    parser.add_argument("--asv-first-quartile", action="store_true",
                        help="asv reads each commit's first quartile (stats_q_25) where a "
                             "series has them, as benchkit may, in place of its result (the "
                             "median): what the figure read gives either tool")
    parser.add_argument("--no-machine-spell", action="store_true",
                        help="benchkit without its rule for a slow spell of the whole "
                             "machine at the newest end (machine.newest_spell): what it takes off")
    parser.add_argument("--no-machine-stretches", action="store_true",
                        help="benchkit without its rule for a step at the start of a stretch "
                             "the whole machine ran slower (machine.slower_stretches)")
    parser.add_argument("--no-machine-stretch-spells", action="store_true",
                        help="benchkit without its rule for a step there only because of a "
                             "stretch the whole machine ran slower (machine.slower_stretches."
                             "held_by_stretch_spells; --no-machine-stretches leaves it out too)")
    parser.add_argument("--no-machine-share", action="store_true",
                        help="benchkit without its rule for a step that is only the machine "
                             "running slower more often (machine.slower_share)")
    parser.add_argument("-o", "--output", type=Path)
    args = parser.parse_args()
    ASV_AT_FIRST_QUARTILE[0] = args.asv_first_quartile
    MACHINE_SPELL[0] = not args.no_machine_spell
    MACHINE_STRETCHES[0] = not args.no_machine_stretches
    MACHINE_SHARE[0] = not args.no_machine_share
    MACHINE_STRETCH_SPELLS[0] = not args.no_machine_stretch_spells
    if args.e_divisive:
        if shutil.which(args.e_divisive) is None:
            parser.error(f"--e-divisive {args.e_divisive}: not an interpreter that can be "
                         "run; pass the path of a python with signal-processing-algorithms")
        for pvalue in args.e_divisive_p:
            if not 0 < pvalue < 1:
                parser.error(f"--e-divisive-p {pvalue:g}: must be between 0 and 1")
            DETECTORS[f"e-div {pvalue:g}"] = EDivisive(args.e_divisive, pvalue)
    for option, (count, commits, sigma, phi) in (
            [("--independent", (*drawn, 0.0)) for drawn in args.independent]
            + [("--autocorrelated", drawn) for drawn in args.autocorrelated]):
        if not (math.isfinite(count) and math.isfinite(commits) and count >= 1
                and commits >= 2 * args.margin + 1 and 0 < sigma < 1 and 0 <= phi < 1
                and count == int(count) and commits == int(commits)):
            given = " ".join(f"{x:g}" for x in (count, commits, sigma)) + (
                f" {phi:g}" if option == "--autocorrelated" else "")
            parser.error(f"{option} {given}: SERIES a whole number of at least 1, COMMITS "
                         f"of at least {2 * args.margin + 1}, NOISE between 0 and 1"
                         + (", PHI from 0 to below 1" if option == "--autocorrelated" else ""))
    if args.runners and not (0 < args.runners[0] < math.inf and 0 <= args.runners[1] <= 1):
        parser.error(f"--runners {args.runners[0]:g} {args.runners[1]:g}: FACTOR must be "
                     "a finite number above 0 and SHARE between 0 and 1")
    if args.join_no_steps and not args.join:
        parser.error("--join-no-steps: says how --join's histories are scored; give --join")
    if args.min_points < 2 * args.margin + 1:
        parser.error(f"--min-points {args.min_points}: must be at least "
                     f"{2 * args.margin + 1} (twice --margin, plus one)")
    for size in args.window or ():
        if size < 2 * args.margin + 1:
            parser.error(f"--window {size}: must be at least {2 * args.margin + 1} "
                         "(twice --margin, plus one)")
    for d in args.dirs + args.no_steps + [d for join in args.join for d in join]:
        if not d.is_dir():
            parser.error(f"{d}: not a directory; pass an asv results directory (one with "
                         "benchmarks.json and a folder per machine)")
    # (directory, its series, whether it holds no steps, its series' first quartiles)
    loaded = [(d, load_series([d], args.min_points), d in args.no_steps, dict(LAST_QUARTILES))
              for d in args.dirs + args.no_steps]
    for count, commits, sigma in args.independent:
        rng = np.random.default_rng([int(count), int(commits), round(sigma * 1e6)])
        loaded.append((Path(f"independent noise {sigma:.0%}, {int(commits)} commits"),
                       [(f"independent/{k}", np.exp(rng.normal(0, sigma, int(commits))))
                        for k in range(int(count))], True, {}))
    for count, commits, sigma, phi in args.autocorrelated:
        loaded.append((Path(f"autocorrelated noise {sigma:.0%}, phi {phi:g}, {int(commits)} "
                            "commits"), autocorrelated(int(count), int(commits), sigma, phi),
                       True, {}))
    for join in args.join:
        histories = [(load_series([d], args.min_points), dict(LAST_QUARTILES)) for d in join]
        if args.join_no_steps:
            histories = [(by_own_median(series), q) for series, q in histories]
        shared = joined([series for series, _ in histories])
        if not shared:
            parser.error("--join: no series that " + ", ".join(map(str, join)) + " all "
                         "hold (the same machine, environment and benchmark in each)")
        loaded.append((Path("+".join(map(str, join))), shared, args.join_no_steps,
                       joined_quartiles([quartiles for _, quartiles in histories],
                                        [label for label, _ in shared])))
    groups = [(d, size, seed, [] if no_steps else windows(series, size),
               windows(series, size) if no_steps else [], quartiles)
              for seed in args.seed for size in args.window or [None]
              for d, series, no_steps, quartiles in loaded]
    groups = [g for g in groups if g[3] or g[4]]
    said = [line for d in args.dirs + args.no_steps
            if (line := left_out_line(str(d), args.min_points))]
    if not groups:
        sys.exit("no wall-time series with enough points in " + ", ".join(
            map(str, args.dirs + args.no_steps + [d for join in args.join for d in join]))
            + "".join(f"\n{line}" for line in said))
    for line in said:
        print(line, file=sys.stderr)
    result = {"settings": {k: str(v) for k, v in vars(args).items()
                           if k not in ("dirs", "no_steps", "join", "output")}, "data": [],
              "left_out_shorter_than_min_points": {
                  d: {"series": c, "left_out": n, "longest": m}
                  for d, (c, n, m) in LEFT_OUT.items() if n}}
    for directory, size, seed, real, flat, quartiles in groups:
        scored = score(real, flat, args.trials, args.margin, args.tolerance,
                       args.keep_spells, seed, args.runners, args.every_position, quartiles)
        scored.update({"directory": str(directory), "truth": "no steps" if flat else
                       "real steps taken out",
                       "real_steps": real_steps(real, quartiles) if size is None
                       and seed == args.seed[0] else []})
        if scored["real_steps"]:
            scored["real_steps_agreement"] = agreement(scored["real_steps"], args.tolerance)
        if size is not None:
            scored["window"] = size
        scored["seed"] = seed
        result["data"].append(scored)
        pieces = "" if size is None else f" (pieces of {size} commits)"
        pieces += f", seed {seed}" if len(args.seed) > 1 else ""
        print(f"\n{directory} ({scored['truth']}): {scored['series']} series{pieces}, "
              + (f"a slower step injected at every commit of every series (weighted as "
                 f"{args.trials} per size)" if args.every_position else
                 f"{args.trials} injected slower steps per size"))
        print(f"{'':10}" + "".join(f"{f'recall {s:.0%}':>14}" for s in SIZES)
              + f"{'false/series':>14}{'ms/series':>11}")
        for name in DETECTORS:
            interval = scored["false_steps_per_series_95"]
            print(f"{name:10}" + "".join(f"{scored['recall'][name][f'{s:.0%}']:>14.1%}"
                                         for s in SIZES)
                  + f"{scored['false_steps_per_series'][name]:>14.4f}"
                  + f"{scored['seconds_per_series'][name] * 1000:>11.1f}"
                  + ("" if interval is None else
                     "   false 95 %: [{:.3f}, {:.3f}]".format(*interval[name]))
                  + "   false: {null:.4g} null, {near_injected:.4g} misplaced "
                    "({near_injected_at_best_cut:.4g} where the values cut), {elsewhere:.4g} "
                    "elsewhere".format(**scored["false_steps_where"][name])
                  + f", {scored['false_steps_at_ends'][name]:.4g} at an end"
                  + f"; {scored['false_cases'][name]} distinct cases")
        print("benchkit also reported {per_series:.3f} slower steps per series without a "
              "place (a span of commits), {holding_the_injected_commit:.3f} holding the "
              "injected commit".format(**scored["benchkit_unplaced"])
              + f"; {scored['benchkit_pending_per_series']:.3f} pending (the newest commits, "
              "or held by what the machine's other series show)")
        if "real_steps_agreement" in scored:
            agreed = scored["real_steps_agreement"]
            print(f"real steps: asv reports {agreed['asv_regressions']} regressions in the "
                  f"original series; benchkit names {agreed['at_the_commit']} at the commit "
                  f"(within {args.tolerance}), {agreed['in_a_span']} in a span, misses "
                  f"{len(agreed['missed'])}; it names {agreed['benchkit_only']} slower steps "
                  "asv does not report")
            for step in agreed["missed"]:
                print(f"  missed: {step['series']} {step['change']:+.1%} at commit "
                      f"{step['index']} of {step['points']}")
    if len(args.seed) > 1:
        result["over_seeds"] = over_seeds(result["data"])
        print("\nover seeds " + ", ".join(map(str, args.seed)) + ": means")
        for key, tools in result["over_seeds"].items():
            print(key + ": " + "; ".join(
                f"{name} recall " + " / ".join(f"{r:.1%}" for r in tool["recall"].values())
                + f", false {tool['false_steps_per_series']:.4f}"
                for name, tool in tools.items()))
    if args.output:
        args.output.write_text(json.dumps(result, indent=1) + "\n")
        print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
