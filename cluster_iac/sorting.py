"""Natural sort order for names: r2 before r10, outlet2 before outlet10."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from operator import itemgetter
from typing import TypeVar

_DIGITS = re.compile(r"(\d+)")


def natural_key(text: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key that compares the digit runs of a name as numbers."""
    return tuple((0, int(part)) if part.isdigit() else (1, part)
                 for part in _DIGITS.split(text) if part)


_ONE_NUMBER = re.compile(r"([^0-9]*)([0-9]+)([^0-9]*)")
Item = TypeVar("Item")


def natural_sorted(items: Iterable[Item], name: Callable[[Item], str]) -> list[Item]:
    """``sorted(items, key=lambda i: natural_key(name(i)))``, faster when every name is ASCII
    with one digit run ('g00042', 'r12-pdu-a'): then (text before, number, text after)
    orders them as natural_key does (an empty text sorts first, as a number before text and a
    shorter key before a longer one do there)."""
    items = list(items)
    names = list(map(name, items))
    found = list(map(_ONE_NUMBER.fullmatch, names)) if "".join(names).isascii() else [None]
    if None in found:
        return sorted(items, key=lambda item: natural_key(name(item)))
    keys = [(m[1], int(m[2]), m[3]) for m in found]  # type: ignore[index]
    return [item for _, item in sorted(zip(keys, items, strict=True), key=itemgetter(0))]
