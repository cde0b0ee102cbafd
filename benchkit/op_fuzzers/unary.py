"""UnaryOpFuzzer, as torch.utils.benchmark.op_fuzzers.unary."""
from __future__ import annotations

from benchkit.api.fuzzer import FuzzedParameter, Fuzzer
from benchkit.op_fuzzers.common import STEPS, dense, dims, float_dtype, pow2_sizes, random_value


class UnaryOpFuzzer(Fuzzer):
    """One x of 1-3 dims, sometimes strided, for elementwise unary ops."""

    def __init__(self, seed, dtype=None, cuda=False) -> None:
        dtype = float_dtype(dtype)
        super().__init__(
            parameters=[
                dims("dim"), *pow2_sizes(),
                [FuzzedParameter(f"x_step_{i}", distribution=STEPS) for i in range(3)],
                random_value()],
            tensors=[dense("x", ("k0", "k1", "k2"), ("x_step_0", "x_step_1", "x_step_2"),
                            "dim", dtype, cuda)],
            seed=seed)
