"""Block-size and measurement-loop logic on a fake clock."""
from benchkit.engines.wall import autorange
class FakeBlocks:
    """time_block(number) = overhead + number * per_run (seconds), recording each call."""

    def __init__(self, per_run, overhead=1e-7, jitter=()):
        self.per_run, self.overhead, self.jitter, self.calls = per_run, overhead, list(jitter), []

    def __call__(self, number):
        self.calls.append(number)
        extra = self.jitter[len(self.calls) % len(self.jitter)] if self.jitter else 0.0
        return self.overhead + number * self.per_run + extra


def test_block_size_grows_until_overhead_is_negligible():
    blocks = FakeBlocks(per_run=1e-6)
    # 1000 runs: overhead 1e-7 / 1.0001e-3 s <= 1e-4, and 1 ms >= 0.2 s / 1000.
    assert autorange.estimate_block_size(blocks, min_run_time=0.2) == 1000
    assert blocks.calls == [0, 0, 0, 0, 0, 1, 10, 100, 1000]


def test_block_size_honours_min_run_time():
    # a block must reach min_run_time / 1000 at <= 0.01 % overhead (torch's rule).
    assert autorange.estimate_block_size(FakeBlocks(1e-6), min_run_time=0.01) == 1000
    assert autorange.estimate_block_size(FakeBlocks(1e-6), min_run_time=10.0) == 10000
    assert autorange.estimate_block_size(FakeBlocks(1e-6), min_run_time=100.0) == 100000


def test_block_size_is_torchs_even_when_few_blocks_fit():
    # 17 ms per run, 2 us overhead: 0.012 % overhead is above 0.01 %, so the block grows to
    # 10 runs, as torch's does (170 ms blocks leave one block in 0.1 s).
    assert autorange.estimate_block_size(FakeBlocks(0.017, overhead=2e-6), 0.1) == 10
    # a block longer than min_run_time stops the growth
    assert autorange.estimate_block_size(FakeBlocks(0.017, overhead=1e-4), 0.01) == 1


def test_block_size_stops_on_a_slow_statement():
    assert autorange.estimate_block_size(FakeBlocks(0.5), min_run_time=0.2) == 1


def test_measurement_loop_runs_until_min_run_time():
    blocks = FakeBlocks(per_run=1e-3, overhead=0.0)
    times = autorange.measurement_loop(blocks, 10, lambda t: True, min_run_time=0.0999)
    assert len(times) == 10 and all(n == 10 for n in blocks.calls)


def test_measurement_loop_stop_hook_and_max_run_time():
    blocks = FakeBlocks(per_run=1e-3, overhead=0.0)
    times = autorange.measurement_loop(blocks, 1, lambda t: False, max_run_time=0.0105)
    assert len(times) == 11
    calls = []
    autorange.measurement_loop(blocks, 1, lambda t: len(t) >= 3,
                               callback=lambda n, t: calls.append((n, t)))
    assert calls == [(1, 1e-3)] * 3


def test_timeit_autorange_follows_the_1_2_5_sequence():
    blocks = FakeBlocks(per_run=1e-3, overhead=0.0)
    seen = []
    number, taken = autorange.timeit_autorange(blocks, lambda n, t: seen.append(n))
    assert number == 200 and abs(taken - 0.2) < 1e-12
    assert seen == [1, 2, 5, 10, 20, 50, 100, 200]


def test_iqr_below_needs_four_blocks_and_a_tight_spread():
    stop = autorange.iqr_below(0.1)
    assert not stop([1.0, 1.0, 1.0])
    assert stop([1.0, 1.0, 1.0, 1.01])
    assert not stop([1.0, 2.0, 1.0, 2.0])


def test_adaptive_loop_stops_when_spread_settles():
    blocks = FakeBlocks(per_run=1e-3, overhead=0.0, jitter=[0.0, 5e-4, 0.0, 1e-5])
    times = autorange.measurement_loop(blocks, 1, autorange.iqr_below(0.9), max_run_time=10)
    assert 4 <= len(times) < 10
