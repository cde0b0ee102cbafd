"""Common torch ops across sizes and thread counts."""
from benchkit import Timer, benchmark

SIZES = (64, 4096, 262144)


@benchmark
def elementwise():
    return [Timer(f"torch.{op}(x, y)", f"x = torch.rand({n}); y = torch.rand({n})",
                  label=f"torch.{op}", sub_label=f"n={n}", description="1 thread")
            for op in ("add", "mul") for n in SIZES]


@benchmark
def reductions():
    return [Timer(f"x.{op}()", f"x = torch.rand({n})", label=f"Tensor.{op}", sub_label=f"n={n}")
            for op in ("sum", "max") for n in SIZES]


@benchmark
def matmul_threads():
    return [Timer("a @ b", f"a = torch.rand({n}, {n}); b = torch.rand({n}, {n})",
                  label="matmul", sub_label=f"{n}x{n}", num_threads=threads,
                  description=f"{threads} thread{'s' if threads > 1 else ''}")
            for n in (32, 256) for threads in (1, 2)]


@benchmark
def softmax():
    return Timer("torch.softmax(x, dim=-1)", "x = torch.rand(64, 1024)", label="softmax",
                 sub_label="64x1024")
