"""Which torch versions benchkit works with: for each version, a fresh virtualenv with that
torch and benchkit (`pip install '.[test,torch]'`, the torch pin replaced), then the tests that
exercise torch (parity with torch.utils.benchmark, Timer, counts of torch snippets, the seed
tour, profiles) and the seed-003 tour script.

    python benchmarks/compat_torch.py 2.13.0 2.14.1 "2.1.2,numpy<2"

A version may carry more requirements after commas (torch before 2.3 was built against
NumPy 1 and needs `numpy<2` beside it).

Heavy: a torch other than this machine's local wheel comes from the index with several GB of
CUDA libraries (they import and run on the CPU). Writes results/compat_torch.json; the README
table quotes it.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = ["tests/test_torch_parity.py", "tests/test_timer.py", "tests/test_seed003.py",
         "tests/test_function_counts.py", "tests/test_pickles.py", "tests/test_profile.py",
         "tests/test_fuzzer.py", "tests/test_callgrind_e2e.py"]


def _run(args, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True, **kwargs)


def check(spec: str) -> dict:
    version, *extra = spec.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        env = Path(tmp) / "venv"
        python = str(env / "bin" / "python")
        _run([sys.executable, "-m", "venv", str(env)], check=True)
        start = time.perf_counter()
        installed = _run([python, "-m", "pip", "install", "--quiet", f"torch=={version}",
                          *extra, f"{ROOT}[test,torch]"])
        install_seconds = time.perf_counter() - start
        if installed.returncode != 0:
            return {"torch": version, "installed": False,
                    "error": installed.stderr.strip().splitlines()[-1:]}
        got = _run([python, "-c", "import torch; print(torch.__version__)"]).stdout.strip()
        tests = _run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *TESTS],
                     cwd=ROOT)
        tail = tests.stdout.strip().splitlines()[-1] if tests.stdout.strip() else ""
        counts = {k: int(n) for n, k in re.findall(r"(\d+) (passed|failed|skipped|error)",
                                                   tail)}
        failed = [line.split(" ")[1] for line in tests.stdout.splitlines()
                  if line.startswith(("FAILED ", "ERROR "))]
        tour = _run([python, "benchmarks/tour_seed003.py"], cwd=ROOT)
        return {"torch": version, "with": extra, "installed": True, "torch_imported": got,
                "install_seconds": round(install_seconds), "tests": counts,
                "failed": failed, "tour_ok": tour.returncode == 0,
                "tour_error": tour.stderr.strip().splitlines()[-1:] if tour.returncode else []}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("versions", nargs="+")
    args = parser.parse_args()
    out = ROOT / "results" / "compat_torch.json"
    found = json.loads(out.read_text()) if out.exists() else {}
    for version in args.versions:
        found[version] = check(version)
        print(json.dumps(found[version], indent=1), flush=True)
    out.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
