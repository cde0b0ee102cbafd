import pickle
import re
import subprocess
import sys
import textwrap

import pytest

from benchkit import Measurement, TaskSpec
from conftest import make_measurement


def _repr(m):
    return re.sub(r"object at 0x[0-9a-f]+", "object at 0x0", repr(m))


SEED = make_measurement([2.31, 2.34, 2.38, 2.33, 2.35, 2.36, 2.32, 2.37],
                        setup="x = torch.ones((128,))\ny = torch.ones((128,))")


def test_repr_has_the_seed_layout():
    assert _repr(SEED) == textwrap.dedent("""\
        <benchkit.Measurement object at 0x0>
        x * y
        setup:
          x = torch.ones((128,))
          y = torch.ones((128,))

          Median: 2.34 us
          IQR:    0.03 us (2.33 to 2.36)
          8 measurements, 1000 runs per measurement, 1 thread""")


def test_repr_single_sample_below_one_nanosecond():
    assert _repr(make_measurement([0.0004], number=1000000, stmt="pass")) == textwrap.dedent("""\
        <benchkit.Measurement object at 0x0>
        pass
          0.40 ns
          1 measurement, 1000000 runs, 1 thread""")


def test_repr_zero_times_labels_and_threads():
    m = make_measurement([0.0] * 4, stmt="pass", label="zero", sub_label="s", description="d",
                         num_threads=4)
    assert _repr(m) == textwrap.dedent("""\
        <benchkit.Measurement object at 0x0>
        zero: s
        d
          Median: 0.00 ns
          IQR:    0.00 ns (0.00 to 0.00)
          4 measurements, 1000 runs per measurement, 4 threads""")


def test_repr_multiline_stmt_and_noise_warning():
    m = make_measurement([1.0, 1.0, 2.0, 2.0], stmt="a = 1\nb = 2")
    assert m.has_warnings and not m.meets_confidence(0.5)
    assert _repr(m).endswith(textwrap.dedent("""\
        stmt:
          a = 1
          b = 2

          Median: 1.50 us
          IQR:    1.00 us (1.00 to 2.00)
          4 measurements, 1000 runs per measurement, 1 thread
          WARNING: Interquartile range is 66.7% of the median measurement.
                   This suggests significant environmental influence."""))


def test_statistics_are_derived_from_raw_times():
    m = make_measurement([1.0, 2.0, 3.0, 4.0], number=10)
    assert m.times == pytest.approx([1e-6, 2e-6, 3e-6, 4e-6])
    assert m.median == pytest.approx(2.5e-6) and m.mean == pytest.approx(2.5e-6)
    assert m.iqr == pytest.approx(1.5e-6)
    assert SEED.significant_figures == 1  # torch.utils.benchmark gives 1 for these times too
    assert SEED.meets_confidence(0.1)


def test_task_fields_are_forwarded_and_typos_fail():
    m = make_measurement([1.0], label="L", sub_label="S", description="D", num_threads=2)
    assert (m.label, m.sub_label, m.description, m.num_threads, m.stmt) == ("L", "S", "D", 2, "x * y")
    assert m.env == "Unspecified env"
    assert make_measurement([1.0], env="cuda").env == "cuda"
    with pytest.raises(AttributeError):
        m.descripton  # noqa: B018 - the typo must not be forwarded silently


def test_merge_pools_replicates_at_one_run_per_measurement():
    a = make_measurement([1.0, 2.0], number=10)
    b = make_measurement([3.0], number=100)
    c = make_measurement([9.0], number=10, sub_label="other")
    merged = Measurement.merge([a, b, c])
    assert len(merged) == 2
    assert merged[0].number_per_run == 1 and merged[0].raw_times == pytest.approx([1e-6, 2e-6, 3e-6])
    assert merged[0].metadata is None


def test_pickle_round_trip_keeps_fields_and_statistics():
    m = SEED
    m.median  # populate caches: they must not travel
    loaded = pickle.loads(pickle.dumps(m))
    assert loaded == m and loaded.median == m.median and _repr(loaded) == _repr(m)
    assert "_summary" not in pickle.loads(pickle.dumps(m)).__dict__


def test_pickle_loads_and_prints_where_torch_cannot_be_imported(tmp_path):
    blocker = tmp_path / "blocked" / "torch"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('torch is not installed here')\n")
    payload = tmp_path / "m.pkl"
    payload.write_bytes(pickle.dumps(SEED))
    code = textwrap.dedent(f"""
        import pickle, sys
        try:
            import torch
        except ImportError as e:
            print("torch import fails:", e)
        m = pickle.load(open({str(payload)!r}, "rb"))
        print(m)
        from benchkit import Compare
        print(Compare([m]))
        print("torch" in sys.modules and sys.modules["torch"] is not None)
    """)
    env = {"PYTHONPATH": str(tmp_path / "blocked"), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         check=True).stdout
    assert "torch import fails: torch is not installed here" in out
    assert "Median: 2.34 us" in out and "Times are in microseconds (us)." in out
    assert out.strip().endswith("False")


def test_taskspec_is_frozen_and_hashable():
    spec = TaskSpec("a", "b")
    assert hash(spec) == hash(TaskSpec("a", "b"))
    with pytest.raises(Exception):
        spec.stmt = "c"
