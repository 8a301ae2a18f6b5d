"""Natural sort order for names: r2 before r10, outlet2 before outlet10."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from operator import itemgetter
from typing import TypeVar

_DIGITS = re.compile(r"(\d+)")

NaturalKey = tuple[str | int, ...]


def natural_key(text: str) -> NaturalKey:
    """Sort key that compares the digit runs of a name as numbers: the name split at its digit
    runs, each run an int ('r12-pdu-a' -> ('r', 12, '-pdu-a')). Text and numbers alternate
    from a text (empty before a leading digit run, and after a trailing one), so two keys
    compare text with text and number with number, and '' (nothing) sorts first."""
    parts: list[str | int] = _DIGITS.split(text)  # type: ignore[assignment]
    parts[1::2] = map(int, parts[1::2])  # type: ignore[arg-type]
    return tuple(parts)


Item = TypeVar("Item")


def natural_sorted(items: Iterable[Item], name: Callable[[Item], str]) -> list[Item]:
    """``sorted(items, key=lambda i: natural_key(name(i)))``, each key made once."""
    items = list(items)
    keys = map(natural_key, map(name, items))
    return [item for _, item in sorted(zip(keys, items, strict=True), key=itemgetter(0))]
