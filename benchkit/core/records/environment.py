"""Environment fingerprints as data: reading /proc/cpuinfo text, and which differences
between two fingerprints matter for a comparison. Pure (system.machine reads the machine)."""
from __future__ import annotations

from typing import Any, Mapping

# Fields that make two environments incomparable when they differ.
COMPARABLE_FIELDS = ("cpu_model", "cpu_count", "machine", "python", "torch", "numpy")
# The machine alone (an A/B compares two software environments on purpose).
MACHINE_FIELDS = ("cpu_model", "cpu_count", "machine", "hostname")


def parse_cpu_model(cpuinfo: str) -> str | None:
    """The CPU model name from /proc/cpuinfo text (x86 'model name', ARM 'Model'/'CPU part')."""
    for key in ("model name", "Model", "Hardware", "cpu model"):
        for line in cpuinfo.splitlines():
            name, sep, value = line.partition(":")
            if sep and name.strip() == key and value.strip():
                return value.strip()
    return None


def single(env: Mapping[str, Any]) -> Mapping[str, Any]:
    """A merged results file's first environment, or the environment itself."""
    if "merged" in env and env["merged"]:
        return env["merged"][0]
    return env


def listing_difference(base: list[str], new: list[str], limit: int = 6) -> str:
    """'+only_in_new, -only_in_base' for two site-packages listings (the first `limit`)."""
    added = [f"+{n}" for n in sorted(set(new) - set(base))]
    removed = [f"-{n}" for n in sorted(set(base) - set(new))]
    changes = added + removed
    more = f", ... ({len(changes) - limit} more)" if len(changes) > limit else ""
    return ", ".join(changes[:limit]) + more


def differences(base: Mapping[str, Any], new: Mapping[str, Any],
                fields: tuple[str, ...] = COMPARABLE_FIELDS) -> list[str]:
    """Human-readable list of fingerprint fields that differ in ways that matter for timing."""
    out = []
    for key in fields:
        if base.get(key) != new.get(key):
            out.append(f"{key}: {base.get(key)} vs {new.get(key)}")
    return out


# What keeps two series apart on one machine: the interpreter and the libraries that move
# timings when the code under test does not.
ENVIRONMENT_FIELDS = ("python", "torch", "numpy")


def environment_key(env: Mapping[str, Any]) -> str:
    """A short name of a fingerprint's software environment (`py3.11.7-torch2.13.0-numpy2.1.0`):
    results whose keys differ are never pooled into one history series."""
    parts = []
    for name in ENVIRONMENT_FIELDS:
        value = env.get(name)
        if isinstance(value, (str, int, float)) and str(value):
            parts.append(f"{'py' if name == 'python' else name}{value}")
    return "-".join(parts)
