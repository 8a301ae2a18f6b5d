"""The lock's new text: every identity the plan holds, one line each, sorted, and the
identities of devices that are gone as retired lines."""

from __future__ import annotations

from collections.abc import Collection, Iterator
from itertools import chain
from operator import attrgetter
from typing import Any

from cluster_iac.base.sorting import natural_key, natural_ranks
from cluster_iac.compile.build_management import access_positions, peer_links, uplink_positions
from cluster_iac.compile.cable_lengths import row_positions
from cluster_iac.compile.fabric_links import switch_links
from cluster_iac.lock.grammar import HEADER, TARGET_KINDS
from cluster_iac.lock.trailer import sealed, unsealed
from cluster_iac.plan.kept import Lock, device_of, words
from cluster_iac.plan.physical import link_ends


def lock_text(plan: Any, old: Lock, spec_name: str) -> str:
    """The lock of ``plan``: every identity it holds, and the old lock's identities of
    devices that are gone, retired (kept reserved) unless reallocated. Sorted by kind, then
    network (or target kind), then device in natural order (gpu9 before gpu10)."""
    groups = identities(plan)
    lines = list(chain.from_iterable(map(dict.values, groups.values())))
    head = (f"{HEADER}: the identities allocated for {spec_name}; commit it beside the spec.\n"
            f"# Edit a line to pin or move an identity (README, 'The lock file').\n")
    if "\nretired " not in old.text and _same_lines(old.text, head, lines):
        return old.text  # every line it held is one of the plan's: no device is gone
    retired: Groups = {}
    for key, entry in old.entries.items():
        kind, scope, name = key
        # a switch gone frees the ports of its cables up (links lines are never retired)
        if kind != "links" and name not in groups.get((kind, scope), {}) and \
                device_of(key, entry.value) not in old.reallocated:
            retired.setdefault((kind, scope), {})[name] = \
                "retired " + " ".join(map(str, words(key, entry.value)))
    if _same_lines(old.text, head, [*lines, *(line for group in retired.values()
                                              for line in group.values())]):
        return old.text
    return sealed(head + _sorted_text(groups) + _sorted_text(retired))


def _same_lines(text: str, head: str, lines: Collection[str]) -> bool:
    """Whether the lock as read holds exactly these lines (each once) under this head, in
    whatever order: then it stays as it is. A render that allocates nothing new (a
    partition changed, ``render --check`` in CI) need not sort the 260,000 lines of a
    100,000-GPU lock again (0.4 s) to find the text it read; a lock reordered by hand but
    holding the same identities is not stale."""
    if not text.startswith(head) or not text.endswith("\n"):
        return False
    inner = unsealed(text)  # read, so its trailer was checked
    if inner == text:
        return False  # no trailer: written again with one
    if inner == head:
        return not lines
    body = inner[len(head):-1].split("\n")
    if len(body) != len(lines):
        return False
    held = set(body)
    return len(held) == len(body) and held.issuperset(lines)


Groups = dict[tuple[str, str], dict[str, str]]
"""(kind, scope) -> device (a Lustre target's index) -> its line: the lock's keys in two
levels, as a 100,000-GPU plan's 260,000 lines are made faster without a key tuple each."""


