"""Each Ethernet fabric switch's configuration (plan/switching.py): eBGP underlay, loopbacks,
ports from the cable table, ECMP; ASNs, loopbacks and /31 blocks kept by the lock.

The ASN plan is RFC 7938 ("Use of BGP for Routing in Large-Scale Data Centers"), section
5.2.1: every leaf (Tier-3) its own ASN, the spines of one pod (Tier-2) one ASN, the cores
(Tier-1) one ASN, all private 4-byte ASNs (RFC 6996: 4200000000-4294967294). Spines sharing
an ASN never learn one leaf's routes through another spine (eBGP's AS-path loop check), the
"valley-free" routing the RFC wants; a leaf's routes to another leaf carry the same AS path
over every spine, so ECMP needs no relaxation (it is set anyway, as 3-tier pods differ).

Numbering: the switch above a link numbers it. Each switch that numbers links holds one
block of ``p2p_pool`` with a /31 per port leg (its ports x the fabric's breakout legs), the
link of port leg i its i-th /31: the upper end the even address, the lower end the odd one.
A leaf numbers its host ports in both modes (hosts have no BGP); spines and cores number
their downlinks only under ``bgp: numbered``. A block, an ASN and a loopback is taken once,
recorded in the lock ('bgp' and 'p2p' lines), and never moved by a switch added later.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import replace
from functools import cache
from ipaddress import IPv4Address, IPv4Network
from itertools import chain
from operator import itemgetter
from typing import Any

from cluster_iac.base.errors import CompileError, Diagnostic, SpecPath
from cluster_iac.base.runs import runs
from cluster_iac.plan import Plan
from cluster_iac.plan.switching import (
    FABRIC_MTU,
    ROLES,
    BgpConfig,
    BgpNeighbor,
    SwitchConfig,
    SwitchInterface,
)
from cluster_iac.spec import ClusterSpec

ETHERNET = {"roce", "ethernet"}
_PORT = re.compile(r"p(\d+)(?:s(\d+))?")


def plan_switches(spec: ClusterSpec, plan: Plan) -> Plan:
    """plan.switch_configs for every switch of every Ethernet fabric: its identity (ASN,
    loopback, /31 block), what the checks and the lock read. Its ports and BGP sessions are
    plan_switch_ports' (an EMIT_ONLY pass: only the writers read them); until then a routed
    switch's ``interfaces`` is empty and its ``bgp`` holds no session (portless)."""
    configs: dict[str, SwitchConfig] = {}
    for network, fabric in sorted(plan.fabrics.items()):
        if fabric.technology in ETHERNET:
            config = getattr(spec.fabric, network)
            configs.update(_fabric_identities(plan, network, config.underlay,
                                              ("fabric", network)))
    return replace(plan, switch_configs=configs) if configs else plan


def plan_switch_ports(spec: ClusterSpec, plan: Plan) -> Plan:
    """Each Ethernet fabric switch's ports from the cable table and its BGP process, onto
    plan_switches' configurations (their identities and the QoS reference kept): 300,000
    ports and 200,000 sessions at 100,000 GPUs on RoCE, read by the FRR, ifupdown2 and AVD
    writers and the hosts' rails alone, so validate and a current folder's commands skip
    them (compile.EMIT_ONLY)."""
    configs = dict(plan.switch_configs)
    for network in sorted({c.fabric for c in configs.values()}):
        underlay = getattr(spec.fabric, network).underlay
        switches = {name: c for name, c in configs.items() if c.fabric == network}
        legs = plan.fabrics[network].breakout_legs
        firsts = {name: int(IPv4Address(c.p2p_block)) for name, c in switches.items()
                  if c.p2p_block}
        ports = _ports_by_switch(plan, network, plan.fabric_wiring[network].tier, legs,
                                 firsts, underlay.host_mtu)
        asns = {name: c.asn for name, c in switches.items()}
        numbered = underlay.bgp == "numbered"
        for name, config in switches.items():
            interfaces, bgp = _switch_ports(name, ports.get(name, ()), asns, config.loopback,
                                            numbered)
            configs[name] = replace(config, interfaces=interfaces, bgp=bgp)
    return replace(plan, switch_configs=configs) if configs else plan


