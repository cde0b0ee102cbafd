"""A project's `asv.conf.json`, as far as benchkit follows it: where the benchmarks are
(`benchmark_dir`), which repository (`repo`, when it is a local checkout) and which branches
(`branches`) `benchkit history run` measures, and where `benchkit run --format asv` writes
(`results_dir`). Everything else asv reads there (the
environment matrix, its build and install commands, its site's settings) is named as not
followed, never silently ignored: benchkit installs each revision with its own `--install`
command and measures in that environment."""
from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

from benchkit.errors import SuiteError

NAME = "asv.conf.json"
# asv's configs are a few kilobytes: a bigger file is not one
LIMIT = 1 << 20
FOLLOWED = {"version", "project", "repo", "branches", "benchmark_dir", "dvcs", "results_dir"}


@dataclasses.dataclass(frozen=True)
class AsvConfig:
    """What benchkit takes from an asv.conf.json. `repo` is None when the file names no
    local checkout (a URL, or nothing): the checkout benchkit runs in is used."""

    path: Path
    benchmark_dir: Path
    repo: Path | None
    branches: tuple[str, ...]
    not_followed: tuple[str, ...]      # keys present that benchkit does not follow
    results_dir: Path | None = None    # where `run --format asv` writes (asv's default)

    def note(self) -> str:
        """One line on what was taken from the file and what was not."""
        taken = f"benchmarks from {self.benchmark_dir}"
        if self.repo is not None:
            taken += f", repository {self.repo}"
        if self.branches:
            taken += f", branches {', '.join(self.branches)}"
        left = (f"; not followed: {', '.join(self.not_followed)} (benchkit installs each "
                "revision with --install and measures in that environment)"
                if self.not_followed else "")
        return f"{self.path}: {taken}{left}"


def read_asv_config(directory: Path) -> AsvConfig | None:
    """The asv.conf.json in `directory`, or None when there is none. asv's files may hold
    `//` comment lines. A file that is not asv's JSON is a SuiteError naming it."""
    path = directory / NAME
    if not path.is_file():
        return None
    from benchkit.system.reading import read_bounded
    try:
        raw = read_bounded(path, lambda problem: SuiteError(problem), limit=LIMIT)
        settings = json.loads(re.sub(r"(?m)^\s*//.*$", "", raw.decode("utf-8")))
    except (OSError, ValueError, RecursionError) as error:
        raise SuiteError(f"{path}: not readable as asv's JSON ({error}); pass the "
                         "benchmark directory as PATH") from None
    if not isinstance(settings, dict):
        raise SuiteError(f"{path}: not a JSON object; pass the benchmark directory as PATH")

    def strings(key: str, default: list) -> list:
        value = settings.get(key, default)
        value = [value] if isinstance(value, str) else value
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise SuiteError(f"{path}: {key} is not a name or a list of names; fix it or "
                             "pass the option on the command line")
        return value
    (benchmark_dir,) = strings("benchmark_dir", ["benchmarks"])[:1] or ["benchmarks"]
    if settings.get("dvcs", "git") != "git":
        raise SuiteError(f"{path}: dvcs {settings.get('dvcs')!r}: benchkit's history runs "
                         "on git repositories only")
    (repo,) = strings("repo", ["."])[:1] or ["."]
    local = None if re.match(r"^[\w+.-]+://|^[\w.-]+@", repo) else directory / repo
    (results_dir,) = strings("results_dir", ["results"])[:1] or ["results"]
    return AsvConfig(path, directory / benchmark_dir, local,
                     tuple(strings("branches", [])),
                     tuple(sorted(k for k in settings if k not in FOLLOWED)),
                     directory / results_dir)
