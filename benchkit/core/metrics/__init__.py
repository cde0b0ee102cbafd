"""The metric seam (pure): one object per metric (`metric.Metric`), its gates (`gates`),
and the built-in metrics, registered on import: wall time, instructions, memory, and the
values benchmarks return (asv's mem and peakmem, and track)."""
# registration order is the order gates are listed in messages: time first
from benchkit.core.metrics import wall_time, instructions, memory, values, track  # noqa: F401, I001
from benchkit.core.metrics.gates import Gate
from benchkit.core.metrics.metric import (
    GateName,
    Judged,
    Metric,
    is_metric,
    metric_named,
    register,
    registered,
    unregister,
)

__all__ = ["Gate", "GateName", "Judged", "Metric", "is_metric", "metric_named", "register",
           "registered", "unregister"]
