"""The seed tutorials' snippets as a benchkit suite (`benchkit run benchmarks/bench_seed.py`)."""
from benchkit import Timer, benchmark

MASK_SETUP = """
import numpy as np
linear = torch.nn.Linear(500, 10)
inp = torch.rand(128, 500)
mask = torch.rand((64, 64, 64), dtype=torch.{dtype})
threshold = linear(inp).sum(axis=1).mean().item()
"""


@benchmark(fail_on="slower>10%")
def mul():
    """seed 003: x * y on two 128-element tensors."""
    return Timer("x * y", "x = torch.ones((128,))\ny = torch.ones((128,))",
                 label="x * y", sub_label="{128} x {128}")


@benchmark(fail_on="slower>10%")
def mul_broadcast():
    """seed 003: the broadcasting {128} x {1} case."""
    return Timer("x * y", "x = torch.ones((128,))\ny = torch.ones((1,))",
                 label="x * y", sub_label="{128} x {1}")


@benchmark
def linear_forward():
    """seed 000: the module's LINEAR PASS."""
    return Timer("linear(inp)", "linear = torch.nn.Linear(500, 10)\ninp = torch.rand(128, 500)",
                 label="nn.Linear(500, 10)", sub_label="forward, batch 128")


@benchmark
def mask_indices():
    """seed 000: MASK INDICES, NumPy argwhere round trip vs torch.nonzero, double vs float."""
    timers = []
    for dtype in ("double", "float"):
        setup = MASK_SETUP.format(dtype=dtype)
        timers.append(Timer("torch.from_numpy(np.argwhere(mask.numpy() > threshold))", setup,
                            label="mask indices", sub_label="np.argwhere round trip",
                            description=dtype))
        timers.append(Timer("torch.nonzero(mask > threshold)", setup, label="mask indices",
                            sub_label="torch.nonzero", description=dtype))
    return timers
