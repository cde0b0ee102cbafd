"""A step in a stretch the whole machine ran slower is given the stretch as its span: the
seventh VM's idle history, where it ran at its slower speed in stretches of several
commits in most series at once (tests/fixtures/history/seventh-vm-idle.json); and none on
noise that is independent from commit to commit. A step there only because of such a
stretch is pending: the seventh VM beside a busy neighbour (seed 4) (pure)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from benchkit.core.history.machine import told_by_the_machine
from benchkit.core.history.machine.runners import on_one_kind
from benchkit.core.history.machine.slower_stretches import (_spells, held_by_stretch_spell,
                                                            slower_stretches,
                                                            spanned_by_stretches,
                                                            told_by_stretches)
from benchkit.core.history.series import Commit, Point, Series
from benchkit.core.history.steps import steps_of

IDLE = json.loads((Path(__file__).parent / "fixtures" / "history" / "seventh-vm-idle.json"
                   ).read_text())["series"]


def _idle(step=None):
    """The idle history's 8 series; `step`: (benchmark, commit, factor) put in."""
    out = []
    for name, figures in IDLE.items():
        value, low = np.array(figures["value"]), np.array(figures["first_quartile"])
        if step and step[0] == name:
            value[step[1]:] *= step[2]
            low[step[1]:] *= step[2]
        out.append(Series(name, "time", "vm-noise", tuple(
            Point(Commit(f"{i:040x}", f"2026-12-02T{i:05d}", i), v, lo, v, 10, 1)
            for i, (v, lo) in enumerate(zip(value, low))), "noise-py"))
    return out


def _at(sha: str) -> int:
    return int(sha, 16)


def test_the_machines_slower_stretches_on_the_idle_history():
    stretches = slower_stretches(_idle())
    starts = sorted({_at(end) - length for end, length in stretches.values()})
    assert len(starts) >= 10                   # stretches of 2-9 commits all along
    # one commit between two runs is bridged: 113-114 and 116-118 are one stretch
    assert stretches[f"{113:040x}"] == stretches[f"{117:040x}"]


def test_a_step_named_at_the_start_of_a_stretch_is_given_the_stretch_as_its_span():
    # +46 % at commit 117 of `time_dict_build`: commits 113-116, at the old level's slower
    # speed (1.4x), fit the new level's faster one, and the step is named at 113
    history, _ = on_one_kind(_idle(("noise.time_dict_build", 117, 1.46)))
    series = next(s for s in history if s.benchmark == "noise.time_dict_build")
    (step,) = steps_of(series)
    assert (step.commit.order, step.placed) == (113, True)
    (spanned,) = spanned_by_stretches(series, [step], slower_stretches(history))
    first, last = spanned.span
    assert not spanned.placed and first.order == 112 and last.order >= 117
    assert "most of this machine's series ran slower at once" in spanned.evidence
    # as `history regressions` finds it
    found = told_by_the_machine(history, [steps_of(s) for s in history],
                                lambda i, s: steps_of(s))
    (again,) = found[[s.benchmark for s in history].index("noise.time_dict_build")]
    assert again.span == spanned.span


def test_a_step_outside_the_stretches_stays_placed():
    # +46 % at commit 100, between two stretches: named at its commit
    history, _ = on_one_kind(_idle(("noise.time_dict_build", 100, 1.46)))
    found = told_by_stretches(history, [steps_of(s) for s in history],
                              lambda i, s: steps_of(s))
    steps = found[[s.benchmark for s in history].index("noise.time_dict_build")]
    assert [(s.commit.order, s.placed) for s in steps if not s.transient] == [(100, True)]


def test_noise_independent_from_commit_to_commit_has_no_stretches():
    # its runs' scores split in two by chance only, half a noise apart
    rng = np.random.default_rng(1)
    history = [Series(f"b{k}", "time", "m", tuple(
        Point(Commit(f"{i:040x}", "", i), v, v, v, 1, 1)
        for i, v in enumerate(np.exp(rng.normal(0, 0.05, 200))))) for k in range(20)]
    assert slower_stretches(history) == {}


