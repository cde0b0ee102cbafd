
import pytest

from benchkit import Compare
from benchkit.errors import BenchkitError
from conftest import make_measurement as mm


def _table():
    return [
        mm([1.20, 1.21, 1.22, 1.23], sub_label="{128} x {128}", label="mul", description="float"),
        mm([1.30, 1.31, 1.32, 1.33], sub_label="{128} x {1}", label="mul", description="float"),
        mm([2.40, 2.41, 2.42, 2.43], sub_label="{128} x {128}", label="mul", description="double"),
        mm([10.0, 11.0, 15.0, 16.0], sub_label="{128} x {1}", label="mul", description="double"),
        mm([0.8, 0.81, 0.82, 0.83], sub_label="{128} x {128}", label="mul", description="float",
           num_threads=2),
        mm([900.0, 910.0, 920.0, 930.0], sub_label="big", label="other", description=None, env="A"),
        mm([1000.0, 1010.0, 1020.0, 1030.0], sub_label="big", label="other", description=None),
    ]


# Exactly torch.utils.benchmark.Compare's text for the same data (trailing blanks included;
# tests/test_torch_parity.py checks it against torch itself).
MUL = (
    "[----------------- mul ------------------]\n"
    "                     |  float   |   double\n"
    "1 threads: -------------------------------\n"
    "      {128} x {128}  |  1215.0  |   2415.0\n"
    "      {128} x {1}    |  1315.0  |  13000.0\n"
    "2 threads: -------------------------------\n"
    "      {128} x {128}  |   815.0  |         \n"
    "\n"
    "Times are in nanoseconds (ns).\n")

# torch crashes on this table (a None description, a None env next to "A").
OTHER = (
    "[------------- other -------------]\n"
    "                          |        \n"
    "1 threads: ------------------------\n"
    "  (A)                big  |   915.0\n"
    "  (Unspecified env)  big  |  1015.0\n"
    "\n"
    "Times are in microseconds (us).\n")


def test_tables_per_label_threads_envs_and_missing_descriptions():
    assert str(Compare(_table())) == MUL + "\n" + OTHER


def test_trim_and_highlight_warnings():
    c = Compare(_table()[:5])
    c.trim_significant_figures()
    c.highlight_warnings()
    assert str(c) == (
        "[-------------------- mul --------------------]\n"
        "                     |  float  |      double   \n"
        "1 threads: ------------------------------------\n"
        "      {128} x {128}  |   1000  |    2000       \n"
        "      {128} x {1}    |   1000  |  10000 (! 35%)\n"
        "2 threads: ------------------------------------\n"
        "      {128} x {128}  |    800  |               \n"
        "\n"
        "Times are in nanoseconds (ns).\n"
        "(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n")


def test_colorize_rowwise_and_columnwise():
    best, very_bad, reset = "\x1b[92m\x1b[1m", "\x1b[31m\x1b[1m", "\x1b[0m\x1b[0m"
    c = Compare(_table()[:4])
    c.colorize(rowwise=True)
    lines = str(c).splitlines()
    # Without the 2-thread row the smallest median is 1.2 us, so the unit is us.
    # As torch: the colour codes wrap the centred cell, padding included.
    assert lines[3] == f"      {{128}} x {{128}}  |  {best} 1.2 {reset}  |    2.4 "
    assert lines[4] == f"      {{128}} x {{1}}    |  {best} 1.3 {reset}  |  {very_bad} 13.0 {reset}"
    c = Compare(_table()[:4])
    c.colorize()
    lines = str(c).splitlines()
    assert lines[4].endswith(f"{very_bad} 13.0 {reset}") and f"{best}  2.4 {reset}" in lines[3]
    assert "\x1b[34m\x1b[1m 1.3 " in lines[4]  # within 10 % of the column best: "good"


def test_replicates_are_merged_and_extend_results():
    c = Compare([mm([1.0, 1.0], label="L")])
    c.extend_results([mm([3.0, 3.0], label="L")])
    assert "2.0" in str(c)
    with pytest.raises(BenchkitError,
                       match="Compare takes Measurements \\(or MemoryStats\\), got str"):
        c.extend_results(["not a measurement"])


