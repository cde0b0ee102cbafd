"""Profiling commands: profile a suite benchmark, analyze/diff/merge/validate chrome traces."""
from __future__ import annotations

import argparse
import json
import re

from benchkit.cli import args as types
from benchkit.cli import shared_options as shared
from benchkit.cli.exit_codes import Outcome
from benchkit.core.text import one_line
from benchkit.errors import BenchkitError

_TIME = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*(ns|us|ms|s)?\s*$")
_SCALE = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000, None: 1_000}


def _time_ns(text: str) -> int:
    match = _TIME.match(text)
    if not match:
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration like 50us, 2ms or 0.5 "
                                         "(us)")
    return int(float(match.group(1)) * _SCALE[match.group(2)])


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not a number an event can hold")


def add_parsers(sub) -> None:
    """The subcommands of this module."""
    prof = sub.add_parser("profile", help="profile suite benchmarks with torch.profiler")
    prof.add_argument("paths", nargs="+", metavar="PATH")
    shared.KEYWORD.add(prof)
    prof.add_argument("-o", "--output", default="trace.json.gz", metavar="TRACE",
                      help="chrome trace to write (one benchmark: this path; several: "
                           "NAME-<i>.json.gz next to it)")
    prof.add_argument("--sort-by", default="self")
    prof.add_argument("--row-limit", type=types.positive_int, default=15)
    prof.add_argument("--group-by", choices=["input_shapes", "stack"])
    prof.add_argument("--with-stack", action="store_true",
                      help="record Python stacks of the ops (group by stack)")
    prof.add_argument("--profile-memory", action="store_true",
                      help="record the memory each op allocates")
    prof.add_argument("--active", type=types.positive_int, default=3,
                      help="active steps (default 3)")

    an = sub.add_parser("analyze", help="per-op analysis of a chrome trace")
    an.add_argument("trace")
    an.add_argument("-t", "--top", type=types.non_negative_int, default=20,
                    help="rows to show (0 = all)")
    an.add_argument("--name", metavar="REGEX", help="only events whose name matches")
    an.add_argument("--type", action="append", metavar="CATEGORY",
                    help="only these categories (cpu_op, user_annotation, python_function, "
                         "kernel, ...); repeatable")
    an.add_argument("--min-time", type=_time_ns, metavar="T", help="events at least this long")
    an.add_argument("--max-time", type=_time_ns, metavar="T", help="events at most this long")
    an.add_argument("--aggregate-by", default="name",
                    choices=["name", "name+shapes", "region"])
    an.add_argument("--aggregate", default="sum", choices=["sum", "mean", "min", "max", "count"])
    an.add_argument("--order-by", default="self", metavar="COL",
                    help="self, total, calls, flops, bytes, flop/s, gb/s, name; +COL ascending")
    an.add_argument("--markdown", action="store_true", help="print tables as markdown")

    td = sub.add_parser("trace-diff", help="per-op self-time and call deltas of two traces")
    td.add_argument("base")
    td.add_argument("new")
    td.add_argument("--top", type=types.non_negative_int, default=30,
                    help="rows to show (0 = all)")
    td.add_argument("--by-region", action="store_true", help="key ops by region / name")
    td.add_argument("--markdown", action="store_true", help="print tables as markdown")

    tm = sub.add_parser("trace-merge", help="add device events to a trace, with launch flows")
    tm.add_argument("trace")
    tm.add_argument("events", help="JSON list of {name, ts, dur, host: {external_id | name, "
                                   "index}}, times in microseconds")
    tm.add_argument("-o", "--output", required=True)
    tm.add_argument("--track", default="device")

    va = sub.add_parser("validate-trace", help="check that a trace opens cleanly in Perfetto")
    va.add_argument("trace")


