"""Plain data a column at a time, the walk the YAML and JSON writers share: a column of values
split by type (by_type), and a column of dicts by shape, their keys in order (by_shape).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import compress, groupby, repeat
from operator import eq
from typing import Any

NoneType = type(None)
Records = Sequence[dict[object, object]]


def by_type(values: Sequence[object],
            write: Callable[[type, Sequence[object]], list[str]]) -> list[str]:
    """write(kind, values) for the values of each type, scattered back into place."""
    types = list(map(type, values))
    return _scattered(values, types, set(types), write)


_FEW = 8  # kinds found by a C pass each (a pass over the values per kind); more: one Python pass


def _scattered(values: Sequence[object], kinds: list[Any], distinct: set[Any],
               write: Callable[[Any, Sequence[object]], list[Any]]) -> list[Any]:
    """write(kind, values of that kind) for each distinct kind (``kinds``: each value's), the
    texts scattered back into the values' places. Each kind's places are found, its values
    gathered and its texts put back by C loops (compress, map), not a Python step a value:
    the kinds are few (a handful of types or shapes) and the values many (300,000 ports)."""
    texts: list[Any] = [""] * len(values)
    places = range(len(values))
    if len(distinct) <= _FEW:  # each kind's places: a C pass over the kinds per kind
        wheres = {kind: list(compress(places, map(eq, repeat(kind), kinds)))
                  for kind in distinct}
    else:  # else one Python pass
        wheres = {}
        for at, kind in enumerate(kinds):
            wheres.setdefault(kind, []).append(at)
    for kind, where in wheres.items():
        written = write(kind, list(map(values.__getitem__, where)))
        if len(written) != len(where):
            raise ValueError(f"{len(written)} texts for {len(where)} values")
        any(map(texts.__setitem__, where, written))  # texts[at] = text (each returns None)
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
    if len(runs) * 64 <= len(values):
        start = 0
        for shape, size in runs:
            texts += alike(values[start:start + size], shape)
            start += size
        return texts
    return _scattered(values, shapes, kinds,
                      lambda shape, records: alike(records, shape))  # type: ignore[arg-type]
