"""BinaryOpSparseFuzzer, as torch.utils.benchmark.op_fuzzers.sparse_binary."""
from __future__ import annotations

from benchkit.api.fuzzer import Fuzzer
from benchkit.op_fuzzers.common import float_dtype, sparse, sparse_parameters


class BinaryOpSparseFuzzer(Fuzzer):
    """Pairs of sparse COO tensors x, y of the same size."""

    def __init__(self, seed, dtype=None, cuda=False) -> None:
        dtype = float_dtype(dtype)
        super().__init__(parameters=sparse_parameters(with_y=True),
                         tensors=[sparse("x", ("k0", "k1", "k2"), dtype, cuda),
                                  sparse("y", ("y_k0", "y_k1", "y_k2"), dtype, cuda)],
                         seed=seed)
