"""Small C helpers benchkit compiles itself (the callgrind client library, the memory
counter): built once per machine with the system C compiler into the cache, atomically."""
from __future__ import annotations

import hashlib
import os
import shutil
import sysconfig
from pathlib import Path
from typing import Sequence

from benchkit.system.files import cache_dir
from benchkit.system.processes import run_command


def build_cached(name: str, sources: Sequence[Path], include: str, key: bytes, what: str,
                 error: type[Exception]) -> Path:
    """`sources` compiled into `lib<name>-<digest>.so` in the cache (the digest covers the
    sources, `key` and the platform), or the one already there. `what` names the helper in
    errors, which are of type `error`."""
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise error(f"{what} is compiled with a C compiler, and none was found (no `cc` or "
                    "`gcc` on PATH, CC unset); install gcc (apt-get install gcc)")
    digest = hashlib.sha256(b"".join(s.read_bytes() for s in sources) + key +
                            sysconfig.get_platform().encode()).hexdigest()[:16]
    target = cache_dir() / f"lib{name}-{digest}.so"
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(f".{os.getpid()}.tmp")
    cmd = [compiler, "-O2", "-shared", "-fPIC", f"-I{include}", *map(str, sources),
           "-o", str(tmp)]
    result = run_command(cmd, timeout=120)
    if result.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise error(f"building {what} failed ({' '.join(cmd)}):\n{result.stderr[-2000:]}")
    os.replace(tmp, target)
    return target
