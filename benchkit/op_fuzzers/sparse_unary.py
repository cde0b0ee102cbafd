"""UnaryOpSparseFuzzer, as torch.utils.benchmark.op_fuzzers.sparse_unary."""
from __future__ import annotations

from benchkit.api.fuzzer import Fuzzer
from benchkit.op_fuzzers.common import _float, _sparse, _sparse_parameters


class UnaryOpSparseFuzzer(Fuzzer):
    """One sparse COO tensor x."""

    def __init__(self, seed, dtype=None, cuda=False) -> None:
        dtype = _float(dtype)
        super().__init__(parameters=_sparse_parameters(with_y=False),
                         tensors=[_sparse("x", ("k0", "k1", "k2"), dtype, cuda)], seed=seed)
