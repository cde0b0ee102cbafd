"""C++ source generated for a C++ Timer, and compiler messages mapped back to the snippets.

Pure: strings in, strings out. One shared library per snippet, for both jobs:
`bk_time_block(number)` runs setup, one untimed warm-up run, then `number` timed runs of stmt
and returns seconds (as torch's C++ timeit template does); `bk_callgrind_main(...)` runs the
same loop under valgrind, with collection on only around it, called by a small driver
program (driver.c) that loads the library. One compile serves timing and counting.
"""
from __future__ import annotations

import dataclasses
import re

from benchkit.core.callgrind.requests import BASELINE, CPP_TAG, STMT, DumpName

PCH_HEADER = "#include <torch/torch.h>\n"

_SNIPPET = """\
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define BK_HAVE_CALLGRIND 1
#endif
#include <torch/torch.h>
// benchkit: global_setup
{global_setup}
static std::string bk_error;

extern "C" const char* bk_last_error() {{ return bk_error.c_str(); }}

extern "C" double bk_time_block(std::int64_t bk_number) {{
  try {{
    // benchkit: setup
{setup}
    {{  // warm-up, as torch's C++ timeit template: one run outside the timed loop
      // benchkit: stmt
{stmt}
    }}
    auto bk_start = std::chrono::steady_clock::now();
    for (std::int64_t bk_i = 0; bk_i < bk_number; ++bk_i) {{
      // benchkit: stmt
{stmt}
    }}
    auto bk_end = std::chrono::steady_clock::now();
    return std::chrono::duration<double>(bk_end - bk_start).count();
  }} catch (const std::exception& bk_e) {{
    bk_error = bk_e.what();
  }} catch (...) {{
    bk_error = "unknown C++ exception";
  }}
  return -1.0;
}}

#ifdef BK_HAVE_CALLGRIND
static void bk_dump(const char* kind, int repeat) {{
  char name[64];
  std::snprintf(name, sizeof name, "{dump_format}", kind, repeat);
  CALLGRIND_DUMP_STATS_AT(name);
}}

extern "C" int bk_callgrind_main(std::int64_t bk_number, int bk_repeats, int bk_baseline,
                                 int bk_threads, int bk_layout) {{
  torch::set_num_threads(bk_threads);
  // Layout k > 0: k deliberate heap offsets before the snippet allocates anything.
  std::vector<char> bk_padding(static_cast<std::size_t>(bk_layout) * 4099);
  // benchkit: setup
{setup}
  for (std::int64_t bk_i = 0; bk_i < 2 * bk_number; ++bk_i) {{  // warm-up
      // benchkit: stmt
{stmt}
  }}
  CALLGRIND_START_INSTRUMENTATION;
  for (int bk_r = 0; bk_r < bk_repeats; ++bk_r) {{
    CALLGRIND_TOGGLE_COLLECT;
    for (std::int64_t bk_i = 0; bk_i < bk_number; ++bk_i) {{
      // benchkit: stmt
{stmt}
    }}
    CALLGRIND_TOGGLE_COLLECT;
    bk_dump("{stmt_kind}", bk_r);
  }}
  if (bk_baseline) {{
    CALLGRIND_TOGGLE_COLLECT;
    for (std::int64_t bk_i = 0; bk_i < bk_number; ++bk_i) {{
    }}
    CALLGRIND_TOGGLE_COLLECT;
    bk_dump("{baseline_kind}", 0);
  }}
  CALLGRIND_STOP_INSTRUMENTATION;
  return 0;
}}
#endif
"""


@dataclasses.dataclass(frozen=True)
class Source:
    """Generated source text, and where each snippet's lines sit in it (1-based)."""

    text: str
    spans: tuple[tuple[str, int, int], ...]     # (snippet, first line, number of lines)

    def locate(self, line: int) -> tuple[str, int] | None:
        """(snippet, line within it) of a line of the generated file, if it is a snippet's."""
        for name, first, count in self.spans:
            if first <= line < first + count:
                return name, line - first + 1
        return None


def _indent(code: str, spaces: int) -> str:
    return "\n".join(" " * spaces + line if line.strip() else line
                     for line in (code or "").splitlines()) or ""


def _render(template: str, stmt: str, setup: str, global_setup: str) -> Source:
    text = template.format(global_setup=_indent(global_setup, 0), setup=_indent(setup, 4),
                           stmt=_indent(stmt, 6), dump_format=DumpName.c_format(CPP_TAG, "0"),
                           stmt_kind=STMT, baseline_kind=BASELINE)
    spans = []
    lines = text.splitlines()
    markers = {"// benchkit: global_setup": ("global_setup", global_setup),
               "// benchkit: setup": ("setup", setup), "// benchkit: stmt": ("stmt", stmt)}
    for i, line in enumerate(lines):
        marker = markers.get(line.strip())
        if marker is not None:
            name, code = marker
            spans.append((name, i + 2, len((code or "").splitlines())))
    return Source(text, tuple(spans))


def snippet_source(stmt: str, setup: str, global_setup: str) -> Source:
    """The snippet's library: bk_time_block for wall time, bk_callgrind_main for counts."""
    return _render(_SNIPPET, stmt, setup, global_setup)


_DIAGNOSTIC = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+):(?:(?P<col>\d+):)?\s*"
                         r"(?P<kind>fatal error|error|warning|note):\s*(?P<msg>.*)$")


def map_diagnostics(output: str, source: Source, file_name: str) -> list[str]:
    """The compiler's errors in `file_name`, as 'stmt line 1: error: ...' lines pointing at
    the snippet's own lines; errors elsewhere (headers) are kept as they are."""
    out = []
    for raw in output.splitlines():
        match = _DIAGNOSTIC.match(raw)
        if not match or match["kind"] not in ("error", "fatal error"):
            continue
        if match["file"].endswith(file_name):
            where = source.locate(int(match["line"]))
            if where is not None:
                name, line = where
                col = f", column {match['col']}" if match["col"] else ""
                out.append(f"{name} line {line}{col}: {match['kind']}: {match['msg']}")
                continue
            out.append(f"generated code line {match['line']}: {match['kind']}: {match['msg']}")
        else:
            out.append(raw)
    return out
