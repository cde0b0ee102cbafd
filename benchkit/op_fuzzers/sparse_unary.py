"""UnaryOpSparseFuzzer, as torch.utils.benchmark.op_fuzzers.sparse_unary."""
from __future__ import annotations

from benchkit.api.fuzzer import Fuzzer
from benchkit.op_fuzzers.common import float_dtype, sparse, sparse_parameters


class UnaryOpSparseFuzzer(Fuzzer):
    """One sparse COO tensor x."""

    def __init__(self, seed, dtype=None, cuda=False) -> None:
        dtype = float_dtype(dtype)
        super().__init__(parameters=sparse_parameters(with_y=False),
                         tensors=[sparse("x", ("k0", "k1", "k2"), dtype, cuda)], seed=seed)
