"""What the pytest plugin does at the session's edges: check options, count instructions,
save, compare with a baseline and apply gates, and the summary lines."""
from __future__ import annotations

import dataclasses
import datetime
from pathlib import Path

import pytest

from benchkit.core.text import one_line
from benchkit.errors import BenchkitError
from benchkit.pytest_plugin import AUTOSAVE_DIR, SessionState


def check_options(config) -> list[str]:
    """Validate options before any test runs; a bad one is a usage error."""
    from benchkit.system.results_files import check_writable
    opt = config.getoption
    try:
        if opt("--benchkit-save"):
            check_writable(opt("--benchkit-save"))
        compare = opt("--benchkit-compare")
        if compare and compare != "latest" and not Path(compare).is_file():
            raise BenchkitError(f"--benchkit-compare {compare}: no such results file")
    except BenchkitError as error:
        raise pytest.UsageError(f"benchkit: {error}") from None
    if opt("--benchkit-fail-on") and not opt("--benchkit-compare"):
        return ["--benchkit-fail-on needs a baseline: add --benchkit-compare [PATH]"]
    return []


def _autosave_path(root: Path) -> Path:
    from benchkit.system.machine import git_state
    git = git_state(str(root)) or {}
    commit = (git.get("commit") or "nogit")[:12] + ("-dirty" if git.get("dirty") else "")
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    return root / AUTOSAVE_DIR / f"{stamp}-{commit}.json"


def latest_autosave(root: Path) -> Path | None:
    """The newest results file under AUTOSAVE_DIR, or None."""
    files = sorted((root / AUTOSAVE_DIR).glob("*.json"))
    return files[-1] if files else None


def _callgrind(state: SessionState) -> list:
    import benchkit
    targets = [(benchmark, timer) for benchmark, timer in state.targets if timer is not None]
    if not targets:
        return []
    try:
        stats = benchkit.collect_callgrind_many([timer for _, timer in targets])
    except BenchkitError as error:
        state.problems.append(f"instruction counts not collected: {error}")
        return []
    for (benchmark, _), s in zip(targets, stats):
        # counts carry the name and gates only (group and extra_info stay with wall time)
        s.metadata.update(dataclasses.replace(benchmark, extra_info=None).metadata())
    return stats


def _memory(state: SessionState) -> list:
    """MemoryStats of every benchmark that can be repeated (in one worker; one by one when a
    target cannot travel to it, reporting those)."""
    import benchkit
    targets = [(benchmark, timer) for benchmark, timer in state.targets if timer is not None]
    if not targets:
        return []
    try:
        outcomes = benchkit.collect_memory_many([timer for _, timer in targets])
    except BenchkitError:
        outcomes = []
        for benchmark, timer in targets:
            try:
                outcomes.append(timer.collect_memory())
            except BenchkitError as error:
                state.problems.append(f"memory of {benchmark.name} not counted: {error}")
                outcomes.append(None)
    stats = []
    for (benchmark, _), s in zip(targets, outcomes):
        if s is not None:
            s.metadata.update(dataclasses.replace(benchmark, extra_info=None).metadata())
            stats.append(s)
    return stats


def hand_over(config, state: SessionState) -> None:
    """In a pytest-xdist worker: count (when asked), then give the controller this worker's
    measurements and counts (`workeroutput`), which it saves and compares with its own."""
    import json

    from benchkit.core.records.schema import Results, to_document
    callgrind = _callgrind(state) if config.getoption("--benchkit-callgrind") else []
    memory = _memory(state) if config.getoption("--benchkit-memory") else []
    document = to_document(Results(list(state.measurements), callgrind, {}, memory=memory))
    config.workeroutput["benchkit"] = json.dumps(document)
    config.workeroutput["benchkit_problems"] = json.dumps(state.problems)


def receive(state: SessionState, text: str) -> None:
    """In the controller: a worker's measurements and counts (checked like any results
    file) join the session's."""
    import json

    from benchkit.core.records.schema import from_document
    from benchkit.system.results_files import results_validator
    results = from_document(json.loads(text), results_validator())
    state.measurements.extend(results.measurements)
    state.received_counts.extend(results.callgrind)
    state.received_memory.extend(results.memory)


def finish(config, state: SessionState) -> bool:
    """Count, save, compare; True when a gate failed."""
    import benchkit
    from benchkit.core.compare import comparison
    from benchkit.core.records.schema import Results
    from benchkit.system.machine import collect
    from benchkit.system.results_files import save_with_fallback
    opt = config.getoption
    root = Path(config.rootpath)
    callgrind = _callgrind(state) if opt("--benchkit-callgrind") else []
    memory = _memory(state) if opt("--benchkit-memory") else []
    results = Results(list(state.measurements), state.received_counts + callgrind,
                      collect(str(root)), partial=state.interrupted,
                      memory=state.received_memory + memory)
    state.results = results
    state.written = []
    baseline = None
    compare = opt("--benchkit-compare")
    if compare:
        baseline = latest_autosave(root) if compare == "latest" else Path(compare)
        if baseline is None:
            state.problems.append(f"--benchkit-compare: no autosaved results under "
                                  f"{root / AUTOSAVE_DIR} yet; run with "
                                  "--benchkit-autosave first")
    targets = [opt("--benchkit-save")] if opt("--benchkit-save") else []
    if opt("--benchkit-autosave"):
        targets.append(_autosave_path(root))
    for target in targets:
        written, problem = save_with_fallback(target, results)
        state.written.append(str(written))
        if problem:
            state.problems.append(f"could not write {problem}; saved to {written}")
    if baseline is None:
        return False
    try:
        base = benchkit.load(baseline)
    except BenchkitError as error:
        state.problems.append(str(error))
        return True
    gates = list(opt("--benchkit-fail-on"))  # parsed by the option's type
    state.baseline = str(baseline)
    state.comparison = comparison.of_runs(base, results, gates,
                                          allow_missing=opt("--benchkit-allow-missing"),
                                          strict=opt("--benchkit-strict"))
    return bool(state.comparison.regressions)


def summary_lines(state: SessionState) -> list[str]:
    """The benchkit section of the terminal summary."""
    from benchkit.api.compare import Compare
    from benchkit.core.compare.report import (
        format_callgrind,
        format_comparison,
        format_memory,
    )
    lines: list[str] = []
    if state.measurements:
        lines += str(Compare(state.measurements)).splitlines()
    if state.results is not None and state.results.callgrind:
        lines += format_callgrind(state.results.callgrind).splitlines()
    if state.results is not None and state.results.memory:
        lines += format_memory(state.results.memory).splitlines()
    if state.comparison is not None:
        lines.append(f"compared with {state.baseline}:")
        lines += format_comparison(state.comparison).splitlines()
        for row in state.comparison.regressions:
            lines.append(one_line(f"FAILED {row.name}: " + "; ".join(row.failures)))
    if state.interrupted:
        lines.append(f"benchkit: the session was {state.interrupted}; the results saved are "
                     "partial (marked so in the file)")
    for path in state.written:
        lines.append(f"benchkit results written to {one_line(path)}")
    lines += [f"benchkit: {one_line(p)}" for p in state.problems]
    return lines
