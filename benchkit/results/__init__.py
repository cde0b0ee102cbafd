"""Results files: environment fingerprint, versioned schema, atomic store."""
from benchkit.results.schema import Results
from benchkit.results.store import load, merge, save

__all__ = ["Results", "load", "merge", "save"]
