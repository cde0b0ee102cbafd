"""Fuzzer: random, reproducible benchmark inputs (torch.utils.benchmark's Fuzzer API).

Draws come from numpy's legacy `RandomState(seed)` in the same order as torch's Fuzzer, and
torch is seeded from the same stream, so a ported fuzzed benchmark measures the very inputs
(parameters, sizes, layouts, values) it measured under torch.utils.benchmark.
"""
from __future__ import annotations

import functools
import itertools
import sys
from typing import Any, Callable, Iterator

from benchkit.errors import FuzzerError

_DISTRIBUTIONS = ("loguniform", "uniform")


class ParameterAlias:
    """A distribution choice that takes the value of another parameter (e.g. to make
    broadcasting shapes). Chains are allowed; cycles are an error."""

    def __init__(self, alias_to: str) -> None:
        self.alias_to = alias_to

    def __repr__(self) -> str:
        return f"ParameterAlias[alias_to: {self.alias_to}]"


class FuzzedParameter:
    """A named random value: `distribution` is "loguniform", "uniform" (ints when both
    bounds are ints) or a dict {choice: probability} whose probabilities sum to one."""

    def __init__(self, name: str, minval: int | float | None = None,
                 maxval: int | float | None = None,
                 distribution: str | dict[Any, float] | None = None, strict: bool = False):
        self._name, self._minval, self._maxval = name, minval, maxval
        self._distribution = self._check_distribution(distribution)
        self.strict = strict

    @property
    def name(self) -> str:
        """The parameter's name."""
        return self._name

    def _check_distribution(self, distribution):
        if isinstance(distribution, dict):
            if any(p < 0 for p in distribution.values()):
                raise FuzzerError(f"parameter {self._name!r}: probabilities cannot be negative: "
                                  f"{distribution}")
            total = sum(distribution.values())
            if abs(total - 1) > 1e-5:
                raise FuzzerError(f"parameter {self._name!r}: probabilities sum to {total}, not 1; "
                                  "normalise the distribution")
            if self._minval is not None or self._maxval is not None:
                raise FuzzerError(f"parameter {self._name!r}: minval/maxval must be None with a "
                                  "custom distribution")
            return distribution
        if distribution not in _DISTRIBUTIONS:
            raise FuzzerError(f"parameter {self._name!r}: unknown distribution {distribution!r}; "
                              f"use one of {_DISTRIBUTIONS} or a dict of probabilities")
        if self._minval is None or self._maxval is None:
            raise FuzzerError(f"parameter {self._name!r}: {distribution} needs minval and maxval")
        if distribution == "loguniform" and self._minval <= 0:
            raise FuzzerError(f"parameter {self._name!r}: loguniform needs minval > 0")
        return distribution

    def sample(self, state):
        """One value from `state` (a numpy RandomState)."""
        import numpy as np
        if self._distribution == "loguniform":
            value = int(2 ** state.uniform(low=np.log2(self._minval), high=np.log2(self._maxval)))
            return min(max(value, self._minval), self._maxval)
        if self._distribution == "uniform":
            if isinstance(self._minval, int) and isinstance(self._maxval, int):
                return int(state.randint(low=self._minval, high=self._maxval + 1))
            return state.uniform(low=self._minval, high=self._maxval)
        choices = list(self._distribution)
        index = state.choice(np.arange(len(choices)), p=tuple(self._distribution.values()))
        return choices[index]


def _dtype_size(dtype) -> int:
    import torch
    if dtype == torch.bool:
        return 1
    if dtype.is_floating_point or dtype.is_complex:
        return torch.finfo(dtype).bits // 8
    return torch.iinfo(dtype).bits // 8


def _prod(values, base: int = 1) -> int:
    return functools.reduce(lambda x, y: int(x) * int(y), values, base)


