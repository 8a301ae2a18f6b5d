"""Plain data a column at a time, the walk the YAML and JSON writers share: a column of values
split by type (by_type), a column of dicts by shape, their keys in order (by_shape), and one
column of texts cut back into its values' runs (joined_runs).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import accumulate, compress, repeat
from operator import eq, ne
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
    # where a shape differs from the one before it (a C pass): the starts of its runs
    starts = [0, *compress(range(1, len(shapes)), map(ne, shapes[1:], shapes))]
    if len(starts) * 64 <= len(values):
        texts: list[str] = []
        for start, end in zip(starts, [*starts[1:], len(values)], strict=True):
            texts += alike(values[start:end], shapes[start])
        return texts
    return _scattered(values, shapes, kinds,
                      lambda shape, records: alike(records, shape))  # type: ignore[arg-type]


def joined_runs(texts: Sequence[str], sizes: Sequence[int], between: str = "",
                around: tuple[str, str] = ("", ""), empty: str = "") -> list[str]:
    """Each run of ``texts`` in turn, a run of each size, as ``around[0] + between.join(run)
    + around[1]``, and ``empty`` for a run of none: the texts of one column for many values
    (every list's items) cut back into each value's text by C loops (slices, joins), not a
    Python step per value."""
    if len(sizes) > 1 and sizes.count(sizes[0]) == len(sizes) and sizes[0]:
        rows = zip(*[iter(texts)] * sizes[0], strict=True)  # runs of one size: no slices
        joined = list(texts) if sizes[0] == 1 else list(map(between.join, rows))
    else:
        ends = list(accumulate(sizes))
        joined = list(map(between.join, map(texts.__getitem__, map(slice, [0, *ends], ends))))
    if around != ("", ""):  # one join of the three: the long middle copied once
        joined = list(map("".join, zip(repeat(around[0]), joined, repeat(around[1]))))
    if 0 in sizes:
        for at in compress(range(len(sizes)), map(eq, sizes, repeat(0))):
            joined[at] = empty
    return joined