def _fabric_identities(plan: Plan, network: str, underlay: Any,
                       path: SpecPath) -> dict[str, SwitchConfig]:
    """The fabric's switches, each with its ASN, loopback and block, portless."""
    wiring = plan.fabric_wiring[network]
    switches = [s for s in plan.switches if s.network == network]
    legs = plan.fabrics[network].breakout_legs
    identities = Identities(plan.lock, network, underlay, path)
    asns, loopbacks = identities.routing(switches, wiring)
    numbered = underlay.bgp == "numbered"
    blocks = identities.blocks([s for s in switches
                                if s.tier == "leaf" or numbered], legs)
    configs = {}
    for switch in switches:
        loopback = loopbacks[switch.name]
        portless = BgpConfig(asns[switch.name], loopback, not numbered, (), 1,
                             (f"{loopback}/32",))
        configs[switch.name] = SwitchConfig(
            switch.name, network, switch.model, ROLES[switch.tier], switch.rack,
            asns[switch.name], loopback, (), portless, path,
            str(blocks[switch.name]) if switch.name in blocks else "")
    return configs


# One cabled port as read from the cable table: its place in port order (_cage_leg), then
# the port
PortRow = tuple[tuple[int, int], SwitchInterface]


def _ports_by_switch(plan: Plan, network: str, tier: Any, legs: int, firsts: dict[str, int],
                     host_mtu: int) -> dict[str, list[PortRow]]:
    """Each switch's cabled ports of the fabric, in port order (the cable's A end is the
    lower device, B the switch above it, which numbers the link). A port: the MTU of its
    kind (``host_mtu`` on a host port); on a link its upper end numbers (``firsts``: the
    first address of that switch's block), the /31 of the port leg's place among the upper
    end's ports, the upper end the even address, the lower end the odd one (this end's
    address with its length, the far end's without)."""
    cables = plan.cables
    found: dict[str, list[PortRow]] = {}
    # the fabric's own runs of the table (its cables were laid together), not every cable
    # and power cord of the cluster
    spans = [slice(start, stop) for start, stop in runs(cables.network)
             if cables.network[start] == network]
    columns = (cables.a_device, cables.a_port, cables.b_device, cables.b_port,
               cables.speed_gbps, cables.cable_id)
    for a, a_port, b, b_port, speed, cable in chain.from_iterable(
            zip(*(column[span] for column in columns), strict=True) for span in spans):
        first = firsts.get(b)
        upper = lower = even = odd = ""
        if first is not None:
            place = first + 2 * _leg_index(b_port, legs)
            even, odd = _dotted(place), _dotted(place + 1)
            upper, lower = f"{even}/31", f"{odd}/31"
        if tier.get(a) == "node":
            found.setdefault(b, []).append((_cage_leg(b_port), SwitchInterface(
                b_port, "host", a, a_port, cable, speed, host_mtu, upper, odd)))
            continue
        found.setdefault(b, []).append((_cage_leg(b_port), SwitchInterface(
            b_port, "fabric", a, a_port, cable, speed, FABRIC_MTU, upper, odd)))
        found.setdefault(a, []).append((_cage_leg(a_port), SwitchInterface(
            a_port, "uplink", b, b_port, cable, speed, FABRIC_MTU, lower, even)))
    for rows in found.values():
        rows.sort(key=itemgetter(0))  # by (cage, leg), a C key: 300,000 ports at 100,000 GPUs
    return found


@cache  # a few hundred port names (p1-p64 and their legs) on 300,000 ports at 100,000 GPUs
def _cage_leg(port: str) -> tuple[int, int]:
    """'p57' -> (57, 1); a breakout leg 'p1s2' -> (1, 2)."""
    match = _PORT.fullmatch(port)
    if match is None:
        raise ValueError(f"not a switch port name: {port!r}")
    return int(match[1]), int(match[2] or 1)


@cache  # as _cage_leg
def _leg_index(port: str, legs: int) -> int:
    """The place of a port leg among a switch's: 'p57' -> 56 x legs, 'p1s2' -> 1."""
    cage, leg = _cage_leg(port)
    return (cage - 1) * legs + leg - 1


