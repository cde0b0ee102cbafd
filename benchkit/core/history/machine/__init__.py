"""What one series cannot tell and the machine's other series can (pure): kinds of runner
that the runs do not name (`runners`), a stretch the whole machine ran slower at the start
of a step or as the cause of one (`slower_stretches`), a step that is only the machine
running slower more often (`slower_share`), a slow spell of the whole machine at the newest
end (`newest_spell`); what those rules share (`held`). They read a history on one kind of
runner, as its steps are found (`runners.on_one_kind_with`)."""
from __future__ import annotations

from typing import Callable, Sequence

from benchkit.core.history.machine.newest_spell import held_by_spells
from benchkit.core.history.machine.runners import slower_at_once_by_history
from benchkit.core.history.machine.slower_share import held_by_shares
from benchkit.core.history.machine.slower_stretches import told_by_stretches
from benchkit.core.history.series import Series
from benchkit.core.history.step import Step


def told_by_the_machine(series_list: Sequence[Series], found: Sequence[list[Step]],
                        find: Callable[[int, Series], list[Step]],
                        context: Sequence[Series] | None = None) -> list[list[Step]]:
    """`found` (the steps of each series of `series_list`) as the other series of each
    one's history (all those in `context`, default `series_list`) tell them: a slower step
    at the start of a stretch they ran slower given the stretch as its span, a step there
    only because of such a stretch held as pending, a step that is only the machine
    running slower more often held as pending, then a step the newest spell of the machine
    makes held as pending (`find(i, series)` finds series i's steps again)."""
    # the commits most series ran slower at once: read by the stretches and the share rule
    slower = slower_at_once_by_history(series_list, found, context)
    spanned = told_by_stretches(series_list, found, find, context, slower)
    return held_by_spells(series_list,
                          held_by_shares(series_list, spanned, find, context, slower),
                          find, context)
