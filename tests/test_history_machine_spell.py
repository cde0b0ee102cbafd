"""A slow spell of the whole machine at the newest end of a history: the steps it makes are
pending, a step that stands without it stays (pure)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from benchkit.core.history.machine.newest_spell import (SPELL_MIN_SERIES, held_by_spells,
                                                 newest_spell, spell_of)
from benchkit.core.history.machine.held import MATCH
from benchkit.core.history.machine.runners import on_one_kind
from benchkit.core.history.series import Commit, Point, Series
from benchkit.core.history.steps import steps_of
from benchkit.core.history.transient import NEWEST_REACH
from seventh_vm_busy import as_series, figures, write_as_asv_results

COMMITS = 200


def _history(slow_from=193, factor=1.6, count=8, slower=None, machine="m", seed=1,
             steps=None):
    """`count` series of one machine, 3 % noise, each `factor` slower from commit
    `slow_from` on (only the first `slower` of them, when given); `steps`: {series: (at,
    factor)} a real step of its own."""
    rng = np.random.default_rng(seed)
    out = []
    for b in range(count):
        values = np.exp(rng.normal(0, 0.03, COMMITS)) * 1e-5 * (1 + b)
        if slower is None or b < slower:
            values[slow_from:] *= factor
        if steps and b in steps:
            at, by = steps[b]
            values[at:] *= by
        out.append(Series(f"b{b}", "time", machine, tuple(
            Point(Commit(f"{i:040x}", f"2026-01-01T{i:05d}", i), v, v, v, 1, 1)
            for i, v in enumerate(values)), "env"))
    return out


def _claims(series_list):
    found = held_by_spells(series_list, [steps_of(s) for s in series_list],
                           lambda i, s: steps_of(s))
    return [[(s.commit.order, s.pending) for s in steps if not s.transient]
            for steps in found]


def test_the_newest_commits_slower_in_every_series_are_the_machines_spell():
    spell = spell_of(_history())
    assert spell is not None
    assert (spell.length, spell.slower, spell.judged) == (7, 8, 8)
    assert spell.commits == frozenset(f"{i:040x}" for i in range(193, COMMITS))
    assert all(0.40 < gap < 0.52 for gap in spell.gaps)      # log 1.6 = 0.47


def test_each_step_the_spell_makes_is_pending_and_says_why():
    history = _history()
    assert _claims(history) == [[(193, True)]] * 8
    found = held_by_spells(history, [steps_of(s) for s in history], lambda i, s: steps_of(s))
    assert found[0][0].evidence.endswith(
        "; pending: the newest 7 commits of this machine ran slower in 8 of its 8 series at "
        "once (a slow spell of the machine, or a change they all share): without them this "
        "step is not there (more commits, or --confirm, settle it)")
    assert not found[0][0].to_act_on
    # without the rule, the same steps are claims
    assert [[(s.commit.order, s.pending) for s in steps_of(s)] for s in history] == [
        [(193, False)]] * 8


def test_a_step_that_stands_without_the_spell_stays():
    # series 2 became 30 % slower at commit 180, then the machine's spell came on top
    claims = _claims(_history(steps={2: (180, 1.3)}))
    assert claims[2] == [(180, False), (193, True)]
    assert claims[0] == [(193, True)]


@pytest.mark.parametrize("history", [
    _history(slower=5),                                  # 5 of 8 series: not the machine
    _history(slow_from=COMMITS - NEWEST_REACH),          # as long as NEWEST_REACH: a level
    _history(count=SPELL_MIN_SERIES - 1),                # too few series to tell
    _history(factor=1.05),                               # within the series' noise
])
def test_no_spell(history):
    assert spell_of(history) is None
    assert all(not s.pending for steps in (steps_of(s) for s in history) for s in steps
               if steps and s.commit.order < COMMITS - MATCH - 7)


def test_a_run_of_the_newest_commits_as_long_as_the_reach_is_a_level_and_claimed():
    claims = _claims(_history(slow_from=COMMITS - NEWEST_REACH))
    assert claims == [[(COMMITS - NEWEST_REACH, False)]] * 8


def test_another_machines_series_are_left_alone():
    history = _history() + _history(slower=0, machine="other", seed=2,
                                    steps={0: (193, 1.6)})
    claims = _claims(history)
    assert claims[:8] == [[(193, True)]] * 8
    assert claims[8] == [(193, False)]            # its machine had no spell: a claim


def test_newest_spell_needs_the_same_newest_commits_in_every_series():
    history = _history()
    pairs = [([p.commit.sha for p in s.points], [p.value for p in s.points]) for s in history]
    assert newest_spell(pairs) is not None
    # one series a commit short at the newest end: the window is not the same for all
    pairs[0] = (pairs[0][0][:-1], pairs[0][1][:-1])
    assert newest_spell(pairs) is None
    # a value at 0 leaves a series out (the other 7 still tell the machine)
    pairs = [([p.commit.sha for p in s.points], [p.value for p in s.points]) for s in history]
    pairs[0][1][-1] = 0.0
    spell = newest_spell(pairs)
    assert spell is not None and spell.judged == 7 and spell.gaps[0] == 0.0


NIGHT = 158     # commits of the history the night a spell of 2-4.8x had lasted 6


def _real_history():
    """The seventh VM beside a busy neighbour as it stood the night a spell of 2-4.8x in
    every series had lasted 6 commits: its first NIGHT commits."""
    return as_series(figures(NIGHT))


def test_real_noise_a_busy_night_at_the_newest_end_is_no_claim():
    history, _ = on_one_kind(_real_history())
    spell = spell_of(history)
    assert spell is not None and (spell.length, spell.slower, spell.judged) == (6, 7, 8)
    before = [steps_of(s) for s in history]
    claimed = sorted((s.benchmark, s.commit.order, s.range[1].order) for steps in before
                     for s in steps if s.to_act_on and s.change > 0 and s.range[1].order >= 148)
    # without the rule: six series name a slower step (+84 % to +167 %) at the busy night
    # (at a commit, or a span to its end)
    assert claimed == [("noise.time_dict_build", 152, 156), ("noise.time_json_dumps", 151, 151),
                       ("noise.time_numpy_sum", 151, 151), ("noise.time_re_findall", 151, 155),
                       ("noise.time_str_join", 152, 156), ("noise.time_sum_range", 152, 152)]
    after = held_by_spells(history, before, lambda i, s: steps_of(s))
    assert [s for steps in after for s in steps
            if s.to_act_on and s.change > 0 and s.range[1].order >= 148] == []
    held = [s for steps in after for s in steps if s.awaiting and spell.note in s.evidence]
    assert len(held) == 6


@pytest.mark.slow
def test_real_noise_the_busy_night_breaks_no_gate_and_says_why(tmp_path):
    from test_cli import cli
    write_as_asv_results(tmp_path / "results", figures(NIGHT))
    db = tmp_path / "h.db"
    cli("history", "import-asv", tmp_path / "results", "--db", db, cwd=tmp_path,
        check_code=0)
    out = cli("history", "regressions", "--fail-on", "slower>5%", "--json", "--db", db,
              cwd=tmp_path, check_code=0)
    held = [s for s in json.loads(out.stdout) if "series at once" in s["evidence"]]
    assert sorted(s["benchmark"] for s in held) == [
        "noise.time_dict_build", "noise.time_json_dumps", "noise.time_numpy_sum",
        "noise.time_re_findall", "noise.time_str_join", "noise.time_sum_range"]
    assert all(s["pending"] and not s["transient"] for s in held)
    assert "the newest 6 commits of this machine ran slower in 7 of its 8 series" in (
        held[0]["evidence"])
    # the summary says how many of the pending steps the machine's spell holds
    summary = cli("history", "regressions", "--db", db, cwd=tmp_path, check_code=0).stderr
    assert "6 of them there because most of the machine's series ran slower at once" in summary
