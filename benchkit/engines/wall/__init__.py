"""Wall time in this process: the clock seam, the compiled loop, block sizes and the one
measurement loop, chunks behind a speed probe, torch thread counts."""
