"""Decisions on two samples (pure): A/B verdicts per process and per round, sequential
stopping, instruction-count bands, memory changes, and the gates that judge them."""
