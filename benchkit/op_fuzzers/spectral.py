"""SpectralOpFuzzer, as torch.utils.benchmark.op_fuzzers.spectral."""
from __future__ import annotations

import math

from benchkit.api.fuzzer import FuzzedParameter, Fuzzer
from benchkit.op_fuzzers.common import STEPS, dense, dims, float_dtype, size_parameters


def _regular_sizes(max_size: int = 16 * 1024, min_size: int = 16) -> list[int]:
    """Sizes 2^i 3^j 5^k in (min_size, max_size]: the sizes FFTs handle fastest."""
    def powers(bound, base):
        return [base ** i for i in range(int(math.log(bound, base)) + 1)]
    sizes = [i * j * k for i in powers(max_size, 2) for j in powers(max_size // i, 3)
             for k in powers(max_size // (i * j), 5) if i * j * k > min_size]
    return sorted(sizes)


REGULAR_SIZES = _regular_sizes()


class SpectralOpFuzzer(Fuzzer):
    """One x of 1-3 dims for FFTs; sizes regular (2^i 3^j 5^k) with `probability_regular`."""

    def __init__(self, *, seed: int, dtype=None, cuda: bool = False,
                 probability_regular: float = 1.0) -> None:
        dtype = float_dtype(dtype, "float64")
        super().__init__(
            parameters=[
                dims("ndim"),
                *size_parameters("regular", REGULAR_SIZES, "table",
                        (probability_regular, 1 - probability_regular), max_size=16 * 1024),
                [FuzzedParameter(f"step_{i}", distribution=STEPS) for i in range(3)]],
            tensors=[dense("x", ("k0", "k1", "k2"), ("step_0", "step_1", "step_2"), "ndim",
                            dtype, cuda)],
            seed=seed)
