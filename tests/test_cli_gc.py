"""The CLI's cycle-collector policy: commands that hold a whole history run the collector
less often, and leave the process as they found it (main() also runs in-process)."""
from __future__ import annotations

import gc

from benchkit.cli.main import HISTORY_GC_THRESHOLDS, HOLD_HISTORIES, build_parser, main
from benchkit.system import history_db


def test_history_commands_are_commands_and_leave_the_thresholds_as_they_were(tmp_path,
                                                                              monkeypatch):
    commands = build_parser()._subparsers._group_actions[0].choices
    assert set(HOLD_HISTORIES) <= set(commands)
    seen = []
    series = history_db.HistoryDB.series

    def spy(self, **filters):           # the thresholds while the history is held
        seen.append(gc.get_threshold())
        return series(self, **filters)
    monkeypatch.setattr(history_db.HistoryDB, "series", spy)
    before = gc.get_threshold()
    history_db.HistoryDB(tmp_path / "h.db").close()
    assert main(["history", "regressions", "--db", str(tmp_path / "h.db")]) == 0
    assert seen and all(t == HISTORY_GC_THRESHOLDS for t in seen)
    assert gc.get_threshold() == before
