"""In-band management and BMC networks: an access switch per rack, aggregation above them."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from itertools import repeat
from operator import attrgetter
from typing import Any, TypeVar

from cluster_iac.base.errors import CompileError, Diagnostic
from cluster_iac.base.runs import runs
from cluster_iac.base.sorting import natural_sorted
from cluster_iac.plan import Plan
from cluster_iac.plan.model import Switch
from cluster_iac.plan.physical import LinkBuilder, link_ends
from cluster_iac.plan.power import rack_pdus
from cluster_iac.plan.switching import PEER_LINK_PORTS, MlagPair
from cluster_iac.spec import ClusterSpec

# A 48-port 1GbE switch serves a rack when the spec names none (NVIDIA SN2201, the DGX
# SuperPOD's out-of-band and in-band management switch).
DEFAULT_SWITCH = "sn2201"
# Each access or aggregation switch has two uplinks, one to each switch of the pair above it,
# so losing one upper switch never cuts a rack off. They take the switch's last two ports.
UPLINKS = 2
# The two switches of an aggregation or core pair are an MLAG pair, joined by a peer link of
# PEER_LINK_PORTS cables (plan/switching.py) on the ports just below the uplinks (swp45 and
# swp46 of a 48-port switch), the same on both; the pair's ports below those take the
# switches below it. The lock keeps the peer link's ports ('peerlink' lines).
PEER_LINK = "peer-link"  # the peer link cables' tier in the cable table
NETWORKS = ("management", "bmc")
# Fabric switches' management ports (mgmt0) go out of band, to the BMC network, as the DGX
# SuperPOD reference architecture cables them; without a BMC network, to the in-band one.
FABRIC_NETWORKS = ("compute", "storage", "nvlink")


def build_management(spec: ClusterSpec, plan: Plan) -> Plan:
    """Access, aggregation and core switches of each management network, and their cables."""
    made: list[Switch] = []
    cables = LinkBuilder()
    pairs: list[MlagPair] = []
    problems: list[Diagnostic] = []
    for network in NETWORKS:
        ipnet = getattr(plan.settings.networks, network)
        if ipnet is None:
            continue
        model = ipnet.switch or DEFAULT_SWITCH
        path = ("networks", network, "switch")
        if model not in plan.catalog.switches:
            problems.append(Diagnostic("SPEC-UNKNOWN-SWITCH", f"networks.{network}.switch "
                                       f"'{model}' is not in the switch catalog", path))
            continue
        if plan.catalog.switches[model].ports <= UPLINKS + PEER_LINK_PORTS:
            problems.append(Diagnostic("SPEC-SWITCH-RADIX", f"switch '{model}' has too few ports "
                                       f"for {UPLINKS} uplinks, a {PEER_LINK_PORTS}-port MLAG "
                                       "peer link and a switch below", path))
            continue
        made += _build_network(plan, network, model, path, cables, pairs)
    if problems:
        raise CompileError(problems)
    # Management switches first: a rack's devices are powered and racked in this order, and
    # what a cluster grows by (fabric leaves) comes last, moving no outlet already cabled.
    return replace(plan, switches=(*made, *plan.switches), links=plan.links + cables.freeze(),
                   mlag_pairs=(*plan.mlag_pairs, *pairs))


def growth_sorted(plan: Plan, switches: Iterable[Switch]) -> list[Switch]:
    """The switches with last what a cluster grows by: upper tiers (aggregation, core,
    spine) first, then access switches and leaves of racks without compute nodes (services,
    storage, network racks), then those of compute racks; compute fabric before storage; by
    name (natural order) within each. A stable sort."""
    compute_racks = {n.rack for n in plan.nodes if n.role == "compute"}
    return natural_sorted(switches, attrgetter("name"), first=lambda sw: (
        sw.tier in ("access", "leaf"), sw.rack in compute_racks, sw.network == "storage"))


def _endpoints(plan: Plan, network: str) -> dict[str, list[tuple[str, str]]]:
    """Rack -> (device, port) that plug into this network, in the order that keeps ports put
    when the cluster grows: the rack's PDUs (fixed by its profile), its hosts (spec order),
    then fabric switches, upper tiers before leaves (a new scalable unit adds leaves)."""
    ipnet = getattr(plan.settings.networks, network)
    host_port = ipnet.interface if network == "management" else "bmc"
    by_rack: dict[str, list[tuple[str, str]]] = {r.name: [] for r in plan.racks}
    takes_fabric = network == "bmc" or plan.settings.networks.bmc is None
    if takes_fabric:
        for rack, pdus in rack_pdus(plan).items():  # metered PDUs' network cards, out of band
            by_rack[rack] += zip(pdus, repeat("net"))
    for node in plan.nodes:
        by_rack[node.rack].append((node.hostname, host_port))
    if takes_fabric:
        fabric = [s for s in plan.switches if s.network in FABRIC_NETWORKS]
        for switch in sorted(fabric, key=lambda s: s.tier == "leaf"):
            by_rack.setdefault(switch.rack, []).append((switch.name, "mgmt0"))
    return by_rack


# Records without generated __eq__/__repr__ (eq=False, repr=False): see plan/model.py.
@dataclass(frozen=True, eq=False, repr=False)
class _Net:
    """One management network being built."""

    plan: Plan
    network: str
    model: str
    path: tuple[str, ...]
    cables: LinkBuilder
    pairs: list[MlagPair]  # the network's aggregation and core pairs, as they are made
    network_racks: tuple[str, ...]  # racks without hosts, where upper tiers go
    speed_gbps: int  # the model's port speed, looked up once for its ~50,000 cables
    # Switch's fields after its rack, the same for every switch of the network: the
    # catalog's figures, looked up once for its 3,750 access switches
    fixed: tuple[Any, ...]

    @property
    def entry(self) -> Any:
        return self.plan.catalog.switches[self.model]

    @cached_property
    def compute_racks(self) -> frozenset[str]:
        """The racks holding compute nodes, found once (_pair_racks asks for each pair)."""
        return frozenset(node.rack for node in self.plan.nodes if node.role == "compute")

    @property
    def prefix(self) -> str:
        return "mgmt" if self.network == "management" else "oob"

    def switch(self, name: str, tier: str, rack: str) -> Switch:
        return Switch(name, self.model, self.network, tier, rack, *self.fixed)

    def cables_up(self, a: Sequence[str], a_ports: Sequence[str], b: Iterable[str],
                  b_ports: Iterable[str], tier: str = "link") -> None:
        """Cables from each ``a`` (a device, or a lower switch) up to switch ``b`` (or, tier
        PEER_LINK, across to the other switch of its pair), appended to the network's columns
        together (some 50,000 cables per network)."""
        n = len(a)
        values_of: tuple[Iterable[Any], ...] = (
            repeat(self.network, n), repeat(tier, n), a, a_ports, b, b_ports,
            repeat(self.speed_gbps, n), repeat("ethernet", n))
        for column, values in zip(self.cables.columns, values_of, strict=True):
            column.extend(values)


def _build_network(plan: Plan, network: str, model: str, path: tuple[str, ...],
                   cables: LinkBuilder, pairs: list[MlagPair]) -> list[Switch]:
    hosting = {node.rack for node in plan.nodes}
    network_racks = tuple(r.name for r in plan.racks if r.name not in hosting)
    net = _Net(plan, network, model, path, cables, pairs, network_racks,
               plan.catalog.switches[model].port_speed_gbps,
               Switch.figures(plan.catalog.switches[model], path))
    down = net.entry.ports - UPLINKS
    ports = _ports(1, down)
    access: list[Switch] = []
    hosts: list[tuple[str, str]] = []  # (device, port) of every access cable, in order
    switches: list[str] = []
    switch_ports: list[str] = []
    held = _held(plan.lock, network) if plan.lock.exists else {}
    for rack, ends in _endpoints(plan, network).items():
        slots = _positions(held.get(rack, {}), ends) if held else ends
        for k in range(math.ceil(len(slots) / down)):
            sw = net.switch(f"{net.prefix}-{rack}-{k + 1}", "access", rack)
            access.append(sw)
            group = slots[k * down:(k + 1) * down]
            # positions the lock holds for devices that are gone stay empty
            taken = [(j, end) for j, end in enumerate(group) if end is not None]
            switch_ports += [ports[j] for j, _ in taken]
            hosts += [end for _, end in taken]
            switches += repeat(sw.name, len(taken))
    if hosts:
        devices, device_ports = zip(*hosts, strict=True)
        net.cables_up(devices, device_ports, switches, switch_ports)
        if held:
            _check_locked(plan.lock, network, devices, switches, switch_ports)
    # Upper tiers take the access switches in growth order: a new compute rack's switch takes
    # the next aggregation port and moves no other.
    access = growth_sorted(plan, access)
    made = list(access)
    if len(access) == 2:  # two racks: the access switches uplink to each other, no aggregation
        uplinks = _uplink_ports(net)
        net.cables_up([access[0].name] * UPLINKS, uplinks, [access[1].name] * UPLINKS, uplinks)
        return made
    lower, tier, level = access, "aggregation", 1
    while len(lower) > 1 and not (level > 1 and len(lower) == 2):
        upper = _upper_level(net, lower, tier, level)
        made += upper
        lower, tier, level = upper, "core", level + 1
    return made


def _check_locked(lock: Any, network: str, devices: Sequence[str], switches: list[str],
                  ports: list[str]) -> None:
    """A device whose access port would differ from the one the lock records (the switch
    model's port count changed) is a conflict, never a silent move."""
    problems = []
    held = lock.groups.get(("access", network), {})  # lock.get's, less a call per device
    freed = lock.reallocated
    for device, switch, port in zip(devices, switches, ports, strict=True):
        entry = held.get(device)
        if entry is not None and entry.value[2:] != (switch, port) and device not in freed:
            problems.append(lock.error(
                entry, "LOCK-CONFLICT", f"{device}'s {network} access cable would move from "
                f"{entry.value[2]} {entry.value[3]} to {switch} {port}", lock.way_out(device)))
    if problems:
        raise CompileError(problems)


def _held(lock: Any, network: str) -> dict[str, dict[str, int]]:
    """Rack -> device -> its position among the rack's access ports, as the lock holds it
    (retired devices' too: their ports stay empty)."""
    found: dict[str, dict[str, int]] = {}
    for entry in lock.of_kind("access", network):
        found.setdefault(entry.value[0], {})[entry.key[2]] = entry.value[1]
    return found


End = TypeVar("End", bound=tuple[str, Any])


def _positions(held: dict[str, int], ends: list[End]) -> list[End | None]:
    """The rack's access cables by position: each device the lock places at its own, each
    other at the first free one, in order (None: a port kept empty for a retired device)."""
    slots: dict[int, End] = {}
    new = []
    for end in ends:
        position = held.get(end[0])
        if position is None or position in slots:
            new.append(end)
        else:
            slots[position] = end
    taken = set(held.values()) | set(slots)
    free = (n for n in range(len(ends) + len(taken) + 1) if n not in taken)
    for end in new:
        slots[next(free)] = end
    return [slots.get(n) for n in range(max(slots, default=-1) + 1)]


def access_positions(plan: Plan) -> Iterator[tuple[str, str, str, int, str, str]]:
    """(network, device, rack, position, switch, port) of every device's access cable: the
    position is the place among the rack's access ports ('swp' n of switch k: k x down + n
    - 1, counted from 0)."""
    links = plan.links
    down = {}
    for network in NETWORKS:
        ipnet = getattr(plan.settings.networks, network)
        if ipnet is not None:
            model = getattr(ipnet, "switch", None) or DEFAULT_SWITCH
            down[network] = plan.catalog.switches[model].ports - UPLINKS
    access = {sw.name: sw.rack for sw in plan.switches if sw.tier == "access"}
    switches = {sw.name for sw in plan.switches if sw.network in NETWORKS}  # uplinks
    for network, device, switch, port in link_ends(links, down):
        rack = access.get(switch)
        if rack is None or network not in down or device in switches:
            continue
        k = int(switch.rpartition("-")[2])  # the rack's k-th access switch
        position = (k - 1) * down[network] + int(port.removeprefix("swp")) - 1
        yield network, device, rack, position, switch, port


def _uplink_ports(net: _Net) -> list[str]:
    """The switch's last UPLINKS ports are its uplinks."""
    return _ports(net.entry.ports - UPLINKS + 1, UPLINKS)


def _ports(first: int, n: int) -> list[str]:
    """n switch ports from port ``first``: 'swp1', 'swp2', ..."""
    return [f"swp{port}" for port in range(first, first + n)]


def _upper_level(net: _Net, lower: list[Switch], tier: str, level: int) -> list[Switch]:
    """Pairs of switches above ``lower``; each lower switch uplinks to both of its pair, on
    the pair's port of its position (the lock's, or the first free one in growth order); the
    two of each pair joined by their peer link."""
    down = net.entry.ports - UPLINKS - PEER_LINK_PORTS
    peer_ports = _ports(down + 1, PEER_LINK_PORTS)
    uplinks = _uplink_ports(net)
    slots: list[Switch | None] = list(lower)
    if net.plan.lock.exists:
        held = {e.key[2]: e.value[1] for e in net.plan.lock.of_kind("uplink", net.network)
                if e.value[0] == f"{tier[:3]}{level}"}
        _check_before_mlag(net, held, down, f"{tier[:3]}{level}")
        slots = [end[1] if end is not None else None
                 for end in _positions(held, [(sw.name, sw) for sw in lower])]
    upper: list[Switch] = []
    for g in range(math.ceil(len(slots) / down)):
        group = slots[g * down:(g + 1) * down]
        first = next(sw for sw in group if sw is not None) if any(group) else lower[0]
        pair = [net.switch(f"{net.prefix}-{tier[:3]}{level}-{2 * g + s + 1}", tier, rack)
                for s, rack in enumerate(_pair_racks(net, g, first, group))]
        upper += pair
        net.pairs.append(MlagPair(net.network, pair[0].name, pair[1].name, level, g + 1,
                                  f"{net.prefix}-{tier[:3]}{level}-pair{g + 1}",
                                  tuple(peer_ports)))
        _check_peer_link(net, pair[0].name, peer_ports)
        net.cables_up([pair[0].name] * PEER_LINK_PORTS, peer_ports,
                      [pair[1].name] * PEER_LINK_PORTS, peer_ports, PEER_LINK)
        # each child to each of the pair in turn: its uplink s to port <child's place> of s
        places = [(j, child) for j, child in enumerate(group) if child is not None]
        net.cables_up([child.name for _, child in places for _ in pair],
                      uplinks * len(places), [parent.name for parent in pair] * len(places),
                      [port for j, _ in places for port in _ports(j + 1, 1) for _ in pair])
    return upper


def _pair_racks(net: _Net, g: int, first: Switch, group: Sequence[Switch | None]
                ) -> tuple[str, str]:
    """The racks of pair g. Together: a network rack in turn, as the fabric's spines go;
    without one, the rack of the group's first access switch. Apart (the default): two
    network racks in turn where there are two or more, else the first switch as together and
    the second beside the group's first access switch in another rack without compute nodes
    (a service or storage rack: a compute rack's PDUs and units are sized for its servers),
    else together (checks/resilience.py warns). The lock's racks win later (place_devices),
    so a locked pair stays where it is."""
    racks = net.network_racks
    ipnet = getattr(net.plan.settings.networks, net.network)
    if ipnet.aggregation_racks == "apart" and len(racks) >= 2:
        return racks[2 * g % len(racks)], racks[(2 * g + 1) % len(racks)]
    rack = racks[g % len(racks)] if racks else first.rack
    if ipnet.aggregation_racks == "together":
        return rack, rack
    other = next((sw.rack for sw in group if sw is not None and sw.rack != rack
                  and sw.rack not in net.compute_racks), rack)
    return rack, other
def _check_peer_link(net: _Net, first: str, ports: list[str]) -> None:
    """A pair whose peer link would take other ports than the lock records (the switch
    model's port count changed) is a conflict, never a silent move."""
    lock = net.plan.lock
    entry = lock.get("peerlink", net.network, first) if lock.exists else None
    if entry is not None and list(entry.value) != ports:
        raise CompileError([lock.error(
            entry, "LOCK-CONFLICT", f"{first}'s {net.network} MLAG peer link would move from "
            f"{' '.join(entry.value)} to {' '.join(ports)}", lock.way_out(first))])


def _check_before_mlag(net: _Net, held: dict[str, int], down: int, level: str) -> None:
    """A lock written before pairs had a peer link (no 'peerlink' line of the network) placed
    PEER_LINK_PORTS more switches under each pair: a held position past the first pair's
    ports now falls to another pair or port, a move the lock must not make silently."""
    lock = net.plan.lock
    if not held or max(held.values()) < down or any(lock.of_kind("peerlink", net.network)):
        return
    device = min((name for name, place in held.items() if place >= down), key=held.__getitem__)
    entry = lock.get("uplink", net.network, device)
    assert entry is not None  # held is read from these entries
    raise CompileError([lock.error(
        entry, "LOCK-CONFLICT", f"the lock places {net.network} switches under pairs of "
        f"{down + PEER_LINK_PORTS} (before MLAG peer links); with {PEER_LINK_PORTS} ports of "
        f"each pair for its peer link a pair takes {down}, so {device} (position "
        f"{held[device]}) and every switch after it would move to other ports",
        f"remove the 'uplink {net.network} ... {level} ...' lines from {lock.file}: the "
        f"switches of level {level} take new places, and the work order re-cables them")])


def peer_links(plan: Plan) -> Iterator[tuple[str, str, str, tuple[str, ...]]]:
    """(network, first switch, second switch, ports) of every MLAG pair's peer link, as the
    plan cables it (the same ports on both switches)."""
    links = plan.links
    found: dict[tuple[str, str, str], list[str]] = {}
    for start, stop in runs(links.network, links.tier):
        if links.tier[start] == PEER_LINK:
            for i in range(start, stop):
                key = (links.network[i], links.a_device[i], links.b_device[i])
                found.setdefault(key, []).append(links.a_port[i])
    for (network, first, second), ports in found.items():
        yield network, first, second, tuple(ports)


def uplink_positions(plan: Plan) -> Iterator[tuple[str, str, str, int]]:
    """(network, switch, level, position) of every management switch under an aggregation
    or core pair: the level's name ('agg1', 'cor2') and its place among the switches of
    that level (pair g's port n: g x down + n - 1)."""
    tiers = {sw.name: sw for sw in plan.switches if sw.network in NETWORKS}
    for network, device, switch, port in link_ends(plan.links, NETWORKS, "link"):
        upper, lower = tiers.get(switch), tiers.get(device)
        if upper is None or lower is None or upper.tier not in ("aggregation", "core"):
            continue
        if not switch.endswith("-1") and int(switch.rpartition("-")[2]) % 2 == 0:
            continue  # the pair's second switch: the same place
        down = upper.ports - UPLINKS - PEER_LINK_PORTS
        level, _, n = switch.rpartition("-")
        g = (int(n) - 1) // 2
        yield network, device, level.rpartition("-")[2], g * down + int(port.removeprefix(
            "swp")) - 1
