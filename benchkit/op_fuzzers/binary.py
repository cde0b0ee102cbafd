"""BinaryOpFuzzer, as torch.utils.benchmark.op_fuzzers.binary."""
from __future__ import annotations

from benchkit.api.fuzzer import FuzzedParameter, Fuzzer, ParameterAlias
from benchkit.op_fuzzers.common import STEPS, dense, dims, float_dtype, pow2_sizes, random_value


class BinaryOpFuzzer(Fuzzer):
    """Pairs x, y of 1-3 dims for elementwise binary ops; y sometimes broadcasts."""

    def __init__(self, seed, dtype=None, cuda=False) -> None:
        dtype = float_dtype(dtype)
        super().__init__(
            parameters=[
                dims("dim"), *pow2_sizes(),
                [FuzzedParameter(f"y_k{i}", distribution={ParameterAlias(f"k{i}"): 0.8, 1: 0.2},
                                 strict=True) for i in range(3)],
                [FuzzedParameter(f"{name}_step_{i}", distribution=STEPS)
                 for i in range(3) for name in ("x", "y")],
                random_value()],
            tensors=[dense("x", ("k0", "k1", "k2"), ("x_step_0", "x_step_1", "x_step_2"),
                            "dim", dtype, cuda),
                     dense("y", ("y_k0", "y_k1", "y_k2"), ("x_step_0", "x_step_1", "x_step_2"),
                            "dim", dtype, cuda)],
            seed=seed)
