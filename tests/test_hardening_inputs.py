"""Hardening, round two, inputs sized to hurt: every reader refuses what is not a regular file,
stops at the read limit (a gzip bomb included), does no arithmetic on what a file says, and
prints nothing raw from a file to the terminal. The readers run under a 2 GB address-space
limit, so taking all memory shows as a failure here instead of taking the machine down."""
from __future__ import annotations

import gzip
import json
import os
import resource
import subprocess
import sys
import threading
import time

import pytest

import benchkit
from benchkit.core.records.schema import Results
from conftest import make_measurement

LIMIT = 2 << 30
ESCAPES = "\x1b]0;pwned\x07\x1b[2J"


def bounded(*args, cwd, env=None, timeout=120):
    """The CLI in a subprocess whose address space is capped at 2 GB."""
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))
    full_env = {"PATH": "/usr/bin:/bin", "OPENBLAS_NUM_THREADS": "1", **(env or {})}
    return subprocess.run([sys.executable, "-m", "benchkit", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, env=full_env, timeout=timeout,
                          preexec_fn=cap)


def one_clear_error(out, *fragments, code=2):
    assert out.returncode == code, out.stdout + out.stderr
    assert "Traceback" not in out.stderr and "MemoryError" not in out.stderr, out.stderr
    for fragment in fragments:
        assert fragment in out.stderr, out.stderr


def _trace(tmp_path, event, name="t.json"):
    path = tmp_path / name
    path.write_text(json.dumps({"traceEvents": [event]}))
    return path


ADD = {"ph": "X", "name": "aten::add", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": 1,
       "dur": 2, "args": {"Input Dims": [["ab", 100000000000]], "Input type": ["float"]}}


def test_a_shape_holding_a_string_has_no_cost_and_no_100_gb_string(tmp_path):
    out = bounded("analyze", _trace(tmp_path, ADD), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "aten::add" in out.stdout and "MemoryError" not in out.stderr


@pytest.mark.parametrize("dims", [[[-4, 4]], [[True, 3]], [[2 ** 60, 2 ** 60]], [[1.5, 2]],
                                  [[[[[[1]]]]]]])
def test_shapes_that_are_not_shapes_make_the_cost_unknown(dims):
    from benchkit.core.trace.flops import op_cost
    assert op_cost("aten::add", {"Input Dims": dims, "Input type": ["float"]}) == (None, None)


@pytest.mark.parametrize("command", ["analyze", "trace-diff", "validate-trace"])
def test_a_timestamp_beyond_any_time_is_one_clear_error(tmp_path, command):
    trace = _trace(tmp_path, {**ADD, "ts": "1e999999"})
    args = [trace, trace] if command == "trace-diff" else [trace]
    out = bounded(command, *args, cwd=tmp_path)
    if command == "validate-trace":   # a problem it reports, not an error
        assert out.returncode == 1 and "out of range" in out.stdout, out.stdout + out.stderr
        assert "Traceback" not in out.stderr
    else:
        one_clear_error(out, "'ts' '1e999999' is out of range")


@pytest.mark.slow
def gzip_bomb(path, blocks: int):
    """`blocks` gzip members of 16 MiB of whitespace each (a streaming parser reads on to
    the cap), about 16 kB apiece on disk: one member compressed once, written `blocks`
    times, as a multi-member gzip file (which every gzip reader must read whole)."""
    member = gzip.compress(b" " * (1 << 24), 9, mtime=0)
    with open(path, "wb") as f:
        for _ in range(blocks):
            f.write(member)
    return path


def test_a_gzip_bomb_stops_at_the_read_limit(tmp_path):
    bomb = gzip_bomb(tmp_path / "bomb.json.gz", blocks=32)     # 512 MB inflated
    assert bomb.stat().st_size < 1 << 20
    started = time.monotonic()
    out = bounded("show", bomb, cwd=tmp_path, env={"BENCHKIT_READ_LIMIT": "256M"})
    one_clear_error(out, "holds more than 268,435,456 bytes inflated", "BENCHKIT_READ_LIMIT")
    assert time.monotonic() - started < 60
    out = bounded("analyze", bomb, cwd=tmp_path, env={"BENCHKIT_READ_LIMIT": "256M"})
    one_clear_error(out, "holds more than 268,435,456 bytes inflated")


@pytest.mark.slow
def test_the_default_read_limit_stops_a_bomb_within_2_gb(tmp_path):
    bomb = gzip_bomb(tmp_path / "bomb.json.gz", blocks=80)  # 1.25 GB: past the default 1 GiB
    out = bounded("show", bomb, cwd=tmp_path)
    one_clear_error(out, "holds more than 1,073,741,824 bytes inflated")


@pytest.mark.slow
def test_a_results_file_that_would_not_fit_in_memory_is_refused_before_parsing(tmp_path):
    path = tmp_path / "many.json"
    path.write_bytes(b"[" + b"{}," * (40 << 20) + b"{}]")   # 120 MB of empty objects
    out = bounded("show", path, cwd=tmp_path, env={"BENCHKIT_READ_LIMIT": "512M"})
    one_clear_error(out, "would take about", "bytes of memory to load")


@pytest.mark.parametrize("command", ["show", "analyze", "validate-trace"])
@pytest.mark.slow
def test_devices_and_directories_are_refused_at_once(tmp_path, command):
    out = bounded(command, "/dev/zero", cwd=tmp_path)
    one_clear_error(out, "/dev/zero: is a character device, not a regular file")
    out = bounded(command, tmp_path, cwd=tmp_path)
    one_clear_error(out, "is a directory")


@pytest.mark.parametrize("command", ["show", "analyze", "compare"])
def test_a_fifo_nobody_writes_is_refused_not_waited_on(tmp_path, command):
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    args = [fifo, fifo] if command == "compare" else [fifo]
    out = bounded(command, *args, cwd=tmp_path, timeout=60)
    one_clear_error(out, "is a FIFO (named pipe), not a regular file")


def test_the_read_limit_must_be_a_size(tmp_path):
    benchkit.save(tmp_path / "r.json", [make_measurement([1.0, 1.1])])
    out = bounded("show", tmp_path / "r.json", cwd=tmp_path,
                  env={"BENCHKIT_READ_LIMIT": "lots"})
    one_clear_error(out, "BENCHKIT_READ_LIMIT='lots' is not a size")
    out = bounded("show", tmp_path / "r.json", cwd=tmp_path,
                  env={"BENCHKIT_READ_LIMIT": "2G"})
    assert out.returncode == 0


def test_numbers_beyond_a_float_are_refused_in_results_files(tmp_path):
    path = benchkit.save(tmp_path / "r.json", [make_measurement([1.0, 1.1])])
    path.write_text(path.read_text().replace('"raw_times": [', '"raw_times": [1e999, ', 1))
    out = bounded("show", path, cwd=tmp_path)
    one_clear_error(out, "holds 1e999, a number too large for a results file")


@pytest.mark.slow
def test_labels_with_terminal_escapes_are_printed_escaped(tmp_path):
    m = make_measurement([1.0, 1.1, 1.2], label=ESCAPES, sub_label="row\x1b[1A",
                         metadata={"benchmark": f"bench{ESCAPES}"})
    path = benchkit.save(tmp_path / "r.json", Results([m], [], {"hostname": "h\x1b[2J"}))
    for args in (["show", path], ["compare", path, path]):
        out = bounded(*args, cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        for stream in (out.stdout, out.stderr):
            assert "\x1b" not in stream and "\x07" not in stream, repr(stream)
        assert "\\x1b]0;pwned\\x07" in out.stdout
    suite = tmp_path / "bench_escapes.py"
    suite.write_text(f"from benchkit import Timer\nbench_x = Timer('pass', label={ESCAPES!r})\n")
    out = bounded("run", suite, "--fast", "-o", tmp_path / "run.json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    # `run` prints a table per suite file, a row per benchmark: the label is in the file.
    assert "\x1b" not in out.stdout + out.stderr and "bench_x" in out.stdout
    shown = bounded("show", tmp_path / "run.json", cwd=tmp_path)
    assert "\x1b" not in shown.stdout and "bench_x" in shown.stdout
    out = bounded("show", tmp_path / "missing\x1b[2J.json", cwd=tmp_path)
    one_clear_error(out, "missing\\x1b[2J.json: no such file")
    assert "\x1b" not in out.stderr


def test_an_uncompressed_trace_read_through_the_limit_streams(tmp_path):
    trace = _trace(tmp_path, {**ADD, "args": {}})
    out = bounded("analyze", trace, cwd=tmp_path, env={"BENCHKIT_READ_LIMIT": "100"})
    one_clear_error(out, "holds more than 100 bytes")
    gz = tmp_path / "t.json.gz"
    gz.write_bytes(gzip.compress(trace.read_bytes()))
    assert bounded("analyze", gz, cwd=tmp_path).returncode == 0


def test_a_fifo_does_not_block_the_python_api(tmp_path):
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    outcome = []

    def load():
        try:
            benchkit.load(fifo)
        except benchkit.BenchkitError as error:
            outcome.append(str(error))
    thread = threading.Thread(target=load, daemon=True)
    thread.start()
    thread.join(10)
    assert outcome and "FIFO" in outcome[0]
