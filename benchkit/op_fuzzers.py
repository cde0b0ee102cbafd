"""The op fuzzers torch.utils.benchmark ships, drawing the same cases for the same seed:
BinaryOpFuzzer, UnaryOpFuzzer, SpectralOpFuzzer, BinaryOpSparseFuzzer, UnaryOpSparseFuzzer.

The order of the parameters below is the order of the random draws, so it is part of the
contract (it matches torch's).
"""
from __future__ import annotations

import math

from benchkit.api.fuzzer import (FuzzedParameter, FuzzedSparseTensor, FuzzedTensor, Fuzzer,
                                 ParameterAlias)

MIN_DIM_SIZE = 16
MAX_DIM_SIZE = 16 * 1024 ** 2
POW_TWO_SIZES = tuple(2 ** i for i in range(int(math.log2(MIN_DIM_SIZE)),
                                            int(math.log2(MAX_DIM_SIZE)) + 1))
STEPS = {1: 0.8, 2: 0.06, 4: 0.06, 8: 0.04, 16: 0.04}
TENSOR_LIMITS = dict(min_elements=4 * 1024, max_elements=32 * 1024 ** 2)
ALLOCATION_LIMIT = 2 * 1024 ** 3


def _uniform_choice(sizes) -> dict:
    return {size: 1. / len(sizes) for size in sizes}


def _sizes(name: str, table: tuple | list, first: str, weights: tuple[float, float],
           max_size: int = MAX_DIM_SIZE) -> list:
    """k_any_i (log-uniform), k_<name>_i (from `table`), and k_i choosing between them."""
    anys = [FuzzedParameter(f"k_any_{i}", minval=MIN_DIM_SIZE, maxval=max_size,
                            distribution="loguniform") for i in range(3)]
    table_params = [FuzzedParameter(f"k_{name}_{i}", distribution=_uniform_choice(table))
                    for i in range(3)]
    order = {"any": "k_any_{}", "table": f"k_{name}_" + "{}"}
    picks = [FuzzedParameter(f"k{i}", distribution={
        ParameterAlias(order[first].format(i)): weights[0],
        ParameterAlias(order["table" if first == "any" else "any"].format(i)): weights[1]},
        strict=True) for i in range(3)]
    return [anys, table_params, picks]


def _dims(name: str) -> FuzzedParameter:
    return FuzzedParameter(name, distribution={1: 0.3, 2: 0.4, 3: 0.3}, strict=True)


def _random_value() -> FuzzedParameter:
    return FuzzedParameter("random_value", minval=0, maxval=2 ** 32 - 1, distribution="uniform")


def _dense(name, size, steps, dim, dtype, cuda) -> FuzzedTensor:
    return FuzzedTensor(name=name, size=size, steps=steps, probability_contiguous=0.75,
                        max_allocation_bytes=ALLOCATION_LIMIT, dim_parameter=dim, dtype=dtype,
                        cuda=cuda, **(TENSOR_LIMITS if name == "x" else {}))


def _sparse(name, size, dtype, cuda) -> FuzzedSparseTensor:
    return FuzzedSparseTensor(name=name, size=size, dim_parameter="dim_parameter",
                              sparse_dim="sparse_dim", density="density",
                              coalesced="coalesced", dtype=dtype, cuda=cuda, **TENSOR_LIMITS)


def _float(dtype, default="float32"):
    if dtype is None:
        import torch
        return getattr(torch, default)
    return dtype


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
        dtype = _float(dtype, "float64")
        super().__init__(
            parameters=[
                _dims("ndim"),
                *_sizes("regular", REGULAR_SIZES, "table",
                        (probability_regular, 1 - probability_regular), max_size=16 * 1024),
                [FuzzedParameter(f"step_{i}", distribution=STEPS) for i in range(3)]],
            tensors=[_dense("x", ("k0", "k1", "k2"), ("step_0", "step_1", "step_2"), "ndim",
                            dtype, cuda)],
            seed=seed)


def _sparse_parameters(with_y: bool) -> list:
    return [_dims("dim_parameter"),
            FuzzedParameter("sparse_dim", distribution={1: 0.4, 2: 0.4, 3: 0.2}, strict=True),
            *_sizes("pow2", POW_TWO_SIZES, "any", (0.8, 0.2)),
            *([[FuzzedParameter(f"y_k{i}", distribution={ParameterAlias(f"k{i}"): 1.0},
                                strict=True) for i in range(3)]] if with_y else []),
            FuzzedParameter("density", distribution={0.1: 0.4, 0.05: 0.3, 0.01: 0.3}),
            FuzzedParameter("coalesced", distribution={True: 0.5, False: 0.5}),
            _random_value()]


class BinaryOpSparseFuzzer(Fuzzer):
    """Pairs of sparse COO tensors x, y of the same size."""

    def __init__(self, seed, dtype=None, cuda=False) -> None:
        dtype = _float(dtype)
        super().__init__(parameters=_sparse_parameters(with_y=True),
                         tensors=[_sparse("x", ("k0", "k1", "k2"), dtype, cuda),
                                  _sparse("y", ("y_k0", "y_k1", "y_k2"), dtype, cuda)],
                         seed=seed)


class UnaryOpSparseFuzzer(Fuzzer):
    """One sparse COO tensor x."""

    def __init__(self, seed, dtype=None, cuda=False) -> None:
        dtype = _float(dtype)
        super().__init__(parameters=_sparse_parameters(with_y=False),
                         tensors=[_sparse("x", ("k0", "k1", "k2"), dtype, cuda)], seed=seed)
