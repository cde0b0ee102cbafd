"""Pure FLOP and byte estimates from recorded input shapes and dtypes.

torch.profiler's exported JSON carries no FLOPs and no output shapes, only `Input Dims`,
`Input type` and `Concrete Inputs`; these formulas recover them for common ops.
"""
from __future__ import annotations

import math
import re
from typing import Any

DTYPE_BYTES = {
    "float": 4, "double": 8, "c10::Half": 2, "c10::BFloat16": 2, "long int": 8, "int": 4,
    "short int": 2, "signed char": 1, "unsigned char": 1, "bool": 1,
    "c10::complex<float>": 8, "c10::complex<double>": 16, "c10::Float8_e4m3fn": 1,
    "c10::Float8_e5m2": 1,
}
ELEMENTWISE = {
    "add", "add_", "sub", "sub_", "mul", "mul_", "div", "div_", "relu", "relu_", "sigmoid",
    "tanh", "exp", "log", "sqrt", "rsqrt", "neg", "abs", "gelu", "silu", "pow", "gt", "lt", "ge",
    "le", "eq", "ne", "where", "clamp", "clamp_", "maximum", "minimum", "threshold", "copy_",
}
REDUCTIONS = {"sum", "mean", "amax", "amin", "max", "min", "prod", "norm", "var", "std",
              "argmax", "argmin", "all", "any", "nonzero"}
SOFTMAX = {"softmax", "_softmax", "log_softmax", "_log_softmax"}  # ~5 FLOPs per element


# A dimension or an element count beyond these is not a real tensor: the op's cost is unknown.
MAX_DIM = 1 << 48
MAX_NUMEL = 1 << 62
MAX_NDIM = 64


def _numel(shape) -> int:
    return math.prod(shape) if shape else 1


def _shape(value: Any) -> list[int] | None:
    """A shape: a list of at most MAX_NDIM ints in [0, MAX_DIM] with a product of at most
    MAX_NUMEL; None for anything else (the file's word is never used in arithmetic)."""
    if not isinstance(value, list) or len(value) > MAX_NDIM:
        return None
    if not all(type(v) is int and 0 <= v <= MAX_DIM for v in value):
        return None
    return value if _numel(value) <= MAX_NUMEL else None


def _broadcast(shapes: list[list[int]]) -> list[int]:
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for axis in range(ndim):
        sizes = [s[axis - ndim + len(s)] for s in shapes if axis - ndim + len(s) >= 0]
        out.append(max(sizes) if sizes else 1)
    return out


_INT_LIST = re.compile(r"^\s*[\[(]?\s*(\d{1,9}(?:\s*,\s*\d{1,9})*)?\s*,?\s*[\])]?\s*$")


def _int_list(text: Any) -> list[int] | None:
    """'[2, 2]', '(1,)' or '3' (a Concrete Input) as non-negative ints; None otherwise."""
    if not isinstance(text, str) or len(text) > 200:
        return None
    match = _INT_LIST.match(text)
    if not match or match.group(1) is None:
        return None
    return [int(v) for v in match.group(1).split(",")]


def op_cost(name: str, args: dict[str, Any]) -> tuple[int | None, int | None]:
    """(FLOPs, bytes moved) of one op call, or None where the op is unknown."""
    dims = args.get("Input Dims") or []
    types = args.get("Input type") or []
    if not isinstance(dims, list) or not isinstance(types, list):
        return None, None
    tensors = []
    for d, t in zip(dims, types):
        size = DTYPE_BYTES.get(t) if isinstance(t, str) else None
        if size and isinstance(d, list) and d:
            shape = _shape(d)
            if shape is None:
                return None, None
            tensors.append((shape, size))
    base = name.split("::")[-1]
    shapes = [d for d, _ in tensors]
    elem = tensors[0][1] if tensors else 4
    in_bytes = sum(_numel(d) * b for d, b in tensors)
    flops = out_numel = None
    try:
        if base in ("mm", "addmm") and len(shapes) >= 2:
            a, b = shapes[-2], shapes[-1]
            m, k, n = a[0], a[1], b[1]
            flops, out_numel = 2 * m * k * n, m * n
        elif base in ("bmm", "baddbmm") and len(shapes) >= 2:
            a, b = shapes[-2], shapes[-1]
            flops, out_numel = 2 * a[0] * a[1] * a[2] * b[2], a[0] * a[1] * b[2]
        elif base == "matmul" and len(shapes) >= 2:
            a, b = shapes[0], shapes[1]
            a2 = a if len(a) > 1 else [1] + a
            b2 = b if len(b) > 1 else b + [1]
            batch = _numel(_broadcast([a2[:-2], b2[:-2]]))
            flops, out_numel = 2 * batch * a2[-2] * a2[-1] * b2[-1], batch * a2[-2] * b2[-1]
        elif base == "linear" and len(shapes) >= 2:
            x, w = shapes[0], shapes[1]
            rows = _numel(x[:-1])
            flops, out_numel = 2 * rows * x[-1] * w[0], rows * w[0]
        elif base in ("conv1d", "conv2d", "conv3d", "convolution", "_convolution") and len(
                shapes) >= 2:
            x, w = shapes[0], shapes[1]
            spatial = len(x) - 2
            concrete = args.get("Concrete Inputs") or []
            concrete = concrete if isinstance(concrete, list) else []
            stride = _int_list(concrete[3]) if len(concrete) > 3 else None
            padding = _int_list(concrete[4]) if len(concrete) > 4 else None
            dilation = _int_list(concrete[5]) if len(concrete) > 5 else None
            stride = (stride or [1]) * (spatial if len(stride or [1]) == 1 else 1)
            padding = (padding or [0]) * (spatial if len(padding or [0]) == 1 else 1)
            dilation = (dilation or [1]) * (spatial if len(dilation or [1]) == 1 else 1)
            if min(stride) < 1 or min(dilation) < 1:
                return None, None
            out_spatial = [
                (x[2 + i] + 2 * padding[i] - dilation[i] * (w[2 + i] - 1) - 1) // stride[i] + 1
                for i in range(spatial)]
            out_numel = x[0] * w[0] * _numel(out_spatial)
            flops = 2 * out_numel * _numel(w[1:])
        elif base in ELEMENTWISE and shapes:
            out_numel = _numel(_broadcast(shapes))
            flops = out_numel if base != "copy_" else 0
        elif base in REDUCTIONS and shapes:
            flops, out_numel = _numel(shapes[0]), 1
        elif base in SOFTMAX and shapes:
            out_numel = _numel(shapes[0])
            flops = 5 * out_numel
    except (IndexError, TypeError, ValueError):
        return None, None
    if flops is None or flops < 0 or (out_numel or 0) < 0:
        return None, None
    return flops, in_bytes + (out_numel or 0) * elem
