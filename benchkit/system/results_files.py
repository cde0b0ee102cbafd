"""Save and load results files (.json or .json.gz) atomically."""
from __future__ import annotations

import functools
import gzip
import importlib.resources
import json
import os
import tempfile
import zlib
from pathlib import Path
from typing import Any, Iterable

from benchkit.errors import ResultsFileError
from benchkit.system import machine
from benchkit.system.files import atomic_write_bytes
from benchkit.core import schema
from benchkit.core.schema import Results


def _is_gzip(path: Path) -> bool:
    return path.name.endswith(".gz")


def _as_results(results: Results | Iterable[Any], environment: dict[str, Any] | None) -> Results:
    from benchkit.core.measurement import Measurement
    if isinstance(results, Results):
        out = Results(list(results.measurements), list(results.callgrind),
                      dict(results.environment), dict(results.extra), results.ab)
    else:
        items = [results] if isinstance(results, Measurement) else list(results)
        out = Results()
        for item in items:
            if isinstance(item, Measurement):
                out.measurements.append(item)
            elif type(item).__name__ == "CallgrindStats":
                out.callgrind.append(item)
            else:
                raise ResultsFileError("<results>", f"cannot save {type(item).__name__}; "
                                       "results files hold Measurements and CallgrindStats")
    if environment is not None:
        out.environment = environment
    elif not out.environment:
        out.environment = machine.collect()
    return out


def save(path: str | os.PathLike, results: Results | Iterable[Any],
         environment: dict[str, Any] | None = None) -> Path:
    """Write Measurements / CallgrindStats and an environment fingerprint to `path`.

    `.json.gz` is compressed. The write is atomic. Returns the path.
    """
    path = Path(path)
    try:
        doc = schema.to_document(_as_results(results, environment))
    except schema.SchemaError as error:
        raise ResultsFileError(path, str(error)) from None
    data = json.dumps(doc, indent=1, allow_nan=False).encode("utf-8")
    if _is_gzip(path):
        data = gzip.compress(data, mtime=0)
    atomic_write_bytes(path, data)
    return path


def load(path: str | os.PathLike) -> Results:
    """Read a results file written by `save` (any older format version is migrated)."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ResultsFileError(path, "no such file; check the path") from None
    except IsADirectoryError:
        raise ResultsFileError(path, "is a directory, not a results file") from None
    except OSError as error:
        raise ResultsFileError(path, f"cannot be read: {error.strerror}") from None
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (EOFError, OSError, zlib.error) as error:
            raise ResultsFileError(path, f"is a truncated or corrupt gzip file ({error}); "
                                   "re-run the benchmark to write it again") from None
    try:
        doc = json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant)
    except UnicodeDecodeError:
        raise ResultsFileError(path, "is not a text JSON file (binary content); "
                               "pass a .json or .json.gz results file") from None
    except json.JSONDecodeError as error:
        raise ResultsFileError(path, f"is not valid JSON (line {error.lineno}, column "
                               f"{error.colno}: {error.msg}); the file is truncated or "
                               "corrupt — re-run the benchmark to write it again") from None
    except ValueError as error:
        raise ResultsFileError(path, str(error)) from None
    except RecursionError:
        raise ResultsFileError(path, "is nested too deeply to be a results file") from None
    try:
        return schema.from_document(doc, results_validator())
    except schema.SchemaError as error:
        raise ResultsFileError(path, f"{error} (see the results format in the README; "
                               "schema: benchkit/core/results.schema.json)") from None
    except RecursionError:
        raise ResultsFileError(path, "is nested too deeply to be a results file") from None


def _refuse_constant(name: str):
    raise ValueError(f"holds {name}, which is not a number a results file can have")


@functools.lru_cache(maxsize=None)
def results_validator():
    """A jsonschema validator of the shipped results.schema.json."""
    import jsonschema
    text = importlib.resources.files("benchkit.core").joinpath(
        "results.schema.json").read_text(encoding="utf-8")
    document = json.loads(text)
    return jsonschema.Draft202012Validator(document)


def merge(results: Iterable[Results]) -> Results:
    """Concatenate several results (e.g. runs on several machines) into one."""
    out = Results()
    envs = []
    for r in results:
        out.measurements += r.measurements
        out.callgrind += r.callgrind
        out.extra.update(r.extra)
        envs.append(r.environment)
    out.environment = envs[0] if len(envs) == 1 else {"merged": envs}
    return out


def check_writable(path: str | os.PathLike) -> Path:
    """Raise ResultsFileError now if `path` cannot become a results file (before any
    measuring): it is a directory, or its folder cannot be created or written."""
    path = Path(path)
    if path.is_dir():
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


def save_with_fallback(path: str | os.PathLike, results: Results | Iterable[Any]
                       ) -> tuple[Path, str | None]:
    """save(), and if writing fails, save into the temp directory instead.

    Returns (the path written, the reason the first path failed or None)."""
    try:
        return save(path, results), None
    except (OSError, ResultsFileError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        fd, fallback = tempfile.mkstemp(prefix="benchkit-unsaved-", suffix=".json",
                                        dir=tempfile.gettempdir())
        os.close(fd)
        return save(fallback, results), f"{path}: {reason}"
