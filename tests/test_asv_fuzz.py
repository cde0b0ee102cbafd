"""asv's results files as they arrive from other projects' CI: any part of a real one (format 1
from astropy's runs, format 2 from asv's sample project) or of its benchmarks.json replaced by
any JSON is a run benchkit reads or one clear error (a HistoryError naming the file), never
another exception; a run that reads files into a history database."""
from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path

from hypothesis import given, strategies as st

from benchkit.core.history.asv import AsvRun, parse_run
from benchkit.errors import HistoryError
from benchkit.system.history_db import HistoryDB
from test_readers_fuzz import FUZZ, _paths, _replace, json_trees

REAL = Path(__file__).parent / "fixtures" / "asv-real"
SOURCES = [(REAL / "astropy-cheetah" / "cheetah" / "6c188c11-py2.7-Cython-numpy1.8.json",
            REAL / "astropy-cheetah" / "benchmarks.json"),
           (REAL / "asv-samples" / "rgx1gen11" / "d6b286b8-virtualenv-py3.12-numpy.json",
            REAL / "asv-samples" / "benchmarks.json")]
RUNS = [json.loads(run.read_text()) for run, _ in SOURCES]
BENCHMARKS = [json.loads(bench.read_text()) for _, bench in SOURCES]
RUN_PATHS = [list(_paths(doc)) for doc in RUNS]
BENCHMARK_PATHS = [list(_paths(doc)) for doc in BENCHMARKS]
_SCRATCH = tempfile.TemporaryDirectory(prefix="benchkit-asv-fuzz-")


def _read(document, benchmarks) -> AsvRun | None:
    try:
        run = parse_run(document, benchmarks, "r.json")
    except HistoryError as error:
        assert "r.json" in str(error)
        return None
    for observation in run.observations:
        assert observation.benchmark and observation.metric
        assert observation.value is None or math.isfinite(observation.value)
    return run


def _store(run: AsvRun) -> None:
    with HistoryDB(Path(_SCRATCH.name) / "h.db") as db:
        db.add(list(run.observations), commit=run.commit, machine=run.machine,
               measured_at=run.measured_at, source="r.json", digest="d",
               environment=run.environment, env=run.env_name)
        # read back: the machine's params (any JSON here) name the hardware of its series
        for series in db.series():
            assert isinstance(series.environment, str)


@FUZZ
@given(st.data(), json_trees)
def test_a_real_results_file_with_any_part_replaced_reads_or_is_one_clear_error(data, value):
    which = data.draw(st.integers(0, len(RUNS) - 1))
    path = data.draw(st.sampled_from(RUN_PATHS[which]))
    run = _read(_replace(RUNS[which], path, value), BENCHMARKS[which])
    if run is not None:
        _store(run)


@FUZZ
@given(st.data(), json_trees)
def test_a_real_benchmarks_json_with_any_part_replaced_reads_or_is_one_clear_error(
        data, value):
    which = data.draw(st.integers(0, len(RUNS) - 1))
    path = data.draw(st.sampled_from(BENCHMARK_PATHS[which]))
    benchmarks = _replace(BENCHMARKS[which], path, value)
    _read(RUNS[which], benchmarks if isinstance(benchmarks, dict) else {})
