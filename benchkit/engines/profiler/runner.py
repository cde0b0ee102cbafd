"""Run a task's statement under torch.profiler, one block of its own loop per profiler step."""
from __future__ import annotations

import contextlib
import dataclasses
import gzip
import math
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from benchkit.core.measure.stats import format_time
from benchkit.core.measure.task import Task, TaskSpec
from benchkit.engines.wall.clock import default_timer
from benchkit.engines.wall.loop import CompiledLoop
from benchkit.engines.wall.threads import torch_threads
from benchkit.errors import BenchkitError
from benchkit.system.files import atomic_write_bytes

# Unless `number` is given, each profiler step holds about STEP_TIME seconds of undisturbed
# runs (at most MAX_RUNS_PER_STEP), so per-op shares rest on many runs, not three. Not more:
# torch's own key_averages and trace export take seconds per 100,000 recorded events (a
# 10 us Linear at 20 ms a step: 136,000 events, a 12 s table with stacks).
STEP_TIME = 0.005
MAX_RUNS_PER_STEP = 200

SORT_ALIASES = {
    "self": "self_cpu_time_total", "total": "cpu_time_total", "calls": "count",
    "count": "count", "flops": "flops", "memory": "self_cpu_memory_usage",
    "self_memory": "self_cpu_memory_usage", "total_memory": "cpu_memory_usage",
    "device": "self_device_time_total", "device_total": "device_time_total",
}


@dataclasses.dataclass
class ProfileResult:
    """What `Timer.profile` returns: per-op tables, a chrome trace, and the overhead."""

    profiler: Any                 # torch.profiler.profile
    region: str
    number: int                   # runs of stmt per profiler step
    steps: int
    per_run_without_profiler: float
    per_run_with_profiler: float
    options: dict[str, Any]

    @property
    def overhead(self) -> float:
        """Per-run time with the profiler / without it (1.0 = no distortion)."""
        return self.per_run_with_profiler / self.per_run_without_profiler

    def overhead_summary(self) -> str:
        """The profiler's overhead in one line."""
        note = ("per-op times are distorted; read them relatively" if self.overhead > 1.5
                else "per-op times are close to undisturbed")
        return (f"profiler overhead: {format_time(self.per_run_with_profiler)} per run with "
                f"the profiler vs {format_time(self.per_run_without_profiler)} without "
                f"(x{self.overhead:.2f}); {note}")

    def table(self, sort_by: str = "self_cpu_time_total", row_limit: int = 20,
              group_by: str | None = None) -> str:
        """torch.profiler's key_averages table; `group_by` None | "input_shapes" | "stack".
        sort_by takes torch's keys or the aliases self, total, calls, flops, memory."""
        key = SORT_ALIASES.get(sort_by, sort_by)
        if group_by not in (None, "input_shapes", "stack"):
            raise BenchkitError(f"group_by={group_by!r}: use None, 'input_shapes' or 'stack'")
        if group_by == "stack" and not self.options.get("with_stack"):
            raise BenchkitError("group_by='stack' needs Timer.profile(with_stack=True)")
        try:
            averages = self.profiler.key_averages(
                group_by_input_shape=group_by == "input_shapes",
                group_by_stack_n=5 if group_by == "stack" else 0)
        except UnicodeDecodeError:
            # torch's own parser, on an event whose name it recorded as bytes that are not
            # UTF-8 (seen once in many runs, with with_stack=True): this profile is lost
            raise BenchkitError(
                "torch.profiler recorded an event whose name is not valid UTF-8 (a torch "
                "profiler fault); profile again") from None
        try:
            text = averages.table(sort_by=key, row_limit=row_limit)
        except (AttributeError, KeyError):
            raise BenchkitError(f"sort_by={sort_by!r} is not a column; use one of "
                                f"{sorted(SORT_ALIASES)} or a torch key such as "
                                "'self_cpu_time_total'") from None
        return f"{text}\n{self.coverage()}\n{self.overhead_summary()}"

    def coverage(self) -> str:
        """How many runs the table covers."""
        return (f"this table covers {self.steps * self.number} runs ({self.steps} active "
                f"steps of {self.number} runs)")

    def export_chrome_trace(self, path: str | Path) -> Path:
        """Write the trace (.json or .json.gz) for Perfetto, with benchkit's metadata."""
        path = Path(path)
        with tempfile.TemporaryDirectory() as tmp:
            raw = Path(tmp) / "trace.json"
            self.profiler.export_chrome_trace(str(raw))
            trace = json.loads(raw.read_text())
        trace["benchkit"] = {"region": self.region, "runs_per_step": self.number,
                             "active_steps": self.steps,
                             "per_run_without_profiler_s": self.per_run_without_profiler,
                             "per_run_with_profiler_s": self.per_run_with_profiler,
                             "overhead": self.overhead}
        data = json.dumps(trace).encode()
        if path.name.endswith(".gz"):
            data = gzip.compress(data, mtime=0)
        atomic_write_bytes(path, data)
        return path

    def __repr__(self) -> str:
        return (f"<benchkit ProfileResult {self.region!r}: {self.steps} active steps of "
                f"{self.number} runs>\n{self.coverage()}\n{self.overhead_summary()}")


