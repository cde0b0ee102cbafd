"""torch.profiler runs of a task, and labelled regions for any Python code."""
