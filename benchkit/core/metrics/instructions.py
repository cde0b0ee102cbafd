"""Instructions per run, counted by Callgrind (pure): exact, so a change is any difference
beyond both sides' layout bands, and its gate `instructions>1%` reads that change."""
from __future__ import annotations

from benchkit.core.decisions.bands import instruction_change
from benchkit.core.metrics.metric import GateName, Judged, Metric, register


def _judge(row, gate) -> Judged:
    if not (row.base_instructions and row.new_instructions):
        return Judged()
    change = instruction_change(row.base_instructions, row.new_instructions)
    return Judged(broken=f"{gate}: {change:+.2%} instructions beyond the layout band"
                  if change > gate.limit else None)


INSTRUCTIONS = register(Metric(
    "instructions", "instructions", "instructions per run", exact=True,
    axis=lambda values, unit="": (1.0, "instructions"),
    text=lambda value, unit="": f"{value:,.0f}", from_zero=True, counted=True,
    gates=(GateName("instructions", example="instructions>1%"),),
    figures="instruction counts", hint=" (collect with --callgrind)",
    holds=lambda side, name: name in side.counts, judge=_judge, evidence="callgrind"))
