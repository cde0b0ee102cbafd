"""Measuring engines: the wall-time loop, the callgrind collector, C++ snippets and the
torch.profiler runner, and the shipping of tasks to child processes."""
