"""An InfiniBand fabric as its subnet manager sees it: nodes (switches, and one channel
adapter per cabled host port) and port-to-port links, from the plan's links; the routing
engine the topology calls for, with the reason.

Port numbers are the plan's: a switch's 'p7' is port 7, a host's adapter has one port (a
host port such as 'ib0' is one single-port adapter, as on a DGX's ConnectX-7 cards). Node
descriptions are the plan's device names, a host adapter's 'host port' ('dgx-001 ib0').
GUIDs are the delivered ones where the lock holds them (``reconcile --accept``: a switch's
node GUID, an adapter's port GUID), else placeholders made from the names
(ibnetdiscover.placeholder_guid): real ones exist only on delivered hardware.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import compress
from operator import not_
from typing import NamedTuple

from cluster_iac.base.runs import runs
from cluster_iac.formats.ibnetdiscover import (
    CA_GUID_BASE,
    SWITCH_GUID_BASE,
    IbEnd,
    IbNode,
    Topology,
    check_guids,
    placeholder_guid,
    placeholder_guids,
)
from cluster_iac.plan.facts import NODE
from cluster_iac.plan.model import Plan

_SWITCH_PORT = re.compile(r"p([1-9][0-9]*)")


def infiniband_fabrics(plan: Plan) -> list[str]:
    """The plan's InfiniBand fabrics ('compute', 'storage'), in that order."""
    return [name for name, fabric in plan.fabrics.items()
            if fabric.technology == "infiniband" and name in plan.fabric_wiring]


def switch_port(name: str) -> int:
    """The number of a switch port the plan names 'pN'."""
    found = _SWITCH_PORT.fullmatch(name)
    if found is None:
        raise ValueError(f"switch port {name!r} is not 'p' and a number")
    return int(found.group(1))


def sm_hosts(plan: Plan, network: str) -> tuple[str, ...]:
    """The hosts that run OpenSM on the fabric, master first (the spec's
    fabric.<network>.subnet_manager.hosts), or none."""
    config = getattr(plan.settings.fabric, network, None)
    manager = getattr(config, "subnet_manager", None)
    return tuple(manager.hosts) if manager is not None else ()


def fabric_stretches(plan: Plan, network: str) -> list[tuple[int, int]]:
    """The (start, stop) runs of plan.links on the fabric's network, in table order: the
    builders lay a network's cables together, so a 100,000-GPU plan's 355,000 links hold the
    compute fabric's 300,000 in one run, read as slices instead of row by row."""
    links = plan.links
    return [(start, stop) for start, stop in runs(links.network)
            if links.network[start] == network]


def fabric_rows(plan: Plan, network: str) -> tuple[list[int], list[int]]:
    """The rows of plan.links on the fabric, in table order: (those whose A end is a host,
    the others, from switch to switch); no row made a record."""
    a_device = plan.links.a_device
    host = {name for name, level in plan.fabric_wiring[network].tier.items()
            if level == "node"}.__contains__
    hosts: list[int] = []
    switches: list[int] = []
    for start, stop in fabric_stretches(plan, network):
        at_host = list(map(host, a_device[start:stop]))
        hosts += compress(range(start, stop), at_host)
        switches += compress(range(start, stop), map(not_, at_host))
    return hosts, switches


def node_guids(plan: Plan, adapters: list[str],
               switches: list[str]) -> tuple[dict[str, int], dict[str, int]]:
    """(each adapter's ('host port') and switch's node GUID, each adapter's port GUID).

    A GUID the lock holds (plan.facts, ``reconcile --accept``) is the delivered one: a
    switch's node GUID as it is, an adapter's port GUID as it is. The lock holds no
    adapter's node GUID (partitions.conf, reconcile and ibnetdiscover's port lines know an
    adapter by its port GUID), so it is written as the port GUID - 1: ibsim numbers a node's
    ports from its node GUID (port n is node GUID + n, whatever the file says), and the
    fabric it builds from the file then reports the accepted port GUID back. (A ConnectX-4
    or later reports its node GUID equal to its port GUID; a compare by node GUID against a
    live fabric has to read the port GUID.) Any other GUID is a placeholder
    (ibnetdiscover.placeholder_guid; port GUID = node GUID + 1 likewise). Two nodes with one
    GUID raise ValueError.
    """
    nodes = dict(zip(adapters, adapter_guids(plan, adapters), strict=True))
    ports = {name: guid + 1 for name, guid in nodes.items()}
    nodes.update(zip(switches, switch_guids(plan, switches), strict=True))
    check_guids(nodes)
    return nodes, ports


def adapter_guids(plan: Plan, adapters: Sequence[str],
                  placeholders: Sequence[int] | None = None,
                  ends: tuple[Sequence[str], Sequence[str]] | None = None) -> list[int]:
    """The node GUID of each adapter ('host port'), in order, as node_guids gives it: the
    lock's port GUID - 1, else its placeholder (from ``placeholders``, each adapter's, where
    the caller has hashed them). ``ends``: the adapters' hosts and ports as columns, where
    the caller has them, to pair the lock's keys from (adapter_keys splits the names)."""
    held = plan.facts.guids if plan.facts is not None else {}
    if not held:  # before reconcile --accept: every one a placeholder
        if placeholders is not None:
            return list(placeholders)
        return placeholder_guids(adapters, CA_GUID_BASE)
    real = list(map(held.get, zip(*ends, strict=True) if ends is not None
                    else adapter_keys(adapters)))
    if placeholders is not None:
        return [made if guid is None else guid - 1
                for made, guid in zip(placeholders, real, strict=True)]
    return [placeholder_guid(name, CA_GUID_BASE) if guid is None else guid - 1
            for name, guid in zip(adapters, real, strict=True)]


