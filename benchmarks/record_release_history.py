"""Record a real project's history release by release, in asv's results format (version 2).

A project's own asv suite is run with `benchkit run` against each of its released versions
from the package index, oldest first, in one scratch environment where only that package is
reinstalled between runs. Each release is one "commit": its id is the SHA-1 of
`PACKAGE==VERSION` (there is no repository here), its date the release's upload time (a
minute after the release before it where an older line's bug-fix came later). The
series carry the project's real performance changes between releases and this machine's
noise, so benchmarks/perf_history_detection.py can take their real steps out and inject
known ones, as it does with other projects' asv results.

    python benchmarks/record_release_history.py OUT_DIR --package numpy \\
        --suite numpy-2.3.5/benchmarks/benchmarks --python VENV/bin/python \\
        -k "bench_core.Core or bench_core.Temporaries" --since 1.24.0

VENV is a virtual environment with benchkit (and asv_runner) installed; the suite is the
project's asv benchmark directory, e.g. from its source archive on the package index: each
release's own (`--suite-in-sdist benchmarks/benchmarks`), or one release's for all
(`--suite-from VERSION` as well).
OUT_DIR gets asv's layout: benchmarks.json, MACHINE/machine.json, MACHINE/SHA-ENV.json. A
release already in OUT_DIR is not measured again, so a stopped recording goes on.
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import math
import platform
import re
import subprocess
import sys
import tarfile
import tempfile
import urllib.parse
import urllib.request
from pathlib import Path

FINAL = re.compile(r"\d+(\.\d+)*")      # 2.3.5, not 2.4.0rc1
# with --pre also a release candidate, beta, alpha or development snapshot: 0.26.0rc1, 0.20.0.dev0
PRE = re.compile(r"(\d+(?:\.\d+)*)(?:(a|b|rc)(\d+)|\.dev(\d+))?")
PHASES = {"a": 1, "b": 2, "rc": 3}      # .dev is 0, a final release 4
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
SIMPLE = "https://pypi.org/pypi/"         # the JSON's file URLs may be relative to it


def release_files(package: str) -> dict[str, list[dict]]:
    """Each release's files, as the package index's JSON lists them."""
    with urllib.request.urlopen(f"https://pypi.org/pypi/{package}/json", timeout=60) as r:
        return json.load(r)["releases"]


def version_key(version: str) -> tuple:
    """A version's place in release order (PEP 440 for the forms PRE takes): 0.20.0.dev0 <
    0.20.0rc3 < 0.20.0 = 0.20 < 0.20.1."""
    match = PRE.fullmatch(version)
    if match is None:
        raise ValueError(f"{version!r}: not a version this script orders")
    release = [int(x) for x in match[1].split(".")]
    while len(release) > 1 and release[-1] == 0:
        release.pop()
    phase = (PHASES[match[2]], int(match[3])) if match[2] else (
        (0, int(match[4])) if match[4] is not None else (4, 0))
    return (tuple(release), *phase)


def releases(files_of: dict[str, list[dict]], since: str | None, pre: bool = False
             ) -> list[tuple[str, str, str | None]]:
    """(version, upload time, source archive URL) of every final release (with `pre`, every
    pre-release too) with a wheel for this interpreter on this platform (or a pure-Python
    one), oldest first."""
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    out = []
    for version, files in files_of.items():
        wheels = [f for f in files if not f.get("yanked") and (
            f["filename"].endswith("-py3-none-any.whl") or (   # a pure-Python package
                f["filename"].endswith(".whl") and f"-{tag}-" in f["filename"]
                and "manylinux" in f["filename"] and platform.machine() in f["filename"]))]
        if (FINAL if not pre else PRE).fullmatch(version) and wheels:
            out.append((version, min(f["upload_time_iso_8601"] for f in wheels),
                        sdist_of(files)))
    out.sort(key=lambda item: version_key(item[0]))
    return [item for item in out if since is None or version_key(item[0]) >= version_key(since)]


def sdist_of(files: list[dict]) -> str | None:
    """The URL of a release's source archive, if it has one."""
    sdists = [f["url"] for f in files if f["packagetype"] == "sdist"]
    return urllib.parse.urljoin(SIMPLE, sdists[0]) if sdists else None


def suite_of(url: str, inner: str, into: Path) -> Path:
    """`inner` (e.g. benchmarks/benchmarks) of the release's source archive, extracted."""
    archive = into / "sdist.tar.gz"
    with urllib.request.urlopen(url, timeout=300) as r:
        archive.write_bytes(r.read())
    with tarfile.open(archive) as tar:
        top = tar.getnames()[0].split("/")[0]
        members = [m for m in tar.getmembers() if m.name.startswith(f"{top}/{inner}/")]
        tar.extractall(into, members=members, filter="data")
    archive.unlink()
    return into / top / inner


