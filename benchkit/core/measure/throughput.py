"""Throughput: the work one run states (TaskSpec.elements, TaskSpec.bytes) over its time,
written as criterion and Google Benchmark users read it. Pure."""
from __future__ import annotations

from benchkit.core.measure.task import TaskSpec

_SI = ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))
_BINARY = ((2 ** 40, "Ti"), (2 ** 30, "Gi"), (2 ** 20, "Mi"), (2 ** 10, "Ki"))


def _scaled(value: float, prefixes) -> tuple[float, str]:
    for factor, prefix in prefixes:
        if value >= factor:
            return value / factor, prefix
    return value, ""


def rates(spec: TaskSpec, seconds: float) -> list[str]:
    """'123.4 Melem/s', '1.9 GiB/s': the rates of the work `spec` states, done in
    `seconds` per run (none where it states no work)."""
    if seconds <= 0:
        return []
    out = []
    if spec.elements:
        value, prefix = _scaled(spec.elements / seconds, _SI)
        out.append(f"{value:.4g} {prefix}elem/s")
    if spec.bytes:
        value, prefix = _scaled(spec.bytes / seconds, _BINARY)
        out.append(f"{value:.4g} {prefix}B/s")
    return out


def per_unit(spec: TaskSpec, amount: float, what: str) -> list[str]:
    """'12.5 instructions/element', '0.8 instructions/byte' for `amount` per run."""
    out = []
    if spec.elements:
        out.append(f"{amount / spec.elements:.4g} {what}/element")
    if spec.bytes:
        out.append(f"{amount / spec.bytes:.4g} {what}/byte")
    return out