def test_label_none_and_single_measurement():
    out = str(Compare([mm([5.0])]))
    assert out.startswith("[--") and "x * y" in out and "5.0" in out


def test_print(capsys):
    Compare(_table()[:5]).print()
    assert capsys.readouterr().out == MUL + "\n"


@pytest.mark.slow
def test_a_gate_an_inconclusive_verdict_cannot_decide_is_undecided_or_fails_when_strict():
    from benchkit.core.compare import comparison
    from benchkit.core.metrics.gates import Gate
    from benchkit.core.compare.report import comparison_to_json, format_comparison
    from benchkit.core.records.schema import Results
    from noise_model import Machine

    def results(seed, time):
        m = Machine(seed, slow_fraction=0.0, process_sd=0.06).run(time)
        m.metadata = {"benchmark": "s::b"}
        return Results([m], [], {}, {})
    base, new = results(1, 10e-6), results(2, 10.6e-6)
    relaxed = comparison.of_runs(base, new, [Gate.parse("slower>5%")])
    row = relaxed.rows[0]
    assert row.wall.verdict == "inconclusive" and row.wall.ci_high > 1.05
    assert row.undecided == ("slower>5%: not decided (inconclusive, CI up to +13.0%)",)
    assert not relaxed.regressions and relaxed.undecided == (row,)
    text = format_comparison(relaxed)
    assert "gates not decided: 1 benchmark(s) inconclusive" in text and "--strict" in text
    assert comparison_to_json(relaxed)["summary"]["undecided"] == ["s::b"]
    strict = comparison.of_runs(base, new, [Gate.parse("slower>5%")], strict=True)
    assert strict.regressions and strict.rows[0].failures == row.undecided
    # an interval that ends below the gate's limit decides the gate after all
    wide = comparison.of_runs(base, new, [Gate.parse("slower>50%")], strict=True)
    assert not wide.regressions and not wide.undecided


def test_show_lays_out_one_table_per_suite_file_with_a_row_per_benchmark():
    from benchkit.core.compare.table import by_suite_file
    ms = [mm([10.0], label="sum", metadata={"benchmark": "bench_a::bench_sum"}),
          mm([20.0], label="sorted", metadata={"benchmark": "bench_a::bench_sorted"}),
          mm([30.0], label="mm", sub_label="dtype=float32", description="n=8",
             metadata={"benchmark": "bench_b::matmul[n=8,dtype=float32]",
                       "params": {"n": 8, "dtype": "float32"}}),
          mm([5.0], label="loose")]
    # Compare alone keeps torch's grouping: a table per label
    assert str(Compare(ms)).count("Times are in") == 4
    assert str(Compare(by_suite_file(ms))) == (
        "[-------- bench_a --------]\n"
        "                    |  time\n"
        "1 threads: ----------------\n"
        "      bench_sum     |  10.0\n"
        "      bench_sorted  |  20.0\n"
        "\n"
        "Times are in microseconds (us).\n"
        "\n"
        "[------------ bench_b ------------]\n"
        "                            |  n=8 \n"
        "1 threads: ------------------------\n"
        "      matmul dtype=float32  |  30.0\n"
        "\n"
        "Times are in microseconds (us).\n"
        "\n"
        "[----- loose -----]\n"
        "             |     \n"
        "1 threads: --------\n"
        "      x * y  |  5.0\n"
        "\n"
        "Times are in microseconds (us).\n")


def test_compare_as_markdown_is_a_real_markdown_table():
    ms = [mm([10.0], label="sum", sub_label="a", description="n=1"),
          mm([20.0], label="sum", sub_label="b", description="n=1", num_threads=2)]
    assert Compare(ms).markdown() == (
        "**sum**\n\n"
        "| threads   |    | n=1   |\n"
        "|-----------|----|-------|\n"
        "| 1         | a  | 10.0  |\n"
        "| 2         | b  | 20.0  |\n"
        "\n"
        "Times are in microseconds (us).\n")
