"""Who measures what, when: suites, wall time sampled across worker processes, interleaved
A/B sides, callgrind sessions and collections, dask.distributed."""
