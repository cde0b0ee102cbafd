"""The values of an asv suite's track_, mem_ and peakmem_ benchmarks (`benchkit run` on an
asv directory): each parameter combination run in `processes` fresh, lean processes
(engines/asv_value.py, which imports nothing of benchkit, started by a small launcher so
that its peak memory is its own), one value per process, as asv's own runner computes it.
A timeraw_ benchmark's samples are times, each taken in a fresh interpreter as asv takes
them; they become a wall-time Measurement with one process per sample. A benchmark that
raises, times out or prints no answer is a failure of its own; asv's skips are skips."""
from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Callable, Iterable

from benchkit.core.measure.measurement import Measurement, ProcessSample
from benchkit.core.records.records import Failure, FailureKind, Phase
from benchkit.core.records.values import ValueStats
from benchkit.orchestration.asv_suite import ValueBenchmark, asv_benchmarks, looks_like_asv
from benchkit.system.processes import run_command

SCRIPT = Path(__file__).resolve().parent.parent / "engines" / "asv_value.py"


def value_benchmarks(paths: Iterable[str | Path], wanted: Callable[[str], bool]
                     ) -> list[ValueBenchmark]:
    """The track_, mem_ and peakmem_ benchmarks of the asv suites among `paths` that
    `wanted` (a -k filter over names and asv's spellings) selects."""
    out: list[ValueBenchmark] = []
    for path in map(Path, paths):
        if path.is_dir() and looks_like_asv(path):
            asv_benchmarks(path, lambda failure, error: None, wanted, values=out)
    return out


# Linux keeps a process's peak resident memory across fork and exec: a child started by
# this process (which imported the suite to find its benchmarks) would report our peak as
# its own. A small launcher in between starts the measuring process with a peak of its own.
_LAUNCHER = "import subprocess, sys; sys.exit(subprocess.call(sys.argv[1:]))"


def _one(item: ValueBenchmark, timeout: float, samples: int = 1) -> dict:
    command = [sys.executable, "-S", "-c", _LAUNCHER, sys.executable, str(SCRIPT), item.root,
               item.asv_name, str(samples)]
    try:
        done = run_command(command, timeout=timeout, cwd=Path(item.root).parent)
    except subprocess.TimeoutExpired:
        return {"timed_out": f"{item.name}: no value within {timeout:g} s (--timeout)"}
    lines = done.stdout.strip().splitlines()
    try:
        reply = json.loads(lines[-1]) if lines else None
    except ValueError:
        reply = None
    if not isinstance(reply, dict):
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": f"its process exited with {done.returncode} without a value "
                         f"({tail})"}
    return reply


def measure_values(items: list[ValueBenchmark], *, processes: int, timeout: float,
                   values: list[ValueStats], failures: list[Failure],
                   on_done: Callable[[], None] | None = None,
                   times: list[Measurement] | None = None, samples: int = 10) -> None:
    """Append the ValueStats of the items measured to `values` (timeraw_'s Measurements,
    `samples` fresh interpreters each, to `times`), the failures and skips of the others to
    `failures`, each as soon as it is known (a run stopped part-way keeps what was
    measured)."""
    for item in items:
        if item.kind is None:
            _timeraw(item, timeout * samples, samples, times, failures)
            if on_done is not None:
                on_done()
            continue
        got: list[float] = []
        for _ in range(processes):
            reply = _one(item, timeout)
            if "value" in reply:
                got.append(float(reply["value"]))
                continue
            failures.append(_failure(item, reply))
            got = []
            break
        if got:
            metadata = {"benchmark": item.name, "gates": []}
            if item.params:
                metadata["params"] = item.params
            values.append(ValueStats(item.spec, item.kind, item.unit, got, metadata))
        if on_done is not None:
            on_done()


def _failure(item: ValueBenchmark, reply: dict) -> Failure:
    kind = (FailureKind.SKIPPED if "skipped" in reply else FailureKind.TIMED_OUT
            if "timed_out" in reply else FailureKind.RAISED)
    why = str(reply.get("skipped") or reply.get("timed_out") or reply.get("error"))
    return Failure(item.name, Phase.VALUE if item.kind else Phase.WALL_TIME, kind, why,
                   item.file)


def _timeraw(item: ValueBenchmark, timeout: float, samples: int,
             times: list[Measurement] | None, failures: list[Failure]) -> None:
    reply = _one(item, timeout, samples)
    got = reply.get("times")
    number = reply.get("number")
    if not (isinstance(got, list) and got and isinstance(number, int) and number > 0
            and all(isinstance(t, (int, float)) and math.isfinite(t) and t > 0
                    for t in got)):
        failures.append(_failure(item, reply if "times" not in reply else
                                 {"error": f"{item.name}: no times in its reply"}))
        return
    metadata = {"benchmark": item.name, "gates": []}
    if item.params:
        metadata["params"] = item.params
    if times is not None:
        times.append(Measurement(number, [float(t) for t in got], item.spec, metadata,
                                 [ProcessSample((1,)) for _ in got]))
