"""The callgrind.out parser against callgrind_annotate's output on real fixture files."""
import re
from collections import defaultdict
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from benchkit.errors import CallgrindParseError
from benchkit.core.callgrind import parser
FIXTURES = Path(__file__).parent / "fixtures" / "callgrind"
SINGLE_PART = ["plain", "cache_sim", "uncompressed"]


def _annotate_table(path):
    """{file:function: (costs...)} and totals from callgrind_annotate --show-percs=no."""
    lines = path.read_text().splitlines()
    header = next(i for i, line in enumerate(lines) if line.endswith("file:function"))
    events = lines[header].split()[:-1]
    totals_line = next(line for line in lines if line.endswith("PROGRAM TOTALS"))
    totals = tuple(int(x.replace(",", "")) for x in totals_line.split()[:len(events)])
    row = re.compile(r"^\s*((?:[\d,.]+\s+){%d})(.*)$" % len(events))
    table = {}
    for line in lines[header + 2:]:
        match = row.match(line)
        if not match:
            break
        costs = tuple(0 if x == "." else int(x.replace(",", "")) for x in match.group(1).split())
        table[re.sub(r" \[[^\]]*\]$", "", match.group(2))] = costs
    return events, table, totals


def _by_file_function(table, events, order):
    """Our 'file:fn [obj]' rows merged by 'file:fn', costs reordered to annotate's columns."""
    merged = defaultdict(lambda: [0] * len(order))
    index = [events.index(e) for e in order]
    for name, costs in table.items():
        key = re.sub(r" \[[^\]]*\]$", "", name)
        for j, i in enumerate(index):
            merged[key][j] += costs[i]
    return {k: tuple(v) for k, v in merged.items() if any(v)}


@pytest.mark.parametrize("name", SINGLE_PART)
@pytest.mark.parametrize("inclusive", [False, True])
def test_costs_match_callgrind_annotate(name, inclusive):
    (profile,) = parser.parse((FIXTURES / f"callgrind.{name}.out").read_text(), source=name)
    flag = "yes" if inclusive else "no"
    order, expected, totals = _annotate_table(
        FIXTURES / f"callgrind.{name}.annotate-inclusive-{flag}.txt")
    ours = _by_file_function(profile.inclusive if inclusive else profile.exclusive,
                             list(profile.events), order)
    assert ours == expected
    assert tuple(profile.totals[profile.events.index(e)] for e in order) == totals


def test_exclusive_costs_sum_to_the_totals_line():
    for name in SINGLE_PART:
        (profile,) = parser.parse((FIXTURES / f"callgrind.{name}.out").read_text())
        sums = tuple(sum(c[i] for c in profile.exclusive.values())
                     for i in range(len(profile.events)))
        assert sums == profile.totals


def test_metadata_of_a_part():
    (profile,) = parser.parse((FIXTURES / "callgrind.cache_sim.out").read_text())
    assert profile.events == ("Ir", "Dr", "Dw", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw")
    assert profile.trigger == "Client Request: first"
    assert profile.header["positions"] == "instr line"


def test_combined_dumps_give_one_profile_per_part():
    profiles = parser.parse((FIXTURES / "callgrind.combined.out").read_text())
    assert [p.trigger for p in profiles] == ["Client Request: first", "Client Request: second",
                                             "Program termination"]
    assert [p.totals for p in profiles] == [(30720,), (47955,), (0,)]
    for p in profiles:
        assert sum(c[0] for c in p.exclusive.values()) == p.totals[0]
    # the second part reuses names compressed in the first
    assert any("sorted" in fn or "list_sort" in fn for fn in profiles[1].exclusive)


def test_same_function_in_two_objects_keeps_both_rows():
    text = "events: Ir\nob=(1) /lib/a.so\nfl=(1) f.c\nfn=(1) g\n1 5\nob=(2) /lib/b.so\nfn=(1)\n1 7\n"
    (p,) = parser.parse(text)
    assert p.exclusive == {"f.c:g [/lib/a.so]": (12,)}


def test_recursion_and_call_costs():
    text = ("events: Ir\nfl=(1) m.c\nfn=(1) main\n1 2\ncfn=(2) work\ncalls=3 10\n2 30\n"
            "fn=(2)\n10 25\ncfn=(3) leaf\ncalls=1 20\n11 5\nfn=(3)\n20 5\n")
    (p,) = parser.parse(text)
    assert p.exclusive == {"m.c:main [???]": (2,), "m.c:work [???]": (25,),
                           "m.c:leaf [???]": (5,)}
    assert p.inclusive == {"m.c:main [???]": (32,), "m.c:work [???]": (30,),
                           "m.c:leaf [???]": (5,)}
    assert p.totals == (32,)


@pytest.mark.parametrize("text, line, problem", [
    ("events: Ir\nfn=(7)\n1 2\n", 2, "never defined"),
    ("fn=main\n1 2\n", 1, "before the header"),
    ("events: Ir\nfn=main\n1 two\n", 3, "invalid literal"),
    ("events: Ir\nfn=main\n1 2 3\n", 3, "2 costs but 1 events"),
    ("events: Ir\nfn=main\ncalls=1 2\n", 3, "without a preceding cfn"),
    ("events: Ir\nfn=main\ncfn=x\ncalls=1 2\n", 4, "file ends after calls="),
    ("hello world\n", 1, "unrecognised line"),
    ("", 0, "no profile data"),
])
def test_malformed_input_names_file_and_line(text, line, problem):
    with pytest.raises(CallgrindParseError) as info:
        parser.parse(text, source="bad.out")
    assert info.value.source == "bad.out" and info.value.lineno == line
    assert problem in str(info.value) and str(info.value).startswith(f"bad.out:{line}: ")


_LINES = (FIXTURES / "callgrind.plain.out").read_text().splitlines()


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_fuzzed_input_parses_or_raises_a_parse_error(data):
    """Mutations of a real file: either a parse, or a CallgrindParseError — nothing else."""
    lines = list(_LINES[:400])
    for _ in range(data.draw(st.integers(0, 5))):
        i = data.draw(st.integers(0, len(lines) - 1))
        action = data.draw(st.sampled_from(["drop", "dup", "garble", "swap", "truncate"]))
        if action == "drop":
            del lines[i]
        elif action == "dup":
            lines.insert(i, lines[i])
        elif action == "garble":
            lines[i] = data.draw(st.text(max_size=30))
        elif action == "swap":
            j = data.draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        else:
            lines[i] = lines[i][: data.draw(st.integers(0, len(lines[i])))]
    try:
        parser.parse(lines, source="fuzz.out")
    except CallgrindParseError as error:
        assert error.source == "fuzz.out" and 0 <= error.lineno <= len(lines)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from("fn=()0123456789+-* \nevents:Ircalls#"), max_size=200))
def test_random_text_parses_or_raises_a_parse_error(text):
    try:
        parser.parse(text, source="random.out")
    except CallgrindParseError as error:
        assert error.source == "random.out"