def adapter_keys(adapters: Sequence[str]) -> list[tuple[str, str]]:
    """Each adapter's ('host port') key in the lock's GUIDs (plan.facts.guids): (host, port)."""
    return [(host, port) for host, _, port in (a.partition(" ") for a in adapters)]


def switch_guids(plan: Plan, switches: Sequence[str]) -> list[int]:
    """The node GUID of each switch, in order, as node_guids gives it: the lock's, else
    its placeholder."""
    held = plan.facts.guids if plan.facts is not None else {}
    found = [held.get((name, NODE)) for name in switches]
    return [placeholder_guid(name, SWITCH_GUID_BASE) if guid is None else guid
            for name, guid in zip(switches, found, strict=True)]


def delivered_count(plan: Plan, network: str,
                    rows: tuple[list[int], list[int]] | None = None) -> tuple[int, int]:
    """(how many of the fabric's switches and host adapters have a GUID the lock holds,
    how many there are); ``rows`` its fabric_rows, where the caller has them."""
    held = plan.facts.guids if plan.facts is not None else {}
    tier = plan.fabric_wiring[network].tier
    links = plan.links
    hosts = (rows or fabric_rows(plan, network))[0]
    switches = [name for name, level in tier.items() if level != "node"]
    if not held:
        return 0, len(hosts) + len(switches)
    names = [(links.a_device[i], links.a_port[i]) for i in hosts]
    names += [(name, NODE) for name in switches]
    return sum(1 for key in names if key in held), len(names)


def topology(plan: Plan, network: str) -> Topology:
    """The fabric's nodes and links. The first subnet manager host's first adapter comes
    first (ibsim runs the subnet manager from the first node of its file), then the
    switches leaf, spine, core, then the other adapters in cabling order."""
    wiring = plan.fabric_wiring[network]
    ports = {s.name: s.ports for s in plan.switches}
    top = Topology()
    links = [link for link in plan.links.rows() if link.network == network]
    host_ports = [(link.a_device, link.a_port) for link in links
                  if wiring.tier.get(link.a_device) == "node"]
    masters = sm_hosts(plan, network)[:1]
    host_ports.sort(key=lambda end: end[0] not in masters)  # stable: the master's first
    switches = [name for tier in ("leaf", "spine", "core")
                for name, t in wiring.tier.items() if t == tier]
    guids, port_guids = node_guids(plan, [f"{host} {port}" for host, port in host_ports],
                                   switches)
    adapters = {end: IbNode("Ca", f"H-{guids[f'{end[0]} {end[1]}']:016x}",
                            guids[f"{end[0]} {end[1]}"], 1, f"{end[0]} {end[1]}")
                for end in host_ports}
    ordered = list(adapters.values())
    first = [ordered.pop(0)] if masters and ordered else []
    nodes = first + [IbNode("Switch", f"S-{guids[name]:016x}", guids[name], ports[name], name)
                     for name in switches] + ordered
    top.nodes = {node.node_id: node for node in nodes}
    top.port_guids = {IbEnd(node.node_id, 1): port_guids[node.description]
                      for node in adapters.values()}
    ids = {name: f"S-{guids[name]:016x}" for name in switches}
    for link in links:
        a = adapters.get((link.a_device, link.a_port))
        a_end = (IbEnd(a.node_id, 1) if a is not None
                 else IbEnd(ids[link.a_device], switch_port(link.a_port)))
        top.add_link(a_end, IbEnd(ids[link.b_device], switch_port(link.b_port)))
    return top


class Routing(NamedTuple):
    """The routing engine OpenSM is asked for, and why."""

    engine: str  # 'ftree' | 'updn'
    reason: str


def routing(plan: Plan, network: str) -> Routing:
    """ftree for a fat tree (two or more tiers, every host on a leaf, every leaf with hosts
    and cabled alike to the tier above); updn otherwise."""
    wiring = plan.fabric_wiring[network]
    fabric = plan.fabrics[network]
    leaves = [name for name, tier in wiring.tier.items() if tier == "leaf"]
    served = {up for name, tier in wiring.tier.items() if tier == "node"
              for up in wiring.up.get(name, ())}
    if fabric.tiers < 2:
        return Routing("updn", "one switch tier: no tree for ftree to rank (it needs leaves "
                               "and roots); updn routes shortest up-down paths")
    bare = [leaf for leaf in leaves if leaf not in served]
    if bare:
        return Routing("updn", f"not a fat tree for ftree: leaf {bare[0]} has no host, and "
                               "ftree ranks leaves by their hosts; updn routes any tree "
                               "deadlock-free")
    if any(wiring.tier.get(up) != "leaf" for name, tier in wiring.tier.items()
           if tier == "node" for up in wiring.up.get(name, ())):
        return Routing("updn", "not a fat tree for ftree: a host is cabled above the leaf "
                               "tier; updn routes any tree deadlock-free")
    shapes = {(len(wiring.up.get(leaf, ())), wiring.uplinks.get(leaf)) for leaf in leaves}
    if len(shapes) > 1:
        return Routing("updn", "not a fat tree for ftree: the leaves are not cabled alike to "
                               "the spines; updn routes any tree deadlock-free")
    return Routing("ftree", f"a {fabric.tiers}-tier fat tree ({fabric.design}): every host on "
                            "a leaf, every leaf cabled alike to every switch above it; ftree "
                            "spreads routes evenly over the up links, congestion-free for "
                            "shift permutations")
