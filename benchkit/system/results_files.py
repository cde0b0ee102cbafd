"""Save and load results files (.json or .json.gz) atomically."""
from __future__ import annotations

import dataclasses
import functools
import gzip
import hashlib
import importlib.resources
import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any, Iterable

from benchkit.errors import ResultsFileError, SchemaError
from benchkit.system.reading import READ_LIMIT_ENV, read_bounded, read_limit
from benchkit.system import machine
from benchkit.system.files import atomic_write_bytes
from benchkit.core.records import schema
from benchkit.core.records.schema import Results


def _is_gzip(path: Path) -> bool:
    return path.name.endswith(".gz")


def _as_results(results: Results | Iterable[Any], environment: dict[str, Any] | None) -> Results:
    from benchkit.core.measure.measurement import Measurement
    if isinstance(results, Results):
        out = dataclasses.replace(results, measurements=list(results.measurements),
                                  callgrind=list(results.callgrind),
                                  memory=list(results.memory),
                                  environment=dict(results.environment),
                                  extra=dict(results.extra), failures=list(results.failures))
    else:
        items = [results] if isinstance(results, Measurement) else list(results)
        out = Results()
        for item in items:
            if isinstance(item, Measurement):
                out.measurements.append(item)
            elif type(item).__name__ == "CallgrindStats":
                out.callgrind.append(item)
            elif type(item).__name__ == "MemoryStats":
                out.memory.append(item)
            else:
                raise ResultsFileError("<results>", f"cannot save {type(item).__name__}; "
                                       "results files hold Measurements, CallgrindStats and "
                                       "MemoryStats")
    if environment is not None:
        out.environment = environment
    elif not out.environment:
        out.environment = machine.collect()
    return out


def save(path: str | os.PathLike, results: Results | Iterable[Any],
         environment: dict[str, Any] | None = None, *, exclusive: bool = False) -> Path:
    """Write Measurements / CallgrindStats / MemoryStats and an environment fingerprint to
    `path`.

    `.json.gz` is compressed. The write is atomic. With `exclusive`, an existing file is
    never replaced: the next free `NAME-N.json` is written. Returns the path written.
    """
    path = Path(path)
    try:
        doc = schema.to_document(_as_results(results, environment))
        data = json.dumps(doc, indent=1, allow_nan=False).encode("utf-8")
    except schema.SchemaError as error:
        raise ResultsFileError(path, str(error)) from None
    except ValueError as error:     # NaN or infinity in metadata
        raise ResultsFileError(path, f"cannot be written: {error}; keep metadata to finite "
                               "numbers") from None
    if _is_gzip(path):
        data = gzip.compress(data, mtime=0)
    return atomic_write_bytes(path, data, exclusive=exclusive)


# Memory a parsed JSON value takes per value, at most (a small dict in a list): a file is
# refused when its values could take more than the read limit to hold.
BYTES_PER_VALUE = 80


def parse_estimate(raw: bytes) -> int:
    """An upper estimate of the memory json.loads needs for `raw`: the text, once decoded,
    and every value it can hold (values are separated by commas and colons, or open a
    container)."""
    values = 1 + sum(raw.count(c) for c in (b",", b":", b"[", b"{"))
    return 2 * len(raw) + BYTES_PER_VALUE * values


def load(path: str | os.PathLike) -> Results:
    """Read a results file written by `save` (any older format version is migrated).
    Only a regular file is read, at most BENCHKIT_READ_LIMIT bytes (inflated), and only if
    parsing it fits in that much memory; numbers must be finite."""
    return load_with_digest(path)[0]


def load_with_digest(path: str | os.PathLike) -> tuple[Results, str]:
    """`load`, and the SHA-256 of the file's (inflated) content, from one read."""
    path = Path(path)
    raw = read_bounded(path, lambda problem: ResultsFileError(path, problem))
    return _parse(path, raw), hashlib.sha256(raw).hexdigest()


