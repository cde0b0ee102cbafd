"""Instruction counts as data: FunctionCounts, CallgrindStats, the callgrind.out parser and
name standardisation (pure)."""