def identities(plan: Any) -> Groups:
    """Every identity of the plan that the lock holds, as the lock's line."""
    groups: Groups = {}

    def group(kind: str, scope: str) -> dict[str, str]:
        return groups.setdefault((kind, scope), {})

    for network, table in plan.addresses.items():
        group("address", network).update(
            (device, f"address {network} {device} {address}")
            for device, address in table.items())
    places = group("place", "")
    for device, where in plan.placements.items():
        if where.height_u > 0:  # a 0U PDU's place follows from its rack
            places[device] = f"place {device} {where.rack} {where.u} {where.height_u}"
    for network, (position, ports, first) in fabric_positions(plan):
        group("fabric", network).update(
            (host, f"fabric {network} {host} {place} {ports[host]} {first[host][0]} "
                   f"{first[host][1]}") for host, place in position.items())
    for network, texts in switch_links(plan.links, plan.fabric_wiring):
        group("links", network).update((lower, f"links {network} {lower} {text}")
                                       for lower, text in texts.items())
    for network, device, rack, slot, switch, port in access_positions(plan):
        group("access", network)[device] = \
            f"access {network} {device} {rack} {slot} {switch} {port}"
    for network, switch, level, slot in uplink_positions(plan):
        group("uplink", network)[switch] = f"uplink {network} {switch} {level} {slot}"
    for network, switch, _peer, peer_ports in peer_links(plan):
        group("peerlink", network)[switch] = \
            f"peerlink {network} {switch} {' '.join(peer_ports)}"
    psus = {psu: group("outlet", f"PSU{psu}")
            for psu in sorted(set(map(attrgetter("psu"), plan.power_cords)))}
    for device, psu, pdu, outlet in map(attrgetter("device", "psu", "pdu", "outlet"),
                                        plan.power_cords):
        psus[psu][device] = f"outlet {device} PSU{psu} {pdu} {outlet}"
    for name, switch in plan.switch_configs.items():
        group("bgp", switch.fabric)[name] = \
            f"bgp {switch.fabric} {name} {switch.asn} {switch.loopback}"
        if switch.p2p_block:
            group("p2p", switch.fabric)[name] = f"p2p {switch.fabric} {name} {switch.p2p_block}"
    boot = getattr(plan, "boot", None)
    for (network, device), mac in sorted(boot.macs.items()) if boot is not None else ():
        group("mac", network)[device] = f"mac {network} {device} {mac}"
    facts = getattr(plan, "facts", None)
    if facts is not None:
        group("serial", "").update((device, f"serial {device} {serial}")
                                   for device, serial in facts.serials.items())
        for (device, port), guid in facts.guids.items():
            group("guid", port)[device] = f"guid {device} {port} 0x{guid:016x}"
    group("row", "").update((row, f"row {row} {place}")
                            for row, place in row_positions(plan.rows, plan.lock).items())
    zones = boot.zones if boot is not None else {}
    group("zone", "").update((name, f"zone {name} {zone.serial} {zone.digest}")
                             for name, zone in zones.items())
    for server, target in lustre_targets(plan):
        group("lustre", target.kind)[str(target.index)] = \
            f"lustre {target.kind} {target.index} {server}"
    return {scope: lines for scope, lines in groups.items() if lines}


def _sorted_text(groups: Groups) -> str:
    """The lines by kind, scope and name, names in natural order: each distinct name's
    place made once for every group (base/sorting.py natural_ranks; a 100,000-GPU lock's
    260,000 lines name some 30,000 devices, each in several groups: its address in each
    network, its outlet of each PSU...)."""
    ranks = natural_ranks(chain.from_iterable(groups.values()))
    out: list[str] = []
    for kind, scope in sorted(groups, key=lambda group: (group[0], natural_key(group[1]))):
        lines = groups[(kind, scope)]
        out += map(lines.__getitem__, sorted(lines, key=ranks.__getitem__))
    return "\n".join(out) + "\n" if out else ""


Positions = tuple[dict[str, int], dict[str, int], dict[str, tuple[str, str]]]


def fabric_positions(plan: Any) -> Iterator[tuple[str, Positions]]:
    """Per fabric: each host's position (its place among the fabric's hosts, as cabled,
    counting retired hosts' stand-ins), its cables there and its first cable's (switch,
    port)."""
    links = plan.links
    for network in plan.fabric_wiring:
        position: dict[str, int] = {}
        ports: dict[str, int] = {}
        first: dict[str, tuple[str, str]] = {}
        for _net, device, switch, port in link_ends(links, (network,), "node-leaf"):
            if device not in first:
                first[device] = (switch, port)
                ports[device] = 0
            ports[device] += 1
        held = {e.key[2]: e.value[0] for e in plan.lock.of_kind("fabric", network)}
        slot = 0
        taken = set(held.values())
        for host in first:  # cabled in position order
            if host in held and host not in position:
                position[host] = held[host]
                continue
            while slot in taken:
                slot += 1
            position[host] = slot
            taken.add(slot)
        yield network, (position, ports, first)


def lustre_targets(plan: Any) -> Iterator[tuple[str, Any]]:
    """(server, target) of every MDT and OST of the plan's file system."""
    hardware = getattr(plan.lustre, "hardware", None) if plan.lustre is not None else None
    for server in (hardware.servers if hardware is not None else ()):
        for target in server.targets:
            if target.kind in TARGET_KINDS:
                yield server.hostname, target
