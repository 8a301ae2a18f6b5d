"""Each management and BMC network switch's configuration (plan/switching.py), bridged.

compile/build_management.py places the switches (an access switch per rack, an aggregation
pair above every 44 of them, core pairs above those) and cables them; this pass reads those
cables and gives each switch, in the one switch model the Ethernet fabrics use:

- one VLAN, its network's: the id from plan/switching.py ``VLANS`` (management 10, bmc 20),
  the MTU the spec gives the network's hosts (``networks.<name>.mtu``), else 1500;
- every port down to a device (host NIC, BMC, PDU, a fabric switch's mgmt0) an access port
  of that VLAN, untagged, described by its cable (the cable table's label);
- one LACP bond ``uplink`` over its uplinks (one cable to each switch of the pair above it)
  and one LACP bond ``bond<n>`` per switch below it over that switch's cables (n: the first
  member port's number), each a trunk of the VLAN, tagged: the aggregation pair carries
  every VLAN of the switches below it;
- on each aggregation or core pair, its MLAG (plan/switching.py ``Mlag``): the peer link's
  ports in a bond ``peerlink`` (a trunk of the VLAN, as Cumulus's and Arista's MLAG guides
  carry every VLAN over it), and each bond down to a switch below an MLAG bond, its
  ``clag_id`` its number (the child's port, the same on both switches of the pair).

A switch's configuration holds no BGP (``bgp`` None): the management networks are one
broadcast domain each, the hosts' gateway (the network's first reserved address) outside
the plan.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import chain
from operator import itemgetter

from cluster_iac.base.runs import runs
from cluster_iac.compile.build_management import NETWORKS, PEER_LINK
from cluster_iac.plan import Plan
from cluster_iac.plan.switching import (
    DEFAULT_MTU,
    VLANS,
    Bond,
    Mlag,
    SwitchConfig,
    SwitchInterface,
    Vlan,
    mlag_system_mac,
    port_number,
)
from cluster_iac.spec import ClusterSpec


def plan_access(spec: ClusterSpec, plan: Plan) -> Plan:
    """plan.management_configs for every switch of the management and BMC networks."""
    configs: dict[str, SwitchConfig] = {}
    cables = plan.cables
    spans = runs(cables.network)  # each network's cables, found once for both networks
    for network in NETWORKS:
        ipnet = getattr(plan.settings.networks, network)
        if ipnet is None:
            continue
        vlan = Vlan(VLANS[network], network, ipnet.mtu or DEFAULT_MTU)
        rows = list(chain.from_iterable(range(start, stop) for start, stop in spans
                                        if cables.network[start] == network))
        configs.update(network_configs(plan, network, vlan, rows))
    return replace(plan, management_configs=configs) if configs else plan


def network_configs(plan: Plan, network: str, vlan: Vlan, rows: list[int]
                    ) -> dict[str, SwitchConfig]:
    """The configurations of one management network's switches; ``rows``: the network's
    rows of the cable table (a tenth of it), each cable's id made here (Cables.cable_id)."""
    switches = [s for s in plan.switches if s.network == network]
    names = {s.name for s in switches}
    # each switch's host ports, made whole here (a host port is in no bond), and its ports to
    # other switches, made once their bonds are known (_bonded)
    hosts: dict[str, list[tuple[int, SwitchInterface]]] = {name: [] for name in names}
    links: dict[str, list[_Port]] = {name: [] for name in names}
    cables = plan.cables
    columns = (cables.tier, cables.a_device, cables.a_port, cables.b_device, cables.b_port,
               cables.speed_gbps, cables.id_head)
    for tier, a, a_port, b, b_port, speed, head in zip(
            *(map(column.__getitem__, rows) for column in columns), strict=True):
        if b not in names:
            continue
        cable = head + a_port
        if tier == PEER_LINK:  # the two switches of an MLAG pair
            for one, port, other, far in ((a, a_port, b, b_port), (b, b_port, a, a_port)):
                links[one].append((port_number(port), port, "peerlink", other, far, cable, speed))
            continue
        # a switch below b (by its name and its port: a host may share a switch's name, a
        # clash checks/ reports): b's downlink, a's uplink, both in a bond
        if a in names and a_port.startswith("swp"):
            links[b].append((port_number(b_port), b_port, "fabric", a, a_port, cable, speed))
            links[a].append((port_number(a_port), a_port, "uplink", b, b_port, cable, speed))
        else:
            hosts[b].append((port_number(b_port), SwitchInterface(
                b_port, "host", a, a_port, cable, speed, vlan.mtu, "", "", vlan.vid)))
    path = ("networks", network)
    mlags = _mlags(plan, network)
    configs = {}
    for switch in switches:
        mlag = mlags.get(switch.name)
        interfaces, bonds = _bonded(hosts[switch.name], links[switch.name], vlan,
                                    mlag is not None)
        configs[switch.name] = SwitchConfig(
            switch.name, network, switch.model, switch.tier, switch.rack, 0, "", interfaces,
            None, path, vlans=(vlan,), bonds=bonds, mlag=mlag)
    return configs


def _mlags(plan: Plan, network: str) -> dict[str, Mlag]:
    """Each pair switch's MLAG, from the pairs compile/build_management.py made."""
    found = {}
    for pair in plan.mlag_pairs:
        if pair.network == network:
            mac = mlag_system_mac(network, pair.level, pair.number)
            found[pair.first] = Mlag(pair.domain, pair.second, pair.ports, mac, True)
            found[pair.second] = Mlag(pair.domain, pair.first, pair.ports, mac, False)
    return found


_Port = tuple[int, str, str, str, str, str, int]
"""A cabled port to another switch before its bond is known: (port number, port, kind, far
switch, far port, cable label, speed)."""


def _bonded(hosts: list[tuple[int, SwitchInterface]], links: list[_Port], vlan: Vlan,
            dual_homed: bool) -> tuple[tuple[SwitchInterface, ...], tuple[Bond, ...]]:
    """The ports in port order (``hosts``: the host ports by number, made already; ``links``:
    the ports to other switches, each made here with its bond), and the bonds: 'uplink' over
    the uplinks, 'peerlink' over an MLAG pair's peer link, 'bond<n>' over the cables from one
    switch below (n: its first member's number). On an MLAG pair (dual_homed) each bond down
    to a switch below is dual-homed: its clag_id is that n."""
    links.sort(key=itemgetter(0))
    groups: dict[str, list[_Port]] = {}  # 'uplink', 'peerlink' or the switch below -> ports
    for port in links:
        key = port[2] if port[2] in ("uplink", "peerlink") else port[3]
        groups.setdefault(key, []).append(port)
    bonds = []
    for key, members in sorted(groups.items(), key=lambda g: (
            g[0] != "uplink", g[0] != "peerlink", g[1][0][0])):
        number, kind = members[0][0], members[0][2]
        bonds.append(Bond(key if kind != "fabric" else f"bond{number}", kind,
                          tuple([p[1] for p in members]), tuple([p[3] for p in members]),
                          vlan.mtu, number if dual_homed and kind == "fabric" else 0))
    bond_of = {member: bond.name for bond in bonds for member in bond.members}
    ports = hosts + [(number, SwitchInterface(name, kind, peer, peer_port, cable, speed,
                                              vlan.mtu, "", "", 0, bond_of[name]))
                     for number, name, kind, peer, peer_port, cable, speed in links]
    ports.sort(key=itemgetter(0))
    return tuple(map(itemgetter(1), ports)), tuple(bonds)