def _switch_ports(name: str, rows: Sequence[PortRow], asns: dict[str, int], loopback: str,
                  numbered: bool) -> tuple[tuple[SwitchInterface, ...], BgpConfig]:
    """A switch's ports (from _ports_by_switch's rows) and its BGP process, in one pass over
    them (300,000 ports at 100,000 GPUs): a session per cable to a switch, maximum-paths the
    uplinks or the most cables down to one switch, the loopback and (a leaf) its host /31s
    announced; a leaf holds the even address of each host /31, its address is the
    subnet's."""
    interfaces = tuple(map(itemgetter(1), rows))
    neighbors = []
    networks = [f"{loopback}/32"]
    per_peer: dict[str, int] = {}  # the cables down to each switch below
    uplinks = 0
    for port in interfaces:
        kind = port.kind
        if kind == "host":
            if port.address:
                networks.append(port.address)
            continue
        peer = port.peer
        if kind == "uplink":
            uplinks += 1
        else:
            per_peer[peer] = per_peer.get(peer, 0) + 1
        neighbors.append(BgpNeighbor(peer, port.name, port.peer_address if numbered else "",
                                     asns[peer], "uplink" if kind == "uplink" else "downlink"))
    return interfaces, BgpConfig(asns[name], loopback, not numbered, tuple(neighbors),
                                 max(1, uplinks, *per_peer.values()), tuple(networks))


def _dotted(address: int) -> str:
    """An IPv4 address as text: what str(IPv4Address(address)) prints, without its checks
    (24,576 ports of a 8,192-GPU fabric: 0.9 s of 1.7 went to ipaddress); its first three
    octets are its /24's, made once per /24 (a switch's block of /31s is within one or a few:
    200,000 host addresses at 100,000 GPUs on RoCE in some 1,600 of them)."""
    return _first_octets(address >> 8) + str(address & 255)


@cache
def _first_octets(network: int) -> str:
    """A /24's first three octets and the dot after them: 0x0afe01 -> '10.254.1.'."""
    return f"{network >> 16}.{network >> 8 & 255}.{network & 255}."


