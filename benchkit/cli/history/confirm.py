"""`history regressions --confirm`: suspected steps re-measured before anyone is alerted."""
from __future__ import annotations

import sys
from pathlib import Path

from benchkit.core.text import printable
from benchkit.errors import BenchkitError


def confirmed(args, steps):
    """--confirm: the wall-time steps re-measured (orchestration.bisect.confirm_steps)."""
    import tempfile
    from benchkit.orchestration.bisect import confirm_steps
    from benchkit.orchestration.history import git_root
    from benchkit.orchestration.sampling.sides import check_install
    from benchkit.system.processes import owned_prefix
    check_install(args.install)
    paths = [str(Path(p).resolve()) for p in args.confirm]
    for path in paths:
        if not Path(path).exists():
            raise BenchkitError(f"--confirm {path}: no such file or directory")
    try:
        repo = git_root(args.repo)
    except BenchkitError:
        if args.repo:
            raise
        repo = None

    def report(step) -> None:
        print(f"{step.commit.sha[:12]} {printable(step.benchmark)}: {step.confirmation}",
              file=sys.stderr)

    with tempfile.TemporaryDirectory(prefix=owned_prefix("confirm")) as tmp:
        return confirm_steps(steps, repo, paths, install=args.install,
                             ab_args=["--rounds", str(args.rounds)] if args.rounds else [],
                             workdir=Path(tmp), on_step=report)
