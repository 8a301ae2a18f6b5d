"""A fabric's discovery matched to its planned cables where every discovered link is one:
infiniband.match's answer for the fabric as planned, found column by column rather than
link by link (infiniband.match's loop stays the answer for any other discovery, and this
one's test oracle: tests/test_reconcile_as_planned.py).

A full discovery of a 100,000-GPU fabric has 300,000 links; the loop tests each link's two
ends in turn (0.6 s). Here each column (the links' lower ends, their higher ends, each end
in the plan's terms, the planned cable of each) is made by one map at C speed, and the
links are the plan's where both ends of each link name one planned cable, two different
ends of it: infiniband.match then finds each link to be that cable and nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import compress, repeat
from operator import eq, itemgetter, ne
from typing import Any

_new = tuple.__new__
_first, _second = itemgetter(0), itemgetter(1)


def as_planned(links: Mapping[Any, Any], parts: Mapping[str, tuple[str, Any]],
               by_end: Mapping[Any, int], a_ends: Sequence[Any], end_type: type,
               port_names: Mapping[int, str]) -> dict[int, tuple[Any, Any]] | None:
    """The cables found (cable index -> the link's two ends as discovered, the A end's
    first), in the order of the links, as infiniband.match makes them, where each
    discovered link (each once, lower end first, as Topology.pairs gives them) is a planned
    cable; None where one is not, or where an end is one this path does not make (a switch
    port beyond ``port_names``): the caller's loop answers then.

    ``links``: Topology.links; ``parts``: each node's part of an end (infiniband._parts:
    a switch's device, or a host adapter's whole end); ``by_end``: each planned end's
    cable; ``a_ends``: each cable's A end; ``end_type``: infiniband.End; ``port_names``: a
    switch port's name in the plan's terms by its number."""
    pairs = [(a, b) for a, b in links.items() if a < b]
    lows = list(map(_first, pairs))
    highs = list(map(_second, pairs))
    heres = _ends(lows, parts, end_type, port_names)
    theres = _ends(highs, parts, end_type, port_names) if heres is not None else None
    if heres is None or theres is None:
        return None
    cables = list(map(by_end.get, heres))
    # each link one cable's two ends: its cable from either end, and the ends different
    if None in cables or cables != list(map(by_end.get, theres)) or any(map(eq, heres, theres)):
        return None
    found = dict(zip(cables, pairs, strict=True))
    if len(found) != len(pairs):  # two links one cable: the loop says which is found
        return None
    # the A end first: a link whose lower end is not on the cable's A device is turned
    planned_a = map(_first, map(a_ends.__getitem__, cables))
    for at in compress(range(len(pairs)), map(ne, map(_first, heres), planned_a)):
        low, high = pairs[at]
        found[cables[at]] = (high, low)
    return found


def _ends(ends: list[Any], parts: Mapping[str, tuple[str, Any]], end_type: type,
          port_names: Mapping[int, str]) -> list[Any] | None:
    """Each discovered end in the plan's terms, as infiniband.match makes it: a host
    adapter's whole end, a switch's device and its port's name; None where a switch's port
    has no name in ``port_names``."""
    nodes = list(map(parts.__getitem__, map(_first, ends)))
    wholes = list(map(_second, nodes))
    names = list(map(port_names.get, map(_second, ends)))
    made = list(map(_new, repeat(end_type), zip(map(_first, nodes), names, strict=True)))
    for at in compress(range(len(ends)), wholes):
        made[at] = wholes[at]
    if None in names and any(name is None and whole is None
                             for name, whole in zip(names, wholes, strict=True)):
        return None
    return made
