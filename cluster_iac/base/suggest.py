"""'Did you mean ...?' for every name lookup."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable


def closest(name: str, candidates: Iterable[str]) -> str | None:
    """The candidate closest to ``name``, or None when nothing is close. Candidates of the
    same family come first: those sharing a model token of ``name`` (h200, b300, gb300, cx7:
    letters then digits), so 'hgx-h200' suggests an H200 platform before 'hgx-h100-8gpu'."""
    pool = sorted(set(candidates))
    lowered = {c.lower(): c for c in pool}
    if name.lower() in lowered:
        return lowered[name.lower()]
    family = _family(name)
    kin = [c for c in pool if family & _family(c)] if family else []
    if kin:  # a shared model token is the strongest likeness: the nearest of them, however far
        return max(kin, key=lambda c: difflib.SequenceMatcher(None, name, c).ratio())
    match = difflib.get_close_matches(name, pool, n=1, cutoff=0.6)
    return match[0] if match else None


_MODEL_TOKEN = re.compile(r"[a-z]+\d+[a-z]*\d*")


def _family(name: str) -> set[str]:
    """The model tokens of a name: 'hgx-h200-8gpu' -> {'h200'} (counts such as '8gpu' and
    '80gb', which start with a digit, are no family)."""
    return {t for t in re.split(r"[-_.]", name.lower()) if _MODEL_TOKEN.fullmatch(t)}


def did_you_mean(name: str, candidates: Iterable[str]) -> str | None:
    """A hint sentence for an unknown name, or None."""
    pool = sorted(set(candidates))
    best = closest(name, pool)
    if best is not None:
        return f"did you mean '{best}'?"
    if pool and len(pool) <= 8:
        return "expected one of: " + ", ".join(f"'{c}'" for c in pool)
    return None