class FuzzedTensor:
    """A tensor whose size (and steps, layout) come from fuzzed parameters."""

    def __init__(self, name: str, size: tuple, steps: tuple | None = None,
                 probability_contiguous: float = 0.5, min_elements: int | None = None,
                 max_elements: int | None = None, max_allocation_bytes: int | None = None,
                 dim_parameter: str | None = None, roll_parameter: str | None = None,
                 dtype=None, cuda: bool = False,
                 tensor_constructor: Callable | None = None) -> None:
        self._name, self._size, self._steps = name, size, steps
        self._probability_contiguous = probability_contiguous
        self._min_elements, self._max_elements = min_elements, max_elements
        self._max_allocation_bytes = max_allocation_bytes
        self._dim_parameter, self._roll_parameter = dim_parameter, roll_parameter
        self._dtype, self._cuda, self._tensor_constructor = dtype, cuda, tensor_constructor

    @property
    def name(self) -> str:
        """The tensor's name."""
        return self._name

    @property
    def dtype(self):
        """The tensor's dtype."""
        if self._dtype is None:
            import torch
            return torch.float32
        return self._dtype

    @staticmethod
    def default_tensor_constructor(size, dtype, **kwargs):
        """torch.rand for floating dtypes, torch.randint otherwise (as torch's Fuzzer)."""
        import torch
        if dtype.is_floating_point or dtype.is_complex:
            return torch.rand(size=size, dtype=dtype, device="cpu")
        return torch.randint(1, 127, size=size, dtype=dtype, device="cpu")

    def _size_and_steps(self, params):
        dim = params[self._dim_parameter] if self._dim_parameter is not None else len(self._size)

        def resolve(values):
            values = tuple(params.get(v, v) if isinstance(v, str) else v for v in values)
            return values[:dim] + (1,) * max(dim - len(values), 0)
        size, steps = resolve(self._size), resolve(self._steps or ())
        return size, steps, tuple(s * st for s, st in zip(size, steps))

    def satisfies_constraints(self, params) -> bool:
        """Whether drawn parameters give a tensor within the size and memory limits."""
        size, _, allocation = self._size_and_steps(params)
        elements = _prod(size)
        allocation_bytes = _prod(allocation, base=_dtype_size(self.dtype))
        too_many = self._max_elements is not None and elements > self._max_elements
        too_few = self._min_elements is not None and elements < self._min_elements
        too_big = (self._max_allocation_bytes is not None
                   and allocation_bytes > self._max_allocation_bytes)
        return not (too_many or too_few or too_big)

    def _make_tensor(self, params, state):
        import numpy as np
        size, steps, allocation = self._size_and_steps(params)
        constructor = self._tensor_constructor or self.default_tensor_constructor
        raw = constructor(size=allocation, dtype=self.dtype, **params)
        if self._cuda:
            raw = raw.cuda()
        dim = len(size)
        order = np.arange(dim)
        if state.rand() > self._probability_contiguous:
            while dim > 1 and np.all(order == np.arange(dim)):
                order = state.permutation(raw.dim())
            raw = raw.permute(tuple(int(i) for i in order)).contiguous()
            raw = raw.permute(tuple(int(i) for i in np.argsort(order)))
        tensor = raw[tuple(slice(0, s * st, st) for s, st in zip(size, steps))]
        properties = {"numel": int(tensor.numel()), "order": order, "steps": steps,
                      "is_contiguous": tensor.is_contiguous(), "dtype": str(self.dtype)}
        return tensor, properties


class Fuzzer:
    """Draws parameter sets that satisfy the constraints and builds tensors from them.

    `take(n)` yields `(tensors, tensor_properties, params)`; the same seed gives the same
    inputs (the torch seed is derived from it too).
    """

    def __init__(self, parameters: list, tensors: list, constraints: list | None = None,
                 seed: int | None = None) -> None:
        import numpy as np
        if seed is None:
            seed = int(np.random.RandomState().randint(0, 2**32 - 1, dtype=np.int64))
        self._seed = seed
        self._parameters = self._unpack(parameters, FuzzedParameter)
        self._tensors = self._unpack(tensors, FuzzedTensor)
        self._constraints = tuple(constraints or ())
        overlap = {p.name for p in self._parameters} & {t.name for t in self._tensors}
        if overlap:
            raise FuzzerError(f"names used by both parameters and tensors: {sorted(overlap)}")
        self._rejections = self._total_generated = 0

    @staticmethod
    def _unpack(values, cls):
        return tuple(itertools.chain.from_iterable(
            [v] if isinstance(v, cls) else v for v in values))

    def take(self, n: int) -> Iterator[tuple[dict, dict, dict]]:
        """`n` draws: (tensors, tensor properties, parameters) each."""
        import numpy as np
        state = np.random.RandomState(self._seed)
        torch_seed = state.randint(low=0, high=2**63, dtype=np.int64)
        if self._tensors or "torch" in sys.modules:
            import torch
            torch.manual_seed(torch_seed)
        for _ in range(n):
            params = self._generate(state)
            tensors, properties = {}, {}
            for t in self._tensors:
                tensors[t.name], properties[t.name] = t._make_tensor(params, state)
            yield tensors, properties, params

    @property
    def rejection_rate(self) -> float:
        """The share of draws rejected by the constraints so far."""
        return self._rejections / self._total_generated if self._total_generated else 0.0

    def _generate(self, state) -> dict:
        strict: dict[str, Any] = {}
        for _ in range(1000):
            candidate = {}
            for p in self._parameters:
                if p.strict:
                    if p.name not in strict:
                        strict[p.name] = p.sample(state)
                    candidate[p.name] = strict[p.name]
                else:
                    candidate[p.name] = p.sample(state)
            candidate = self._resolve_aliases(candidate)
            self._total_generated += 1
            if all(f(candidate) for f in self._constraints) and all(
                    t.satisfies_constraints(candidate) for t in self._tensors):
                return candidate
            self._rejections += 1
        raise FuzzerError("no valid parameter set in 1000 draws; loosen the constraints")

    @staticmethod
    def _resolve_aliases(params: dict) -> dict:
        params = dict(params)
        pending = sum(isinstance(v, ParameterAlias) for v in params.values())
        while pending:
            for key, value in list(params.items()):
                if isinstance(value, ParameterAlias):
                    if value.alias_to not in params:
                        raise FuzzerError(f"{key!r} aliases unknown parameter {value.alias_to!r}")
                    params[key] = params[value.alias_to]
            now = sum(isinstance(v, ParameterAlias) for v in params.values())
            if now == pending:
                raise FuzzerError(f"ParameterAlias cycle among {sorted(params)}")
            pending = now
        return params


