"""What is measured and its statistics (pure): the task and its snippets, Measurement and
MemoryStats, quantiles and units, throughput, parameter grids and scaling fits."""