class Identities:
    """The fabric's ASNs, loopbacks and /31 blocks: the lock's first, new ones the lowest
    free; a lock that gives two switches one loopback, or two leaves one ASN, is refused at
    its line."""

    def __init__(self, lock: Any, network: str, underlay: Any, path: SpecPath) -> None:
        self.lock, self.network, self.underlay, self.path = lock, network, underlay, path

    def routing(self, switches: list[Any], wiring: Any) -> tuple[dict[str, int], dict[str, str]]:
        """Each switch's ASN and loopback."""
        kept = {s.name: e for s in switches
                if (e := self.lock.get("bgp", self.network, s.name)) is not None}
        groups = _asn_groups(switches, wiring)
        self._refuse_shared(kept, groups)
        asn_of_group = {groups[n]: e.value[0] for n, e in kept.items() if groups[n] != n}
        taken_asns = {e.value[0] for e in self.lock.of_kind("bgp", self.network)}
        taken_ips = {IPv4Address(e.value[1]) for e in self.lock.of_kind("bgp", self.network)}
        new_asns = _free_numbers(self.underlay.asn_base, taken_asns)
        new_ips = self._free(self.underlay.loopback_pool, 1, taken_ips, "loopback_pool",
                             len(switches) - len(kept))
        asns, loopbacks = {}, {}
        for switch in switches:
            entry = kept.get(switch.name)
            group = groups[switch.name]
            if entry is not None:
                asns[switch.name], loopbacks[switch.name] = entry.value[0], str(entry.value[1])
                continue
            if group not in asn_of_group:
                asn_of_group[group] = next(new_asns)
            asns[switch.name] = asn_of_group[group]
            loopbacks[switch.name] = str(next(new_ips))
        return asns, loopbacks

    def blocks(self, switches: list[Any], legs: int) -> dict[str, IPv4Address]:
        """The first address of each numbering switch's block of /31s."""
        kept = {s.name: IPv4Address(e.value[0]) for s in switches
                if (e := self.lock.get("p2p", self.network, s.name)) is not None}
        size = 1 << (2 * max((s.ports for s in switches), default=1) * legs - 1).bit_length()
        taken = {IPv4Address(e.value[0]) for e in self.lock.of_kind("p2p", self.network)}
        new = self._free(self.underlay.p2p_pool, size, taken, "p2p_pool",
                         len(switches) - len(kept))
        return {s.name: kept[s.name] if s.name in kept else next(new) for s in switches}

    def _free(self, pool: IPv4Network, size: int, taken: set[IPv4Address],
              key: str, wanted: int) -> Iterator[IPv4Address]:
        """The pool's free blocks of ``size`` addresses, lowest first; a located error when
        it runs out (``wanted`` new blocks, for its message)."""
        start = int(pool.network_address)
        for first in range(start, start + pool.num_addresses - size + 1, size):
            if IPv4Address(first) not in taken:
                yield IPv4Address(first)
        blocks = (len(taken) + wanted) * size
        prefix = 32 - (blocks - 1).bit_length()
        raise CompileError([Diagnostic(
            "FABRIC-POOL-EXHAUSTED", f"{'.'.join(map(str, self.path))}.underlay.{key} {pool} holds "
            f"{pool.num_addresses // size} block(s) of {size} address(es); the "
            f"{self.network} fabric's switches need {len(taken) + wanted}",
            (*self.path, "underlay", key),
            hint=f"give underlay.{key} a /{prefix} or larger prefix",
            details={"measured": len(taken) + wanted, "limit": pool.num_addresses // size})])

    def _refuse_shared(self, kept: dict[str, Any], groups: dict[str, str]) -> None:
        """Two switches with one loopback, or two switches that must differ (two leaves,
        different tiers or pods) with one ASN, in the lock: each is a located error."""
        problems = []
        by_asn: dict[int, tuple[str, Any]] = {}
        by_ip: dict[str, tuple[str, Any]] = {}
        for name, entry in kept.items():
            asn, ip = entry.value
            other = by_asn.setdefault(asn, (name, entry))  # one ASN per group is the plan
            if other[0] != name and groups[other[0]] != groups[name]:
                problems.append(self.lock.error(
                    entry, "FABRIC-ASN-DUPLICATE", f"{name} and {other[0]} (line "
                    f"{self.lock.line_of(other[1])}) both hold ASN {asn}; RFC 7938 gives each "
                    "leaf its own ASN and each spine pod one", hint=self.lock.way_out(name)))
            other = by_ip.setdefault(str(ip), (name, entry))
            if other[0] != name:
                problems.append(self.lock.error(
                    entry, "FABRIC-LOOPBACK-DUPLICATE", f"{name} and {other[0]} (line "
                    f"{self.lock.line_of(other[1])}) both hold loopback {ip}",
                    hint=self.lock.way_out(name)))
        if problems:
            raise CompileError(problems)


def _asn_groups(switches: list[Any], wiring: Any) -> dict[str, str]:
    """Switch -> what shares its ASN: a leaf alone; the spines of a 2-tier fabric all
    together; under a core tier, the spines of one pod (those above the same scalable units:
    a route from one pod to another crosses two spine tiers, and one ASN for both would make
    the second drop it, AS-path loop); all the cores."""
    pods = any(s.tier == "core" for s in switches)
    units: dict[str, set[int]] = {}
    if pods:
        for device, uppers in wiring.up.items():
            if wiring.tier.get(device) == "leaf":
                for spine in uppers:
                    units.setdefault(spine, set()).add(wiring.su.get(device, 0))
    groups = {}
    for switch in switches:
        if switch.tier == "leaf":
            groups[switch.name] = switch.name
        elif switch.tier == "spine":
            pod = "-".join(map(str, sorted(units.get(switch.name, ()))))
            groups[switch.name] = f"spine-{pod}" if pods else "spine"
        else:
            groups[switch.name] = "core"
    return groups


def _free_numbers(start: int, taken: set[int]) -> Iterator[int]:
    number = start
    while True:
        if number not in taken:
            yield number
        number += 1
