"""UnaryOpFuzzer, as torch.utils.benchmark.op_fuzzers.unary."""
from __future__ import annotations

from benchkit.api.fuzzer import FuzzedParameter, Fuzzer
from benchkit.op_fuzzers.common import (
    POW_TWO_SIZES,
    STEPS,
    _dense,
    _dims,
    _float,
    _random_value,
    _sizes,
)


class UnaryOpFuzzer(Fuzzer):
    """One x of 1-3 dims, sometimes strided, for elementwise unary ops."""

    def __init__(self, seed, dtype=None, cuda=False) -> None:
        dtype = _float(dtype)
        super().__init__(
            parameters=[
                _dims("dim"), *_sizes("pow2", POW_TWO_SIZES, "any", (0.8, 0.2)),
                [FuzzedParameter(f"x_step_{i}", distribution=STEPS) for i in range(3)],
                _random_value()],
            tensors=[_dense("x", ("k0", "k1", "k2"), ("x_step_0", "x_step_1", "x_step_2"),
                            "dim", dtype, cuda)],
            seed=seed)
