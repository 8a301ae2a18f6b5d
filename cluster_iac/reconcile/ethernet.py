"""Cabling verify of the Ethernet networks (a RoCE compute fabric, the management network):
devices' LLDP neighbour tables (`lldpcli show neighbors -f json`, or a switch's own: Arista
EOS's `show lldp neighbors detail | json`) against the plan's cables.

Each table is one device's: every row is a link from the device's port (the local interface,
named as the plan names the port, or as the switch's OS does: reconcile/port_names.py) to a
neighbour's port. A neighbour is the plan's device its
system name is (or the first dot-separated part of it: 'gpu-01.cluster.example'); its port is
the port id where that is a name (subtype ifname or local, as switches send it) or the port
description (which lldpd on Linux sets to the interface name, sending the MAC as the id),
whichever the plan knows on that device.

A planned cable is judged when a table of one of its ends is given: it is found when some
table shows the link, miswired when a port of it shows another link, missing when neither.
A link no planned cable explains, on no planned port of another network, is extra. A device
no table is of and no table lists (switched off, unplugged, lldpd not running) is reported
once with the number of its cables, which are not listed again. PDUs and BMCs often send no
LLDP, and a host's lldpd does not run on its BMC's port (``silent``): a cable to one is
judged only by what its other end shows (another neighbour there is a miswiring; nothing
there is not reported, only counted).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import NamedTuple

from cluster_iac.formats.lldpcli import Neighbor, Table
from cluster_iac.plan import Plan
from cluster_iac.plan.physical import Cable
from cluster_iac.reconcile.infiniband import End, Mismatch
from cluster_iac.reconcile.port_names import plan_port

SILENT = frozenset({"pdu"})
"""Device kinds not expected to send LLDP: their cables are checked from the other end only."""
BMC_NETWORK = "bmc"  # a node's port on this network is its BMC's (plan/physical.py's cabling)
_NAMED = frozenset({"ifname", "local", "ifalias"})  # port id subtypes that are a port's name


class Verdict(NamedTuple):
    """Every difference (infiniband.Mismatch, in the plan's order: devices not seen, then
    missing and miswired cables, then extra links), and counts: cables judged, found, and
    left unjudged because nothing is seen on them and an end of them is silent."""

    mismatches: list[Mismatch]
    judged: int
    found: int
    silent: int


def ethernet_networks(plan: Plan) -> list[str]:
    """The networks with Ethernet cables, in the cable table's order."""
    return list(dict.fromkeys(c.network for c in plan.cables.rows() if c.link == "ethernet"))


def verify(plan: Plan, tables: Sequence[tuple[str, Table]],
           networks: Collection[str] | None = None) -> Verdict:
    """The cables of ``networks`` (default: every Ethernet network) against ``tables``:
    (the planned device a table is of, its table)."""
    cables = [c for c in plan.cables.rows() if c.link == "ethernet"]
    chosen = set(ethernet_networks(plan) if networks is None else networks)
    kinds = {d.name: d.kind for d in plan.devices}
    by_end: dict[End, int] = {}
    ports: dict[str, set[str]] = {}
    for i, cable in enumerate(cables):
        for end in _ends(cable):
            by_end[end] = i
            ports.setdefault(end.device, set()).add(end.port)
    links = _links(tables, kinds, ports)
    found: set[int] = set()
    strays: list[tuple[End, End]] = []
    for ends in links:
        at = _planned(cables, by_end, ends)
        if at is None:
            strays.append(ends)
        else:
            found.add(at)
    owners = {device for device, _ in tables}
    judged = [i for i, c in enumerate(cables)
              if c.network in chosen and {c.a_device, c.b_device} & owners]
    seen = {end.device for ends in links for end in ends}
    unseen = _unseen(plan, cables, judged, seen, kinds)
    miswired: dict[int, list[tuple[End, End]]] = {}
    extra: list[tuple[End, End]] = []
    other = {end for c in cables if c.network not in chosen for end in _ends(c)}
    for ends in strays:
        touched = [by_end[e] for e in ends if e in by_end and by_end[e] not in found]
        for i in touched:
            miswired.setdefault(i, []).append(_oriented(ends, cables[i]))
        if not touched and not set(ends) & other:
            extra.append(ends)
    out = [Mismatch("unseen", None, switch=name, cables=count) for name, count in unseen.items()]
    silent = 0
    for i in judged:
        cable = cables[i]
        if i in found or {cable.a_device, cable.b_device} & unseen.keys():
            continue
        if i in miswired:
            out.append(Mismatch("miswired", cable, tuple(miswired[i])))
        elif silent_end(kinds, cable, cable.a_device) or silent_end(kinds, cable,
                                                                    cable.b_device):
            silent += 1
        else:
            out.append(Mismatch("missing", cable))
    out += [Mismatch("extra", None, (ends,)) for ends in extra]
    return Verdict(out, len(judged), sum(1 for i in judged if i in found), silent)


