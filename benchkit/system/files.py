"""Files written safely: atomic writes (temp file, fsync, rename; the temp files of killed
writers swept) and benchkit's cache directory."""
from __future__ import annotations

import os
import re
import secrets
import shutil
import tempfile
from pathlib import Path

from benchkit.errors import ReportError


def cache_dir() -> Path:
    """~/.cache/benchkit (or under $XDG_CACHE_HOME): compiled helpers and C++ snippets."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "benchkit"


def _sweep_stale_temp_files(path: Path) -> None:
    """Remove `.NAME.<pid>.<random>.tmp` files next to `path` left by killed writers."""
    pattern = re.compile(re.escape(f".{path.name}.") + r"(\d+)\.[0-9a-f]+\.tmp$")
    try:
        entries = list(path.parent.iterdir())
    except OSError:
        return
    for entry in entries:
        match = pattern.match(entry.name)
        if not match:
            continue
        try:
            os.kill(int(match.group(1)), 0)
        except ProcessLookupError:
            entry.unlink(missing_ok=True)
        except PermissionError:
            pass


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_bytes(path: str | os.PathLike, data: bytes, *,
                       exclusive: bool = False) -> Path:
    """Write to a temp file next to `path`, fsync, then rename: never a half-written file.
    The file gets the permissions any new file of the user gets (the umask applies).

    `exclusive` never replaces an existing file: when `path` is taken (another run wrote it
    the same second), `NAME-2.json`, `NAME-3.json`, ... is written instead. Returns the
    path written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    _sweep_stale_temp_files(path)
    tmp = path.parent / f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666 & ~_umask())
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if not exclusive:
            os.replace(tmp, path)
            return path
        for candidate in _candidates(path):
            try:
                os.link(tmp, candidate)     # atomic, and fails if the name is taken
            except FileExistsError:
                continue
            os.unlink(tmp)
            return candidate
        raise FileExistsError(f"{path}: every name up to -999 is taken")
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def _candidates(path: Path):
    """path, then NAME-2.EXT ... NAME-999.EXT (the extension being .json or .json.gz)."""
    yield path
    name = path.name
    stem, ext = (name[:-8], name[-8:]) if name.endswith(".json.gz") else (path.stem, path.suffix)
    for n in range(2, 1000):
        yield path.with_name(f"{stem}-{n}{ext}")




SITE_MARKER = ".benchkit-site"     # also the manifest: the files the site's writer wrote


def check_site_dir(out_dir: str | os.PathLike) -> Path:
    """`out_dir` if write_site may write there (missing, empty, or a site it wrote before),
    a symlink followed to its target; a ReportError naming it otherwise. Checked before any
    work is done."""
    out = Path(out_dir)
    if out.is_symlink():
        out = out.resolve()
    if out.exists():
        if not out.is_dir():
            raise ReportError(f"{out}: exists and is not a directory; choose another output "
                              f"directory")
        if any(out.iterdir()) and not (out / SITE_MARKER).is_file():
            raise ReportError(f"{out}: a directory that benchkit did not write; choose an "
                              f"empty or new output directory")
    return out


def _manifest(out: Path) -> set[str] | None:
    """The files a previous write_site wrote into `out` (None: a site from before the
    manifest, whose files cannot be told from the user's)."""
    try:
        lines = (out / SITE_MARKER).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    if not lines or lines[0] != "written by benchkit":
        return None
    return set(lines[1:]) if len(lines) > 1 else None


def write_site(out_dir: str | os.PathLike, files: dict[str, bytes]) -> Path:
    """Write a generated site (`files`: relative path -> content) as a whole: into a
    temporary directory next to `out_dir`, then swapped in, so a reader never sees half a
    site and a killed writer leaves the previous one. `out_dir` may be missing, empty, or a
    site written before (it carries SITE_MARKER, which lists what was written); anything
    else is refused, never deleted. Files the user put into a site written before (notes,
    a database) are kept: only the files of the manifest are replaced. A symlinked
    `out_dir` is followed, never replaced."""
    out = check_site_dir(out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    written = _manifest(out) if out.exists() else set()
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    try:
        manifest = "\n".join(["written by benchkit", *sorted(files)]) + "\n"
        for relative, data in {**files, SITE_MARKER: manifest.encode("utf-8")}.items():
            target = staging / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        if out.exists():
            for path in out.rglob("*"):
                relative = path.relative_to(out).as_posix()
                if (path.is_dir() and not path.is_symlink()) or relative == SITE_MARKER:
                    continue
                mine = relative in files or (written is not None and relative in written) \
                    or (written is None and relative.startswith(("benchmarks/", "assets/",
                                                                 "index.html")))
                if not mine and not (staging / relative).exists():
                    # the user's own file: carried over (a hard link, or a copy across
                    # devices), so the swap below does not take it away
                    (staging / relative).parent.mkdir(parents=True, exist_ok=True)
                    try:
                        os.link(path, staging / relative, follow_symlinks=False)
                    except OSError:
                        shutil.copy2(path, staging / relative, follow_symlinks=False)
        os.chmod(staging, 0o777 & ~_umask())
        old = None
        if out.exists():
            old = out.parent / f".{out.name}.{os.getpid()}.old"
            os.replace(out, old)
        os.replace(staging, out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return out
