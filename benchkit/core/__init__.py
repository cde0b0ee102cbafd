"""The pure core. Nothing here starts a process, opens a file, reads a clock or prints.

- `measure`: the task, Measurement and MemoryStats, statistics, throughput, scaling fits;
- `decisions`: A/B verdicts, sequential stopping, instruction bands, memory changes, gates;
- `records`: benchmark identities, reported values, the results schema, environments;
- `compare`: two result sets side by side, the Compare table model, reports;
- `callgrind`: FunctionCounts, CallgrindStats and the callgrind.out parser;
- `trace`: profiler traces, their analysis and diffs;
- `history`: series per commit, their steps, and the dashboard's pages;
- `enums` and `text`: text-valued enums and strings made safe to print, used by all.
"""
