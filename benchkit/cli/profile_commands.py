"""Profiling commands (analyze, trace-diff); filled in with the profiling side."""
COMMANDS: dict = {}


def add_parsers(sub) -> None:
    return None
