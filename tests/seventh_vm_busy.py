"""The seventh VM's 200-commit noise histories beside a busy neighbour (tests/fixtures/history/
seventh-vm-busy.json and seventh-vm-busy4.json say how they were recorded): as series, and as
asv's results files."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from benchkit.core.history.series import Commit, Point, Series

HERE = Path(__file__).parent / "fixtures" / "history"
# seed 3 (seventh-vm-busy.json), seed 4 (seventh-vm-busy4.json): each file says how
FIGURES = {seed: json.loads((HERE / name).read_text())["series"]
           for seed, name in ((3, "seventh-vm-busy.json"), (4, "seventh-vm-busy4.json"))}


def figures(commits: int | None = None, step: tuple[str, int, float] | None = None,
            every: bool = False, seed: int = 3) -> dict[str, dict[str, np.ndarray]]:
    """Each series' values and first quartiles of the history beside the busy neighbour of
    `seed`: its first `commits` (all by default); `step`: (benchmark, commit, factor) put
    in (in every series with `every`)."""
    out = {}
    for name, columns in FIGURES[seed].items():
        value = np.array(columns["value"][:commits])
        low = np.array(columns["first_quartile"][:commits])
        if step and (every or step[0] == name):
            value[step[1]:] *= step[2]
            low[step[1]:] *= step[2]
        out[name] = {"value": value, "first_quartile": low}
    return out


def as_series(figures: dict[str, dict[str, np.ndarray]]) -> list[Series]:
    """`figures` as the series `history import-asv` makes of them."""
    return [Series(name, "time", "vm-noise", tuple(
        Point(Commit(f"{i:040x}", f"2026-12-02T{i:05d}", i), v, low, v, 10, 1)
        for i, (v, low) in enumerate(zip(columns["value"], columns["first_quartile"]))),
        "noise-py") for name, columns in figures.items()]


def write_as_asv_results(directory: Path, figures: dict[str, dict[str, np.ndarray]]) -> None:
    """`figures` as asv results files (asv's format 2, as the recording wrote them)."""
    names = list(figures)
    (directory / "box").mkdir(parents=True)
    (directory / "benchmarks.json").write_text(json.dumps(
        {name: {"name": name, "type": "time", "unit": "seconds", "params": [],
                "param_names": [], "version": "1"} for name in names} | {"version": 2}))
    (directory / "box" / "machine.json").write_text(json.dumps({"machine": "box",
                                                                 "version": 1}))
    columns = ["result", "params", "version", "stats_q_25"]
    for i in range(len(figures[names[0]]["value"])):
        sha = f"{i:08x}" + "0" * 32
        results = {name: [[float(figures[name]["value"][i])], [], "1",
                          [float(figures[name]["first_quartile"][i])]] for name in names}
        (directory / "box" / f"{sha[:8]}-py3.11.json").write_text(json.dumps(
            {"commit_hash": sha, "env_name": "py3.11", "date": 1_700_000_000_000 + i * 3_600_000,
             "params": {"machine": "box", "python": "3.11"}, "python": "3.11",
             "requirements": {}, "result_columns": columns, "results": results,
             "version": 2}))
