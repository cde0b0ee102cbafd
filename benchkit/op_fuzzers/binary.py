"""BinaryOpFuzzer, as torch.utils.benchmark.op_fuzzers.binary."""
from __future__ import annotations

from benchkit.api.fuzzer import FuzzedParameter, Fuzzer, ParameterAlias
from benchkit.op_fuzzers.common import (
    POW_TWO_SIZES,
    STEPS,
    _dense,
    _dims,
    _float,
    _random_value,
    _sizes,
)


class BinaryOpFuzzer(Fuzzer):
    """Pairs x, y of 1-3 dims for elementwise binary ops; y sometimes broadcasts."""

    def __init__(self, seed, dtype=None, cuda=False) -> None:
        dtype = _float(dtype)
        super().__init__(
            parameters=[
                _dims("dim"), *_sizes("pow2", POW_TWO_SIZES, "any", (0.8, 0.2)),
                [FuzzedParameter(f"y_k{i}", distribution={ParameterAlias(f"k{i}"): 0.8, 1: 0.2},
                                 strict=True) for i in range(3)],
                [FuzzedParameter(f"{name}_step_{i}", distribution=STEPS)
                 for i in range(3) for name in ("x", "y")],
                _random_value()],
            tensors=[_dense("x", ("k0", "k1", "k2"), ("x_step_0", "x_step_1", "x_step_2"),
                            "dim", dtype, cuda),
                     _dense("y", ("y_k0", "y_k1", "y_k2"), ("x_step_0", "x_step_1", "x_step_2"),
                            "dim", dtype, cuda)],
            seed=seed)
