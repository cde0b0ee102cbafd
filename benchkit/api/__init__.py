"""The public API facade: Timer, Compare, the fuzzers and conversions from
torch.utils.benchmark. `import benchkit` re-exports these names."""