BACKEND_LINE_PREFIXES = ("USDT:",)


@contextlib.contextmanager
def backend_lines_held_back():
    """The profiler backend (kineto) writes its own start/stop lines straight to fd 2. Hold
    fd 2 in a file while profiling, then pass on every other line, real warnings included."""
    sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:      # no fd 2 (e.g. a detached process): nothing to clutter
        yield
        return
    with tempfile.TemporaryFile() as held:
        os.dup2(held.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            held.seek(0)
            lines = held.read().decode(errors="replace").splitlines(keepends=True)
            kept = "".join(line for line in lines if not line.startswith(BACKEND_LINE_PREFIXES))
            if kept:
                sys.stderr.write(kept)
                sys.stderr.flush()


@dataclasses.dataclass(frozen=True)
class ProfileSchedule:
    """torch.profiler's schedule: `wait` skipped steps, `warmup` steps, `active` recorded
    steps, `repeat` cycles."""

    wait: int = 1
    warmup: int = 1
    active: int = 3
    repeat: int = 1

    def __post_init__(self) -> None:
        if min(self.wait, self.warmup) < 0 or self.active < 1 or self.repeat < 1:
            raise BenchkitError("profile needs wait >= 0, warmup >= 0, active >= 1, "
                                "repeat >= 1")

    @property
    def steps(self) -> int:
        """Profiler steps in all."""
        return self.repeat * (self.wait + self.warmup + self.active)

    def is_active(self, step: int) -> bool:
        """Whether step `step` is recorded."""
        return step % (self.wait + self.warmup + self.active) >= self.wait + self.warmup


def _stmt_only_loop(task: Task, namespace: dict[str, Any]) -> CompiledLoop:
    """The task's loop without its setup: setup runs once here, outside the profiler, so the
    profile holds only the measured statement."""
    namespace = dict(namespace)
    if callable(task.setup):
        task.setup()
    else:
        exec(compile(task.spec.setup or "pass", "<setup>", "exec"), namespace)
    return CompiledLoop(task.stmt, "pass", task.clock or default_timer, namespace)


def region_name(spec: TaskSpec) -> str:
    """The record_function region of a task: its label (or stmt) and description."""
    name = spec.title.splitlines()[0] if spec.label or "\n" not in spec.stmt else "stmt"
    return name + (f" [{spec.description}]" if spec.description else "")


def require_torch_profiler():
    """torch and torch.profiler, or a BenchkitError saying to install torch."""
    try:
        import torch
        import torch.profiler
    except ImportError:
        raise BenchkitError("Timer.profile needs torch (pip install torch)") from None
    return torch


def profile_task(task: Task, undisturbed: Callable[[], float], loop: Any,
                 schedule: ProfileSchedule, *, number: int | None = None,
                 record_shapes: bool = True, profile_memory: bool = False,
                 with_stack: bool = False, with_flops: bool = True) -> ProfileResult:
    """Run `task`'s statement under torch.profiler, one block of `number` runs per profiler
    step. `undisturbed()` measures the per-run time without the profiler (for the overhead
    and the default `number`); `loop` is the task's wall-time loop (its globals are used)."""
    torch = require_torch_profiler()
    from torch.profiler import ProfilerActivity, profile, record_function
    from torch.profiler import schedule as torch_schedule
    per_run = undisturbed()
    stmt_loop = _stmt_only_loop(task, loop.globals)
    if number is None:
        number = int(min(MAX_RUNS_PER_STEP,
                         max(1, math.ceil(STEP_TIME / max(per_run, 1e-9)))))
    activities = [ProfilerActivity.CPU]
    if torch.cuda.is_available():
        activities.append(ProfilerActivity.CUDA)
    extra = {}
    if with_stack:
        # Stacks come back empty without the verbose experimental config (torch 2.x).
        extra["experimental_config"] = torch._C._profiler._ExperimentalConfig(verbose=True)
    name = region_name(task.spec)
    step_times: list[tuple[int, float]] = []
    with torch_threads(task.spec.num_threads), backend_lines_held_back():
        with profile(activities=activities,
                     schedule=torch_schedule(wait=schedule.wait, warmup=schedule.warmup,
                                             active=schedule.active, repeat=schedule.repeat),
                     record_shapes=record_shapes, profile_memory=profile_memory,
                     with_stack=with_stack, with_flops=with_flops, **extra) as prof:
            for step in range(schedule.steps):
                start = time.perf_counter()
                with record_function(name):
                    stmt_loop.time_block(number)
                step_times.append((step, time.perf_counter() - start))
                prof.step()
    active_times = [t for step, t in step_times if schedule.is_active(step)]
    with_profiler = statistics.median(active_times) / number
    return ProfileResult(prof, name, number, schedule.active * schedule.repeat, per_run,
                         with_profiler, {"record_shapes": record_shapes,
                                         "profile_memory": profile_memory,
                                         "with_stack": with_stack, "with_flops": with_flops})
