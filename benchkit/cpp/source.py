"""C++ sources generated for a C++ Timer, and compiler messages mapped back to the snippets.

Pure: strings in, strings out. Two programs per snippet: a shared library whose
`bk_time_block(number)` runs setup, one untimed warm-up run, then `number` timed runs of stmt
and returns seconds (as torch's C++ timeit template does), and an executable that runs the
same loop under valgrind with collection on only around it.
"""
from __future__ import annotations

import dataclasses
import re

PCH_HEADER = "#include <torch/torch.h>\n"

_TIMING = """\
#include <chrono>
#include <cstdint>
#include <cstring>
#include <exception>
#include <string>
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
"""

_CALLGRIND = """\
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <valgrind/callgrind.h>
#include <torch/torch.h>
// benchkit: global_setup
{global_setup}

static void bk_dump(const char* kind, int repeat) {{
  char name[64];
  std::snprintf(name, sizeof name, "benchkit:0:%s:%d", kind, repeat);
  CALLGRIND_DUMP_STATS_AT(name);
}}

int main(int argc, char** argv) {{
  if (argc != 6) return 2;
  const std::int64_t bk_number = std::atoll(argv[1]);
  const int bk_repeats = std::atoi(argv[2]);
  const bool bk_baseline = std::atoi(argv[3]) != 0;
  torch::set_num_threads(std::atoi(argv[4]));
  // Layout k > 0: k deliberate heap offsets before the snippet allocates anything.
  std::vector<char> bk_padding(static_cast<std::size_t>(std::atoi(argv[5])) * 4099);
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
    bk_dump("stmt", bk_r);
  }}
  if (bk_baseline) {{
    CALLGRIND_TOGGLE_COLLECT;
    for (std::int64_t bk_i = 0; bk_i < bk_number; ++bk_i) {{
    }}
    CALLGRIND_TOGGLE_COLLECT;
    bk_dump("baseline", 0);
  }}
  CALLGRIND_STOP_INSTRUMENTATION;
  return 0;
}}
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
                           stmt=_indent(stmt, 6))
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


def timing_source(stmt: str, setup: str, global_setup: str) -> Source:
    return _render(_TIMING, stmt, setup, global_setup)


def callgrind_source(stmt: str, setup: str, global_setup: str) -> Source:
    return _render(_CALLGRIND, stmt, setup, global_setup)


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
