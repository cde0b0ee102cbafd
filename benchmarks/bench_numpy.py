"""NumPy snippets: array ops vs the torch equivalents (no torch import for the NumPy ones)."""
from benchkit import Timer, benchmark


@benchmark
def numpy_ops():
    setup = "import numpy as np\nx = np.random.rand({n})"
    return [Timer(stmt, setup.format(n=n), label=label, sub_label=f"n={n}")
            for label, stmt in (("np.sum", "x.sum()"), ("np.sort", "np.sort(x)"),
                                ("np.argwhere", "np.argwhere(x > 0.5)"))
            for n in (128, 65536)]
