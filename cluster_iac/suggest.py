"""'Did you mean ...?' for every name lookup."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def closest(name: str, candidates: Iterable[str]) -> str | None:
    """The candidate closest to ``name``, or None when nothing is close."""
    pool = sorted(set(candidates))
    lowered = {c.lower(): c for c in pool}
    if name.lower() in lowered:
        return lowered[name.lower()]
    match = difflib.get_close_matches(name, pool, n=1, cutoff=0.6)
    return match[0] if match else None


def did_you_mean(name: str, candidates: Iterable[str]) -> str | None:
    """A hint sentence for an unknown name, or None."""
    pool = sorted(set(candidates))
    best = closest(name, pool)
    if best is not None:
        return f"did you mean '{best}'?"
    if pool and len(pool) <= 8:
        return "expected one of: " + ", ".join(f"'{c}'" for c in pool)
    return None
