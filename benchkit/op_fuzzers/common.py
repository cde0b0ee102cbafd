"""What the op fuzzers share: size tables, step weights, limits and parameter builders.
The order of the parameters is the order of the random draws, so it is part of the
contract (it matches torch's)."""
from __future__ import annotations

import math

from benchkit.api.fuzzer import FuzzedParameter, FuzzedSparseTensor, FuzzedTensor, ParameterAlias

MIN_DIM_SIZE = 16
MAX_DIM_SIZE = 16 * 1024 ** 2
POW_TWO_SIZES = tuple(2 ** i for i in range(int(math.log2(MIN_DIM_SIZE)),
                                            int(math.log2(MAX_DIM_SIZE)) + 1))
STEPS = {1: 0.8, 2: 0.06, 4: 0.06, 8: 0.04, 16: 0.04}
TENSOR_LIMITS = dict(min_elements=4 * 1024, max_elements=32 * 1024 ** 2)
ALLOCATION_LIMIT = 2 * 1024 ** 3


def uniform_choice(sizes) -> dict:
    """Each of `sizes` equally likely."""
    return {size: 1. / len(sizes) for size in sizes}


def size_parameters(name: str, table: tuple | list, first: str, weights: tuple[float, float],
           max_size: int = MAX_DIM_SIZE) -> list:
    """k_any_i (log-uniform), k_<name>_i (from `table`), and k_i choosing between them."""
    anys = [FuzzedParameter(f"k_any_{i}", minval=MIN_DIM_SIZE, maxval=max_size,
                            distribution="loguniform") for i in range(3)]
    table_params = [FuzzedParameter(f"k_{name}_{i}", distribution=uniform_choice(table))
                    for i in range(3)]
    order = {"any": "k_any_{}", "table": f"k_{name}_" + "{}"}
    picks = [FuzzedParameter(f"k{i}", distribution={
        ParameterAlias(order[first].format(i)): weights[0],
        ParameterAlias(order["table" if first == "any" else "any"].format(i)): weights[1]},
        strict=True) for i in range(3)]
    return [anys, table_params, picks]


def pow2_sizes() -> list:
    """Sizes k0..k2: mostly log-uniform, sometimes a power of two."""
    return size_parameters("pow2", POW_TWO_SIZES, "any", (0.8, 0.2))


def dims(name: str) -> FuzzedParameter:
    """How many dimensions a tensor has: 1, 2 or 3."""
    return FuzzedParameter(name, distribution={1: 0.3, 2: 0.4, 3: 0.3}, strict=True)


def random_value() -> FuzzedParameter:
    """The seed of the tensors' contents."""
    return FuzzedParameter("random_value", minval=0, maxval=2 ** 32 - 1, distribution="uniform")


def dense(name, size, steps, dim, dtype, cuda) -> FuzzedTensor:
    """A dense tensor; only x carries the element limits (as torch's fuzzers)."""
    return FuzzedTensor(name=name, size=size, steps=steps, probability_contiguous=0.75,
                        max_allocation_bytes=ALLOCATION_LIMIT, dim_parameter=dim, dtype=dtype,
                        cuda=cuda, **(TENSOR_LIMITS if name == "x" else {}))


def sparse(name, size, dtype, cuda) -> FuzzedSparseTensor:
    """A sparse tensor drawn from the sparse parameters."""
    return FuzzedSparseTensor(name=name, size=size, dim_parameter="dim_parameter",
                              sparse_dim="sparse_dim", density="density",
                              coalesced="coalesced", dtype=dtype, cuda=cuda, **TENSOR_LIMITS)


def float_dtype(dtype, default="float32"):
    """`dtype`, or torch's `default` floating type."""
    if dtype is None:
        import torch
        return getattr(torch, default)
    return dtype


def sparse_parameters(with_y: bool) -> list:
    """The parameters of the sparse fuzzers (with y's sizes for the binary one)."""
    return [dims("dim_parameter"),
            FuzzedParameter("sparse_dim", distribution={1: 0.4, 2: 0.4, 3: 0.2}, strict=True),
            *pow2_sizes(),
            *([[FuzzedParameter(f"y_k{i}", distribution={ParameterAlias(f"k{i}"): 1.0},
                                strict=True) for i in range(3)]] if with_y else []),
            FuzzedParameter("density", distribution={0.1: 0.4, 0.05: 0.3, 0.01: 0.3}),
            FuzzedParameter("coalesced", distribution={True: 0.5, False: 0.5}),
            random_value()]
