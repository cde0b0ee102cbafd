"""Chrome traces as data: events, FLOP/byte estimates, per-op analysis, diffs, merging and
validation (pure)."""