class FuzzedSparseTensor(FuzzedTensor):
    """A sparse COO tensor whose size, sparse dimensions, density and coalescing come from
    fuzzed parameters (torch.utils.benchmark's FuzzedSparseTensor; the parameter values are
    read from the names `density`, `coalesced` and, when `sparse_dim` is given,
    `sparse_dim`, as torch reads them)."""

    def __init__(self, name: str, size: tuple, min_elements: int | None = None,
                 max_elements: int | None = None, dim_parameter: str | None = None,
                 sparse_dim: str | None = None, nnz: str | None = None,
                 density: str | None = None, coalesced: str | None = None, dtype=None,
                 cuda: bool = False) -> None:
        super().__init__(name=name, size=size, min_elements=min_elements,
                         max_elements=max_elements, dim_parameter=dim_parameter, dtype=dtype,
                         cuda=cuda)
        self._density, self._coalesced, self._sparse_dim = density, coalesced, sparse_dim

    @staticmethod
    def sparse_tensor_constructor(size, dtype, sparse_dim, nnz, is_coalesced):
        """A COO tensor with `nnz` random indices (values doubled, indices repeated, when not
        coalesced, so the sparsity pattern is the same either way)."""
        import numbers

        import torch
        if isinstance(size, numbers.Number):
            size = [size] * sparse_dim
        if all(size[d] <= 0 for d in range(sparse_dim)) and nnz != 0:
            raise FuzzerError(f"no room for {nnz} non-zeros in a sparse tensor of size {size}")
        values_size = [nnz] + list(size[sparse_dim:])
        if dtype.is_floating_point:
            values = torch.rand(size=values_size, dtype=dtype, device="cpu")
        else:
            values = torch.randint(1, 127, size=values_size, dtype=dtype, device="cpu")
        indices = torch.rand(sparse_dim, nnz, device="cpu")
        indices.mul_(torch.tensor(size[:sparse_dim]).unsqueeze(1).to(indices))
        indices = indices.to(torch.long)
        if not is_coalesced:
            values = torch.cat([values, torch.randn_like(values)], 0)
            indices = torch.cat([indices, indices], 1)
        tensor = torch.sparse_coo_tensor(indices, values, torch.Size(size))
        return tensor.coalesce() if is_coalesced else tensor

    def _make_tensor(self, params, state):
        import math
        size, _, _ = self._size_and_steps(params)
        density = params["density"]
        nnz = math.ceil(sum(size) * density)
        if nnz > sum(size):
            raise FuzzerError(f"tensor {self.name!r}: density {density} asks for more non-zeros "
                              "than elements")
        sparse_dim = min(params["sparse_dim"] if self._sparse_dim else len(size), len(size))
        tensor = self.sparse_tensor_constructor(size, self.dtype, sparse_dim, nnz,
                                                params["coalesced"])
        if self._cuda:
            tensor = tensor.cuda()
        properties = {"numel": int(tensor.numel()), "shape": tensor.size(),
                      "is_coalesced": tensor.is_coalesced(), "density": density,
                      "sparsity": 1.0 - density, "sparse_dim": tensor.sparse_dim(),
                      "dense_dim": tensor.dense_dim(),
                      "is_hybrid": len(size[tensor.sparse_dim():]) > 0,
                      "dtype": str(self.dtype)}
        return tensor, properties
