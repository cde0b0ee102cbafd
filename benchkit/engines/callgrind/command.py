"""What a valgrind run is made of: its command line, and how a failed child is reported."""
from __future__ import annotations

import json
from pathlib import Path

from benchkit.errors import CallgrindError, GlobalNotTransferableError
from benchkit.system.processes import aslr_prefix, last_lines

CACHE_SIM_ARGS = ["--cache-sim=yes", "--I1=32768,8,64", "--D1=32768,8,64", "--LL=8388608,16,64"]


def valgrind_command(valgrind: str, out_file: str, cache_sim: bool) -> list[str]:
    """valgrind's command line (before the program) with benchkit's controls."""
    cmd = aslr_prefix() + [
        valgrind, "--tool=callgrind", f"--callgrind-out-file={out_file}",
        "--instr-atstart=no", "--collect-atstart=no", "--dump-line=yes", "--vgdb=no",
        # One name per function: no fn'2 recursion-level variants in diffs.
        "--separate-recs=1",
        # Faster translation; guest instruction counts are unaffected.
        "--vex-iropt-level=1", "--vex-guest-chase=no"]
    return cmd + (CACHE_SIM_ARGS if cache_sim else [])


def child_failure(workdir: Path, tag: str, title: str, status: int, stderr: str) -> Exception:
    """The error for a collector child that failed: the snippet's own error when the child
    wrote one (error-TAG.json), else how the process ended and its last stderr lines."""
    error_file = workdir / f"error-{tag}.json"
    if error_file.is_file():
        info = json.loads(error_file.read_text(encoding="utf-8"))
        if info["kind"] == "global":
            return GlobalNotTransferableError(
                f"global {info['name']!r} could not be rebuilt in the callgrind child: "
                f"{info['message']}. Classes must be importable by the child (defined in a "
                "module, not in __main__), or build the object in `setup`.")
        return CallgrindError(f"{title!r}: {info['message']} (under callgrind)"
                              f"\n{last_lines(info.get('traceback', ''), 15)}")
    how = (f"was killed by signal {-status}" if status < 0 else f"exited with status {status}")
    return CallgrindError(f"the collector child {how}. Last lines of its stderr:\n{stderr}")
