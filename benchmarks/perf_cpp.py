"""C++ snippets, side by side in one run: first and second compile of the seed `x * y` Timer
(benchkit vs torch.utils.benchmark's C++ Timer, both with empty caches), and collect_callgrind
of it. Writes results/perf_cpp.json.

    .venv/bin/python benchmarks/perf_cpp.py      (about 3 minutes; torch's C++ Timer needs ninja)
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "results" / "perf_cpp.json"
STMT = "x * y;"
SETUP = "auto x = torch::ones({128});\nauto y = torch::ones({128});"


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


NEW_PROCESS = """
import sys, time
start = time.perf_counter()
if sys.argv[1] == "benchkit":
    from benchkit import Timer
else:
    from torch.utils.benchmark import Timer
Timer({stmt!r}, {setup!r}, language="cpp").timeit(1)
print(time.perf_counter() - start)
"""


def _in_new_process(name: str) -> float:
    """Seconds for the same snippet in a fresh interpreter (the caches on disk kept)."""
    import subprocess
    code = NEW_PROCESS.format(stmt=STMT, setup=SETUP)
    out = subprocess.run([sys.executable, "-c", code, name], capture_output=True, text=True,
                         check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    caches = Path(tempfile.mkdtemp(prefix="perf-cpp-"))
    # Empty caches for both: benchkit's (~/.cache/benchkit/cpp) and torch's extensions dir.
    os.environ["XDG_CACHE_HOME"] = str(caches / "benchkit")
    os.environ["TORCH_EXTENSIONS_DIR"] = str(caches / "torch")
    os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]
    import benchkit
    from benchkit.system import machine
    from benchkit.system.files import atomic_write_bytes
    from torch.utils.benchmark import Timer as TorchTimer

    figures: dict = {"environment": machine.collect(str(ROOT)),
                     "snippet": {"stmt": STMT, "setup": SETUP}}
    try:
        compile_times = {}
        for name, make in (("benchkit", lambda: benchkit.Timer(STMT, SETUP, language="cpp")),
                           ("torch.utils.benchmark",
                            lambda: TorchTimer(STMT, SETUP, language="cpp"))):
            _, first = timed(lambda: make().timeit(1))
            _, second = timed(lambda: make().timeit(1))
            new_process = _in_new_process(name)
            compile_times[name] = {"first_s": first, "second_s": second,
                                   "new_process_s": new_process}
            print(f"{name}: first compile + 1 run {first:.1f} s, second {second:.2f} s, "
                  f"in a new process {new_process:.1f} s", flush=True)
        figures["compile"] = compile_times
        figures["compile"]["ratio_first"] = (compile_times["benchkit"]["first_s"] /
                                             compile_times["torch.utils.benchmark"]["first_s"])
        if shutil.which("valgrind"):
            stats, ours = timed(lambda: benchkit.Timer(STMT, SETUP, language="cpp")
                                .collect_callgrind(number=100))
            _, ours_again = timed(lambda: benchkit.Timer(STMT, SETUP, language="cpp")
                                  .collect_callgrind(number=100))
            theirs_stats, theirs = timed(lambda: TorchTimer(STMT, SETUP, language="cpp")
                                         .collect_callgrind(number=100))
            figures["collect_callgrind"] = {
                "benchkit_s": ours, "benchkit_second_s": ours_again,
                "torch_utils_benchmark_s": theirs, "ratio": ours / theirs,
                "benchkit_instructions": stats.counts(denoise=False),
                "torch_instructions": theirs_stats.counts(denoise=False)}
            print(f"collect_callgrind: benchkit {ours:.1f} s (the timed build, cached), "
                  f"again {ours_again:.1f} s; torch {theirs:.1f} s", flush=True)
    finally:
        shutil.rmtree(caches, ignore_errors=True)
    atomic_write_bytes(OUT, (json.dumps(figures, indent=1) + "\n").encode())
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
