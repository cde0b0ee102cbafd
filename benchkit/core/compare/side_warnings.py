"""Warnings about what differs between the two sides of a comparison other than the code
(pure): the machines, and the controls recorded with instruction counts (collector revision,
installed packages) that can move counts with no change to the code measured."""
from __future__ import annotations

from benchkit.core.records import environment
from benchkit.core.records.schema import Results


def machine_warnings(base: Results, new: Results) -> list[str]:
    """Say so when the two sides ran, or counted instructions, on different machines."""
    b, n = environment.single(base.environment), environment.single(new.environment)
    out = []
    if b.get("hostname") and n.get("hostname") and b["hostname"] != n["hostname"]:
        out.append(f"measured on different machines: {b['hostname']} vs {n['hostname']}")
    hosts = [sorted({(s.metadata or {}).get("host") for s in r.callgrind} - {None})
             for r in (base, new)]
    if hosts[0] and hosts[1] and hosts[0] != hosts[1]:
        out.append(f"instruction counts from different machines: {', '.join(hosts[0])} vs "
                   f"{', '.join(hosts[1])}")
    return out


# Controls recorded with instruction counts that can move them with no change to the code
# measured: (what differs, advice).
COUNT_CONTROLS = {
    "collector_revision": (
        "collector revisions", "counts can move by a fraction of a percent between revisions; "
        "collect both sides with the same benchkit to judge small changes"),
    "site_packages": (
        "sets of installed packages", "counts can move by about 0.2 % with the packages "
        "installed; collect with --layouts so that only changes outside the band are claimed"),
}


def _control_values(results: Results, key: str) -> set[str | None]:
    return {((s.metadata or {}).get("controls") or {}).get(key) for s in results.callgrind}


def collector_warnings(base: Results, new: Results) -> list[str]:
    """Say so when the two sides' counts (or one side's parts) come from different collector
    revisions or environments with different packages installed."""
    out = []
    for key, (what, advice) in COUNT_CONTROLS.items():
        values = {"BASE": _control_values(base, key), "NEW": _control_values(new, key)}
        if key == "site_packages":   # not recorded before this control existed: no claim
            values = {side: v - {None} for side, v in values.items()}
        if not values["BASE"] or not values["NEW"]:
            continue
        lines = [f"{side}'s instruction counts come from {len(v)} {what} "
                 f"({', '.join(sorted(x or 'unrecorded' for x in v))})"
                 for side, v in values.items() if len(v) > 1]
        if not lines and values["BASE"] != values["NEW"]:
            b, n = (next(iter(values[side])) or "unrecorded" for side in ("BASE", "NEW"))
            lines.append(f"instruction counts from different {what}: {b} vs {n}"
                         + (_listing_change(base, new) if key == "site_packages" else ""))
        out += [f"{line} ({advice})" for line in lines]
    return out


def _listing_change(base: Results, new: Results) -> str:
    listings = [environment.single(r.environment).get("site_packages") for r in (base, new)]
    if not all(isinstance(listing, list) for listing in listings):
        return ""
    return f" [{environment.listing_difference(*listings)}]"
