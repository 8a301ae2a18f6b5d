"""Plain data a column at a time, the walk the YAML and JSON writers share: a column of values
split by type (by_type), and a column of dicts by shape, their keys in order (by_shape).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import groupby

NoneType = type(None)
Records = Sequence[dict[object, object]]


def by_type(values: Sequence[object],
            write: Callable[[type, Sequence[object]], list[str]]) -> list[str]:
    """write(kind, values) for the values of each type, scattered back into place."""
    where: dict[type, list[int]] = {}
    for at, value in enumerate(values):
        where.setdefault(type(value), []).append(at)
    texts = [""] * len(values)
    for kind, found in where.items():
        for at, text in zip(found, write(kind, [values[at] for at in found]), strict=True):
            texts[at] = text
    return texts


def by_shape(values: Records, alike: Callable[[Records, tuple[object, ...]], list[str]],
             entries: Callable[[Records], list[str]]) -> list[str]:
    """Each dict's text, a shape (its keys, in order) at a time: alike(dicts, keys) for the
    dicts of each shape, taken as runs where shapes come in runs (hosts: nodes, then switches,
    then PDUs), else gathered and scattered back. Where shapes are many (one in eight dicts or
    more, as an inventory's groups), and for one dict, entries(dicts) writes all their entries
    as one column."""
    if len(values) == 1:
        return entries(values)
    many = len(values) >= 16
    if many and len(set(map(len, values))) * 8 > len(values):  # no key tuples made then
        return entries(values)
    shapes = list(map(tuple, values))
    kinds = set(shapes)
    if len(kinds) == 1:
        return alike(values, shapes[0])
    if many and len(kinds) * 8 > len(values):
        return entries(values)
    runs = [(shape, len(list(run))) for shape, run in groupby(shapes)]
    texts: list[str] = []
    if len(runs) * 8 <= len(values):
        start = 0
        for shape, size in runs:
            texts += alike(values[start:start + size], shape)
            start += size
        return texts
    groups: dict[tuple[object, ...], list[int]] = {}
    for at, shape in enumerate(shapes):
        groups.setdefault(shape, []).append(at)
    texts = [""] * len(values)
    for shape, where in groups.items():
        for at, text in zip(where, alike([values[at] for at in where], shape), strict=True):
            texts[at] = text
    return texts