def cmd_profile(args) -> Outcome | tuple[Outcome, ...]:
    """`benchkit profile`: each selected benchmark under torch.profiler, tables and traces."""
    from pathlib import Path

    from benchkit.api.timer import Timer
    from benchkit.core.records.keywords import keyword_filter
    from benchkit.orchestration.suite import discover
    selected = [b for b in discover(args.paths) if keyword_filter(args.keyword)(b.selector())]
    if not selected:
        raise BenchkitError("no benchmarks to profile" +
                            (f" match -k {args.keyword!r}" if args.keyword else ""))
    output = Path(args.output)
    for i, b in enumerate(selected):
        result = Timer.from_task(b.task).profile(active=args.active, with_stack=args.with_stack,
                                                 profile_memory=args.profile_memory)
        print(f"== {one_line(b.name)}")
        print(result.table(sort_by=args.sort_by, row_limit=args.row_limit,
                           group_by=args.group_by))
        path = output if len(selected) == 1 else output.with_name(
            f"{output.name.split('.')[0]}-{i}.json.gz")
        result.export_chrome_trace(path)
        print(f"wrote {one_line(path)}\n")
    return Outcome.OK


def cmd_analyze(args) -> Outcome | tuple[Outcome, ...]:
    """`benchkit analyze`: per-op analysis of a chrome trace."""
    from benchkit.core.trace.analysis import analyze, format_analysis
    from benchkit.system.trace_files import read_slices
    result = analyze(read_slices(args.trace), name=args.name, types=args.type,
                     min_time_ns=args.min_time, max_time_ns=args.max_time,
                     aggregate_by=args.aggregate_by, aggregate=args.aggregate,
                     order_by=args.order_by, top=args.top)
    print(format_analysis(result, markdown=args.markdown))
    return Outcome.OK


def cmd_trace_diff(args) -> Outcome | tuple[Outcome, ...]:
    """`benchkit trace-diff`: per-op self-time and call deltas of two traces."""
    from benchkit.system.trace_files import read_slices
    from benchkit.core.trace.diff import diff_traces, format_trace_diff
    rows = diff_traces(read_slices(args.base), read_slices(args.new),
                       by_region=args.by_region)
    print(format_trace_diff(rows, top=args.top, markdown=args.markdown))
    return Outcome.OK


def cmd_trace_merge(args) -> Outcome | tuple[Outcome, ...]:
    """`benchkit trace-merge`: add device events to a trace, with launch flows."""
    from benchkit.core.trace.merge import add_device_events
    from benchkit.system.trace_files import load_trace, save_trace
    from benchkit.core.trace.validate import validate
    from benchkit.system.reading import read_bounded
    raw = read_bounded(args.events, lambda problem: BenchkitError(f"{args.events}: {problem}"))
    try:
        events = json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant)
    except (UnicodeDecodeError, ValueError, RecursionError, MemoryError) as error:
        raise BenchkitError(f"{args.events}: cannot read the device events (a JSON list): "
                            f"{str(error)[:200] or type(error).__name__}") from None
    if not isinstance(events, list):
        raise BenchkitError(f"{args.events}: expected a JSON list of events")
    merged = add_device_events(load_trace(args.trace), events, track=args.track)
    save_trace(args.output, merged)
    problems = validate(merged)
    print(f"wrote {one_line(args.output)}: {len(events)} {one_line(args.track)} events"
          + (f"; {len(problems)} problems (run validate-trace)" if problems else ", valid"))
    return Outcome.OK


def cmd_validate(args) -> Outcome | tuple[Outcome, ...]:
    """`benchkit validate-trace`: what would keep a trace from opening cleanly in Perfetto."""
    from benchkit.system.trace_files import load_trace
    from benchkit.core.trace.validate import validate
    problems = validate(load_trace(args.trace))
    for p in problems:
        print(p)
    print(f"{one_line(args.trace)}: {'OK' if not problems else f'{len(problems)} problems'}")
    return Outcome.PROBLEMS if problems else Outcome.OK


COMMANDS = {"profile": cmd_profile, "analyze": cmd_analyze, "trace-diff": cmd_trace_diff,
            "trace-merge": cmd_trace_merge, "validate-trace": cmd_validate}
