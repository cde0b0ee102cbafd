"""How much do instruction counts depend on where and how benchkit is installed?

Collects the same snippets from three copies of benchkit at paths of different lengths, each
first as a fresh install (no bytecode caches anywhere: the child gets an empty
PYTHONPYCACHEPREFIX, as after a fresh virtualenv) and then again, with benchkit's source-level
fixes switched on one by one; then the band of `layouts=4` from each copy, with and without
the last fix. Writes results/perf_layouts.json.

    .venv/bin/python benchmarks/perf_layouts.py        (about 20 minutes)
"""
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from benchkit.system import machine
from benchkit.system.files import atomic_write_bytes

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "results" / "perf_layouts.json"
SNIPPETS = {
    "torch x * y": ("x * y", "x = torch.ones((128,)); y = torch.ones((128,))"),
    "python sum(range(100))": ("sum(range(100))", "pass"),
    "numpy a.sum()": ("a.sum()", "import numpy as np; a = np.ones(1000)"),
}
CONFIGS = {   # benchkit.core.callgrind.requests.CollectorControls
    "no source fixes": {"fixed_paths": False, "prewarm": False, "own_thread": False},
    "+ fixed child path and benchkit link": {"fixed_paths": True, "prewarm": False,
                                             "own_thread": False},
    "+ bytecode caches warmed first": {"fixed_paths": True, "prewarm": True,
                                       "own_thread": False},
    "+ measured in its own thread and malloc arena (default)": {
        "fixed_paths": True, "prewarm": True, "own_thread": True},
}
CHILD = """
import json, sys
import benchkit
from benchkit.core.callgrind.requests import CallgrindOptions, CollectorControls, CountRequest
from benchkit.orchestration import counting
config, stmt, setup, layouts, pycache = json.loads(sys.argv[1])
controls = CollectorControls(**config, child_environment=(("PYTHONPYCACHEPREFIX", pycache),))
options = CallgrindOptions(layouts=layouts, jobs=1, controls=controls)
task = benchkit.Timer(stmt, setup).task()
(s,), = counting.collect([CountRequest(task, number=100)], options)
print(json.dumps(s.metadata.get("layouts", {}).get("per_run") or [s.per_run()]))
"""


def collect(install: Path, config: dict, snippet: tuple[str, str], layouts: int = 1):
    out = subprocess.run([sys.executable, "-c", CHILD,
                          json.dumps([config, *snippet, layouts, str(install / "pycache")])],
                         env={"PYTHONPATH": str(install), "PATH": "/usr/bin:/bin"},
                         capture_output=True, text=True, cwd=install, check=True)
    return json.loads(out.stdout)


def fresh_copy(target: Path) -> Path:
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    shutil.copytree(ROOT / "benchkit", target / "benchkit",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return target


def main():
    figures = {"environment": machine.collect(str(ROOT)), "configs": {}, "layouts": {}}
    with tempfile.TemporaryDirectory() as tmp:
        installs = [Path(tmp) / "a", Path(tmp) / "a-longer-install-path",
                    Path(tmp) / "a-much-longer-install-path-of-benchkit-here"]
        for config_name, config in CONFIGS.items():
            rows = {}
            for label, snippet in SNIPPETS.items():
                values = []
                for install in installs:
                    fresh_copy(install)
                    values.append(collect(install, config, snippet)[0])   # fresh install
                    values.append(collect(install, config, snippet)[0])   # caches written
                spread = (max(values) - min(values)) / min(values)
                rows[label] = {"per_run": values, "distinct": len(set(values)),
                               "relative_spread": spread}
                print(f"{config_name:56s} {label:24s} {values} spread {spread:.3%}",
                      flush=True)
            figures["configs"][config_name] = rows
        for own_thread in (False, True):
            key = "default" if own_thread else "without own thread and malloc arena"
            figures["layouts"][key] = {}
            for label, snippet in SNIPPETS.items():
                bands = [collect(fresh_copy(install), {"OWN_THREAD": own_thread}, snippet,
                                 layouts=4) for install in installs]
                overlap = max(min(b) for b in bands) <= min(max(b) for b in bands)
                width = max(max(b) - min(b) for b in bands) / min(min(b) for b in bands)
                figures["layouts"][key][label] = {"bands": bands, "overlap": overlap,
                                                  "widest_band": width}
                print(f"layouts=4 {key:36s} {label:24s} bands {bands} overlap {overlap} "
                      f"widest {width:.3%}", flush=True)
    figures["note"] = ("per_run: instructions per run (baseline subtracted) of layout 0, for "
                       "each install in turn: fresh (no bytecode caches), then again")
    atomic_write_bytes(OUT, (json.dumps(figures, indent=1) + "\n").encode())
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