def _busy4(step):
    from seventh_vm_busy import as_series, figures
    history, _ = on_one_kind(as_series(figures(step=step, seed=4)))
    before = [steps_of(s) for s in history]
    after = told_by_the_machine(history, before, lambda i, s: steps_of(s))
    at = [s.benchmark for s in history].index(step[0])

    def listed(steps):
        return [(s.range[0].order, s.range[1].order, round(s.change, 2),
                 "act" if s.to_act_on else "pending" if s.pending else "transient")
                for s in steps if s.change > 0]
    return listed(before[at]), listed(after[at]), after[at], history


def test_a_step_there_only_because_of_a_stretch_the_machine_ran_slower_is_pending():
    # beside the busy neighbour of seed 4 (tests/fixtures/history/seventh-vm-busy4.json),
    # every series ran 1.3-2x slower over commits 12-24; with +50 % put in `time_numpy_dot`
    # from commit 30 (not found: its noise is 52 %), a step at 5-15 is named, which the
    # stretch at 13-16 makes
    before, after, steps, history = _busy4(("noise.time_numpy_dot", 30, 1.5))
    assert before == [(5, 15, 1.56, "act")]
    assert after == [(5, 15, 1.56, "pending")]
    (step,) = steps
    assert held_by_stretch_spell(step) and step.awaiting
    assert "next to a stretch of 4 commits (from 000000000000) that most" in step.evidence
    assert "--confirm re-measures it" in step.evidence
    spells = sorted({(int(end, 16) - length, int(end, 16))
                     for end, length in slower_stretches(history).values()})
    assert spells[:2] == [(13, 17), (19, 25)]


def test_a_step_of_the_code_next_to_a_stretch_stays():
    # +50 % from commit 100 of `time_numpy_dot`, just after the stretch at 86-95: named
    # (at 98) and not held, with the stretch taken down it is still there
    _, after, _, _ = _busy4(("noise.time_numpy_dot", 100, 1.5))
    assert after == [(97, 98, 1.04, "act")]


def test_a_stretch_that_runs_to_the_newest_commit_is_no_spell_here():
    history = _idle()
    stretches = slower_stretches(history)
    newest = f"{len(history[0].points) - 1:040x}"
    ending = {newest: (newest, 4)}
    assert _spells(history[0], ending) == []
    assert _spells(history[0], stretches) != []


def _stretched(step_at: int, slower: float, stretches=((30, 34), (80, 84), (130, 134))):
    """8 series of 200 commits, 2 % noise, all 'slower' in `stretches` ([first, end)); the
    first with +50 % from `step_at`."""
    rng = np.random.default_rng(7)
    out = []
    for k in range(8):
        values = np.exp(rng.normal(0, 0.02, 200))
        for first, end in stretches:
            values[first:end] *= slower
        if k == 0:
            values[step_at:] *= 1.5
        out.append(Series(f"b{k}", "time", "m", tuple(
            Point(Commit(f"{i:040x}", "", i), v, v, v, 1, 1) for i, v in enumerate(values))))
    return out


def _placed(history, find=None):
    steps = [s for s in steps_of(history[0]) if s.change > 0 and not s.transient]
    return [(s.commit.order, s.placed)
            for s in spanned_by_stretches(history[0], steps, slower_stretches(history), find)]


def test_a_step_the_series_places_inside_a_stretch_apart_stays_placed():
    # the stretch at 80-83 (1.2x, as the two others) is far from the others: +50 % at 82
    # stands in the stretch's values too, and with them brought down it is named at 82 again
    history = _stretched(82, 1.2)
    assert _placed(history) == [(82, False)]              # without the series' finder
    assert _placed(history, steps_of) == [(82, True)]
    (step,) = told_by_stretches(history, [steps_of(s) for s in history],
                                lambda i, s: steps_of(s))[0]
    assert step.placed and "apart from its others: named here again" in step.evidence


def test_a_step_the_stretch_places_keeps_its_span():
    # at 1.5x, commits 80-81 at the old level's slower speed fit the new level: +50 % at 82
    # is named at 80; with the stretch brought down (by the 1.5x of the other two) at 82
    assert _placed(_stretched(82, 1.5), steps_of) == [(80, False)]


def test_a_step_in_a_stretch_near_another_keeps_its_span():
    # a second stretch ends 3 commits before this one: the machine is in a busy spell
    history = _stretched(83, 1.2, ((30, 34), (74, 77), (80, 84), (130, 134)))
    assert _placed(history, steps_of) == _placed(history) == [(83, False)]
