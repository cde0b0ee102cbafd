"""Wall time sampled across fresh worker processes: independent runs and interleaved A/B."""