def silent_end(kinds: dict[str, str], cable: Cable, device: str) -> bool:
    """Whether the cable's end on ``device`` may send no LLDP: a PDU's (``SILENT``), or a
    node's port on the BMC network (its BMC's, not the host's)."""
    kind = kinds.get(device)
    return kind in SILENT or (kind == "node" and cable.network == BMC_NETWORK)


def _ends(cable: Cable) -> tuple[End, End]:
    return End(cable.a_device, cable.a_port), End(cable.b_device, cable.b_port)


def _oriented(ends: tuple[End, End], cable: Cable) -> tuple[End, End]:
    """A link found on a planned cable's port, its end on the cable's A side first (or its
    end on the B side last), to read beside the planned ends."""
    a, b = _ends(cable)
    return ends[::-1] if ends[1] == a or ends[0] == b else ends


def _links(tables: Sequence[tuple[str, Table]], kinds: dict[str, str],
           ports: dict[str, set[str]]) -> list[tuple[End, End]]:
    """Every link the tables show, once (a link both its ends list is one link), as (the
    table's device's end, the neighbour's end), in the tables' order."""
    out: dict[tuple[End, End], tuple[End, End]] = {}
    for device, table in tables:
        for row in table.neighbors:
            local = plan_port(row.interface, ports.get(device, ()))
            ends = (End(device, _shown(local)), _neighbor_end(row, kinds, ports))
            out.setdefault((min(ends), max(ends)), ends)
    return list(out.values())


def _neighbor_end(row: Neighbor, kinds: dict[str, str], ports: dict[str, set[str]]) -> End:
    """The neighbour's end in the plan's terms: its device and port ('' where it sends only
    a MAC address)."""
    name = row.system
    short = name.split(".", 1)[0]
    device = name if name in kinds else short if short in kinds else _shown(name or "?")
    names = [row.port_id] if row.port_type in _NAMED and row.port_id else []
    names += [row.port_descr] if row.port_descr else []
    planned = ports.get(device, set())
    port = next((plan_port(p, planned) for p in names if plan_port(p, planned) in planned),
                names[0] if names else "")
    return End(device, _shown(port))


def _shown(text: str) -> str:
    """A discovered name as it may be printed: one with control characters (which could
    move a terminal's cursor or forge a line) as Python's ascii() writes it."""
    return text if text.isprintable() else ascii(text)


def _planned(cables: list[Cable], by_end: dict[End, int], ends: tuple[End, End]) -> int | None:
    """The planned cable these ends are (the neighbour's port may be unnamed: ''), or None."""
    for here, there in (ends, ends[::-1]):
        i = by_end.get(here)
        if i is None:
            continue
        a, b = _ends(cables[i])
        other = b if a == here else a
        if there == other or (there.port == "" and there.device == other.device):
            return i
    return None


def _unseen(plan: Plan, cables: list[Cable], judged: list[int], seen: set[str],
            kinds: dict[str, str]) -> dict[str, int]:
    """The devices on judged cables that no table is of and no table lists (silent ends
    aside), in the plan's order, each with the number of its judged cables."""
    count: dict[str, int] = {}
    for i in judged:
        for device in (cables[i].a_device, cables[i].b_device):
            if device not in seen and not silent_end(kinds, cables[i], device):
                count[device] = count.get(device, 0) + 1
    return {d.name: count[d.name] for d in plan.devices if d.name in count}
