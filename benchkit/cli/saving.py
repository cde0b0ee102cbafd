"""What the measuring commands share: results-file names, saving (with a fallback and
default names that never collide), partial saves when a run stops early, progress bars."""
from __future__ import annotations

import contextlib
import dataclasses
import datetime
import sys
from pathlib import Path
from typing import Iterator

from benchkit.cli.exit_codes import Outcome
from benchkit.core.records.records import Failure, FailureKind
from benchkit.core.text import one_line
from benchkit.errors import BenchkitError, Terminated


def default_output(kind: str) -> Path:
    """results/<kind>-<time>.json: saved exclusively (another run of the same second gets
    -2, -3, ...)."""
    return Path(f"results/{kind}-{datetime.datetime.now():%Y%m%d-%H%M%S}.json")


def partial_path(output: Path) -> Path:
    """Where a run that stopped early saves what it measured: FILE.partial.json."""
    return output.with_name(output.name.replace(".json", ".partial.json", 1))


@dataclasses.dataclass(frozen=True)
class Saved:
    """Where results went: `path`, and whether that is where they were asked to go (a
    fallback into the temp directory is not, and the command then exits 2)."""

    path: Path
    where_asked: bool = True


def save(path: Path, results, what: str, exclusive: bool = False) -> Saved:
    """Save results and say where (to stderr); into the temp directory if `path` fails."""
    from benchkit.system.results_files import save_with_fallback
    written, problem = save_with_fallback(path, results, exclusive=exclusive)
    if problem:
        print(f"could not write {one_line(problem)}; saved {what} to {one_line(written)} "
              "instead (exit status 2)", file=sys.stderr)
    else:
        print(f"wrote {one_line(written)}", file=sys.stderr)
    return Saved(written, not problem)


def lock_path(path: Path) -> Path:
    """Where the lock of an output file lives: in the temp directory, named by the file's
    absolute path (nothing is added to the user's folder)."""
    import hashlib
    import tempfile
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:32]
    return Path(tempfile.gettempdir()) / "benchkit-locks" / f"{digest}.lock"


@contextlib.contextmanager
def output_lock(path: Path) -> Iterator[None]:
    """Held while a command measures into `path` (-o): a second command naming the same
    file fails at once, before it measures, instead of one silently losing the other's
    results. The lock is an flock (released by the kernel if the process dies) on
    lock_path(path), removed when done."""
    import fcntl
    lock = lock_path(path)
    try:
        lock.parent.mkdir(parents=True, exist_ok=True)
        handle = open(lock, "a+b")
    except OSError:
        yield           # no lock where none can be made: the run goes on as before
        return
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise BenchkitError(f"-o {path}: another benchkit command is writing it now; "
                                "wait for it to finish or choose another -o") from None
        try:
            yield
        finally:
            with contextlib.suppress(OSError):
                lock.unlink()
    finally:
        handle.close()


def outcome(saved: Saved) -> Outcome:
    """NOT_SAVED when the results were not written where the user asked, else OK."""
    return Outcome.OK if saved.where_asked else Outcome.NOT_SAVED


def why_stopped(stop: BaseException, phase: str) -> str:
    """Why a run stopped early (Ctrl-C, SIGTERM or an error), as the results file says."""
    if isinstance(stop, KeyboardInterrupt):
        signal = "SIGTERM" if isinstance(stop, Terminated) else "SIGINT"
        return f"interrupted ({signal}) during {phase}"
    first = (str(stop).strip().splitlines() or [type(stop).__name__])[0]
    return f"stopped by an error during {phase}: {first[:300]}"


def report_failures(failures: list[Failure], *, json_output: bool = False) -> None:
    """Print the benchmarks that failed, one line each: on stdout beside a report, on
    stderr when stdout holds a JSON document (--json), which must stay exactly one."""
    stream = sys.stderr if json_output else sys.stdout
    for failure in failures:
        word = "SKIPPED" if failure.kind is FailureKind.SKIPPED else "FAILED"
        print(f"{word} {one_line(failure.summary())}", file=stream)
    failed = real_failures(failures)
    if failed:
        print(f"{len(failed)} benchmark(s) failed; the others were measured and saved",
              file=stream)


def real_failures(failures: list[Failure]) -> list[Failure]:
    """The failures that fail a run: all but the benchmarks their suite skips."""
    return [f for f in failures if f.kind is not FailureKind.SKIPPED]


def progress(desc: str):
    """A tqdm bar on stderr on a terminal; elsewhere (a CI log, a pipe) one line when the
    phase ends, never frames."""
    if not sys.stderr.isatty():
        return PhaseLine(desc)
    from tqdm import tqdm
    return tqdm(desc=desc, total=0, unit="step", file=sys.stderr, leave=False)


class PhaseLine:
    """The progress of a phase where no bar can be drawn: `desc: N steps in S s` on stderr
    when it closes (with the last status, e.g. `2 open`)."""

    def __init__(self, desc: str):
        import time
        self.desc, self.total, self.n, self.status = desc, 0, 0, ""
        self._clock = time.monotonic
        self._started, self._closed = self._clock(), False

    def update(self, n: int = 1) -> None:
        """Count n more steps (tqdm's update)."""
        self.n += n

    def refresh(self) -> None:
        """Nothing to redraw (tqdm's refresh)."""

    def set_postfix_str(self, status: str) -> None:
        """The status the closing line ends with (tqdm's set_postfix_str)."""
        self.status = status

    def close(self) -> None:
        """Print the phase's line, once, if it counted any step."""
        if self._closed or not self.n:
            self._closed = True
            return
        self._closed = True
        status = f", {self.status}" if self.status else ""
        print(f"{self.desc}: {self.n} step{'s' if self.n != 1 else ''} in "
              f"{self._clock() - self._started:.1f} s{status}", file=sys.stderr, flush=True)


def first_failure_per_benchmark(failures: list[Failure]) -> list[Failure]:
    """One failure per benchmark (the first), in order."""
    seen: dict[str, Failure] = {}
    for failure in failures:
        seen.setdefault(failure.benchmark, failure)
    return list(seen.values())