def _parse(path: Path, raw: bytes) -> Results:
    def fail(problem: str) -> ResultsFileError:
        return ResultsFileError(path, problem)
    limit = read_limit()
    if parse_estimate(raw) > limit:
        raise fail(f"would take about {parse_estimate(raw):,} bytes of memory to load, more "
                   f"than the {limit:,} benchkit allows; set {READ_LIMIT_ENV} (e.g. "
                   f"{READ_LIMIT_ENV}=4G) to load it")
    try:
        doc = json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant,
                         parse_float=_finite_float)
    except UnicodeDecodeError:
        raise fail("is not a text JSON file (binary content); pass a .json or .json.gz "
                   "results file") from None
    except json.JSONDecodeError as error:
        raise fail(f"is not valid JSON (line {error.lineno}, column {error.colno}: "
                   f"{error.msg}); the file is truncated or corrupt — re-run the benchmark to "
                   "write it again") from None
    except ValueError as error:
        raise fail(str(error)[:300]) from None
    except RecursionError:
        raise fail("is nested too deeply to be a results file") from None
    except MemoryError:
        raise fail(f"does not fit in memory ({len(raw):,} bytes of JSON); set "
                   f"{READ_LIMIT_ENV} lower to refuse such files early") from None
    try:
        return schema.from_document(doc, results_validator())
    except schema.SchemaError as error:
        raise fail(f"{error} (see the results format in the README; "
                   "schema: benchkit/core/records/results.schema.json)") from None
    except RecursionError:
        raise fail("is nested too deeply to be a results file") from None


def _refuse_constant(name: str):
    raise ValueError(f"holds {name}, which is not a number a results file can have")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"holds {text[:40]}, a number too large for a results file")
    return value


@functools.lru_cache(maxsize=None)
def results_validator():
    """A jsonschema validator of the shipped results.schema.json."""
    import jsonschema
    text = importlib.resources.files("benchkit.core.records").joinpath(
        "results.schema.json").read_text(encoding="utf-8")
    document = json.loads(text)
    return jsonschema.Draft202012Validator(document)


def stored_item(version: int, blob: Any, key: str, limit: int) -> Results:
    """One item kept compressed in a history database (its results-file JSON under `key`,
    written in results format `version`), inflated to at most `limit` bytes and checked
    against the results schema; ValueError says what is wrong with it."""
    import zlib
    if not isinstance(blob, bytes):
        raise ValueError("not a compressed item")
    inflater = zlib.decompressobj()
    try:
        raw = inflater.decompress(blob, limit)
    except zlib.error as error:
        raise ValueError(str(error)) from None
    if inflater.unconsumed_tail:
        raise ValueError(f"inflates beyond {limit >> 20} MiB")
    try:
        item = json.loads(raw)
        doc = {"format": schema.FORMAT_NAME, "version": version, key: [item]}
        return schema.from_document(doc, results_validator())
    except (ValueError, RecursionError, SchemaError) as error:
        raise ValueError(str(error)) from None


MERGED_ITEMS = "merged_items"


def merge(results: Iterable[Results]) -> Results:
    """Concatenate several results (e.g. runs on several machines) into one. The merged
    environment keeps each part's fingerprint (`merged`) and how many measurements,
    CallgrindStats and MemoryStats came from it (`merged_items`, in order), so that what ran
    on two machines stays apart (`benchkit history add` files each part under its own)."""
    out = Results()
    envs = []
    counts = []
    partial = []
    for r in results:
        counts.append([len(r.measurements), len(r.callgrind), len(r.memory)])
        out.measurements += r.measurements
        out.callgrind += r.callgrind
        out.memory += r.memory
        out.failures += r.failures
        out.extra.update(r.extra)
        envs.append(r.environment)
        if r.partial:
            partial.append(r.partial)
    out.environment = envs[0] if len(envs) == 1 else {"merged": envs, MERGED_ITEMS: counts}
    out.partial = "; ".join(partial) or None
    return out


def check_writable(path: str | os.PathLike) -> Path:
    """Raise ResultsFileError now if `path` cannot become a results file (before any
    measuring): it is a directory, or its folder cannot be created or written."""
    path = Path(path)
    try:
        is_dir = path.is_dir()
    except OSError as error:            # a name too long, a loop of links, ...
        raise ResultsFileError(path, f"{error.strerror or error}; choose another output "
                               "path") from None
    if is_dir:
        raise ResultsFileError(path, "is a directory; pass a file name such as "
                               f"{path / 'results.json'}")
    if not (path.name.endswith(".json") or path.name.endswith(".json.gz")):
        raise ResultsFileError(path, "results files end in .json or .json.gz; rename it")
    parent = path.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise ResultsFileError(path, f"{parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ResultsFileError(path, f"cannot write into {parent} (permission denied); "
                               "choose another output path")
    return path


def save_with_fallback(path: str | os.PathLike, results: Results | Iterable[Any], *,
                       exclusive: bool = False) -> tuple[Path, str | None]:
    """save(), and if writing fails, save into the temp directory instead.

    Returns (the path written, the reason the first path failed or None)."""
    try:
        return save(path, results, exclusive=exclusive), None
    except (OSError, ResultsFileError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        fd, fallback = tempfile.mkstemp(prefix="benchkit-unsaved-", suffix=".json",
                                        dir=tempfile.gettempdir())
        os.close(fd)
        return save(fallback, results), f"{path}: {reason}"
