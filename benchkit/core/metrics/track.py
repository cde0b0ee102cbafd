"""asv's `track_` benchmarks (pure): a number the benchmark returns, in the unit it declares
("items", "ratio"), measured (it may vary between processes). Its gate `track>5%` breaks
when NEW's median is more than 5 % above BASE's."""
from __future__ import annotations

from benchkit.core.metrics.metric import register
from benchkit.core.metrics.values import valued_metric

TRACK = register(valued_metric("track", "", "track"))
