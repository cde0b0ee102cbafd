"""Memory engine: a counting allocator preloaded into worker processes, and the counted
blocks of a snippet's loop."""