def millis(iso: str) -> int:
    return int(datetime.datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="asv results directory to write")
    parser.add_argument("--package", required=True)
    suite = parser.add_mutually_exclusive_group(required=True)
    suite.add_argument("--suite", type=Path, help="the asv benchmark directory (one for all)")
    suite.add_argument("--suite-in-sdist", metavar="INNER",
                       help="each release's own suite: this directory of its source archive "
                            "(e.g. benchmarks/benchmarks)")
    parser.add_argument("--suite-from", metavar="VERSION",
                        help="with --suite-in-sdist: that one release's suite, for every release")
    parser.add_argument("--python", required=True,
                        help="interpreter of the scratch environment (benchkit installed)")
    parser.add_argument("-k", default=None, help="benchkit's -k: which benchmarks")
    parser.add_argument("--since", default=None, help="first version (default: all)")
    parser.add_argument("--pre", action="store_true",
                        help="release candidates, betas, alphas and development snapshots too: "
                             "each a snapshot of the development branch between releases")
    parser.add_argument("--processes", type=int, default=5)
    parser.add_argument("--min-run-time", type=float, default=0.05)
    parser.add_argument("--timeout", type=float, default=None,
                        help="benchkit's --timeout: seconds a benchmark may take in one process")
    parser.add_argument("--machine", default=platform.node() or "machine")
    args = parser.parse_args()
    if args.suite_from and not args.suite_in_sdist:
        parser.error("--suite-from needs --suite-in-sdist (the directory in the archive)")
    # names and versions go into the index's URLs and a path: nothing but what a name holds
    for option, name in (("--package", args.package), ("--machine", args.machine)):
        if not NAME.fullmatch(name):
            parser.error(f"{option} {name!r}: not a name (letters, digits, . _ -)")
    for option, version, form in (("--since", args.since, PRE if args.pre else FINAL),
                                  ("--suite-from", args.suite_from, FINAL)):
        if version is not None and not form.fullmatch(version):
            parser.error(f"{option} {version!r}: give a {'' if form is PRE else 'final '}"
                         "release's version, e.g. 1.15.3")
    if args.timeout is not None and not 0 < args.timeout < math.inf:
        parser.error(f"--timeout {args.timeout:g}: give a positive number of seconds")
    # the runs start in a scratch directory: a relative path (the Makefile's) must not
    # be read from there; absolute() keeps the venv's own name (resolve() would not)
    args.python = str(Path(args.python).absolute())

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from benchkit.core.history.asv import to_asv
    from benchkit.system.results_files import load

    python = ".".join(platform.python_version_tuple()[:2])
    env_name = f"release-{args.package}-py{python}"
    files_of = release_files(args.package)
    if args.suite_from:
        url = sdist_of(files_of.get(args.suite_from, []))
        if url is None:
            parser.error(f"--suite-from {args.suite_from}: {args.package} has no such release "
                         "with a source archive on the package index")
        held = tempfile.TemporaryDirectory()      # its suite, for the whole run
        args.suite = suite_of(url, args.suite_in_sdist.strip("/"), Path(held.name))
        args.suite_in_sdist = None
    todo = releases(files_of, args.since, args.pre)
    if not todo:
        parser.error(f"{args.package}: no {'' if args.pre else 'final '}release since "
                     f"{args.since} has a wheel for this interpreter and platform")
    folder = args.out / args.machine
    folder.mkdir(parents=True, exist_ok=True)
    benchmarks = {"version": 2}
    if (args.out / "benchmarks.json").exists():
        benchmarks = json.loads((args.out / "benchmarks.json").read_text())
    print(f"{len(todo)} releases of {args.package}: {todo[0][0]} .. {todo[-1][0]}", flush=True)
    # the history's order is the versions' order: a bug-fix release of an older line
    # (1.24.4, after 1.25.0 by date) is dated a minute after the release before it
    dates, last = [], 0
    for _, uploaded, _ in todo:
        last = max(millis(uploaded), last + 60_000)
        dates.append(last)
    for (version, uploaded, sdist), date in zip(todo, dates):
        commit = hashlib.sha1(f"{args.package}=={version}".encode()).hexdigest()
        done = list(folder.glob(f"{commit[:8]}-*.json"))
        for path in done:
            run = json.loads(path.read_text())
            if run.get("date") != date:
                run["date"] = date
                path.write_text(json.dumps(run, indent=1))
        if done:
            continue
        subprocess.run([args.python, "-m", "pip", "install", "-q", "--no-deps",
                        f"{args.package}=={version}"], check=True)
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "run.json"
            if args.suite_in_sdist and sdist is None:
                print(f"{version}: no source archive", flush=True)
                continue
            suite = (args.suite.resolve() if args.suite else
                     suite_of(sdist, args.suite_in_sdist.strip("/"), Path(tmp)))
            command = [args.python, "-m", "benchkit", "run", str(suite),
                       "--processes", str(args.processes),
                       "--min-run-time", str(args.min_run_time), "-o", str(out)]
            if args.k:
                command[4:4] = ["-k", args.k]
            if args.timeout:
                command[4:4] = ["--timeout", str(args.timeout)]
            done = subprocess.run(command, cwd=tmp, capture_output=True, text=True)
            if not out.exists():
                print(f"{version}: no results ({done.stderr.strip()[-300:]})", flush=True)
                continue
            results = load(out)
        export = to_asv(results, commit=commit, commit_date_ms=date,
                        started_ms=millis(uploaded), machine=args.machine, env_name=env_name)
        if not (folder / "machine.json").exists():
            (folder / "machine.json").write_text(json.dumps(export.machine_json, indent=1))
        (folder / export.file_name).write_text(json.dumps(export.run, indent=1))
        benchmarks.update({k: v for k, v in export.benchmarks.items() if k not in benchmarks})
        (args.out / "benchmarks.json").write_text(json.dumps(benchmarks, indent=1))
        print(f"{version} ({uploaded[:10]}): {len(results.measurements)} measured, "
              f"{len(results.failures)} failed", flush=True)


if __name__ == "__main__":
    main()
