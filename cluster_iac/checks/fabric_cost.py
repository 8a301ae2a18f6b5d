"""Fabric cost checks: a fabric whose hosts run slower than its switches' ports (a cheaper
switch, or the same one split, carries them), and hosts that would fit one switch but for
their extra ports (the finding says why the fabric is not one switch)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from itertools import chain
from typing import Any, NamedTuple
from weakref import WeakKeyDictionary

from cluster_iac.base.errors import Diagnostic, Severity
from cluster_iac.base.runs import runs
from cluster_iac.checks.registry import check
from cluster_iac.plan import FabricPlan, Plan
from cluster_iac.plan.fattree import (
    FabricSizeError,
    breakout_legs,
    parse_ratio,
    size_fat_tree,
)


class FabricHosts(NamedTuple):
    """A fabric's hosts as the builder sized them: how many, the most ports one has, all ports,
    the rates they run at, and each node type's (hosts, ports each)."""

    hosts: int
    most: int
    ports: int
    speeds: frozenset[int]
    types: dict[str, tuple[int, int]]


def fabric_hosts(plan: Plan, network: str) -> FabricHosts:
    """A fabric's hosts, counted once per plan and network (_HOSTS): the cost and growth
    checks each ask for them, and at 100,000 GPUs a count reads 300,000 links."""
    counted = _HOSTS.setdefault(plan, {})
    if network not in counted:
        counted[network] = _fabric_hosts(plan, network)
    return counted[network]


_HOSTS: WeakKeyDictionary[Plan, dict[str, FabricHosts]] = WeakKeyDictionary()
"""Each plan's fabric hosts by network, by the plan's identity; held by a weak reference, so
a plan let go takes its counts with it."""


def _fabric_hosts(plan: Plan, network: str) -> FabricHosts:
    links = plan.links  # the hosts' ends of the fabric's node-leaf runs, counted at C speed
    per_host = Counter(chain.from_iterable(
        links.a_device[start:stop] for start, stop in runs(links.network, links.tier)
        if links.network[start] == network and links.tier[start] == "node-leaf"))
    node_type = {n.hostname: n.node_type for n in plan.nodes}
    types: dict[str, tuple[int, int]] = {}
    for host, ports in per_host.items():
        hosts, _ = types.get(node_type.get(host, host), (0, 0))
        types[node_type.get(host, host)] = (hosts + 1, ports)
    # each host's (Gb/s, cables to each leaf) from the wiring tables, one per host
    uplinks = plan.fabric_wiring[network].uplinks
    speeds = frozenset(uplinks[host][0] for host in per_host if host in uplinks)
    return FabricHosts(len(per_host), max(per_host.values(), default=0), sum(per_host.values()),
                  speeds, types)


def _size(fabric: FabricPlan) -> tuple[int, int]:
    """(switches, switch-to-switch cables) of a built fabric."""
    return (sum(fabric.switch_counts.values()),
            sum(n for tier, n in fabric.link_counts.items() if tier != "node-leaf"))


def _leaf(plan: Plan, network: str) -> Any:
    return next(s for s in plan.switches if s.network == network and s.tier == "leaf")


@check("fabric.slow_hosts")
def slow_hosts(plan: Plan) -> Iterator[Diagnostic]:
    """An info finding (FABRIC-OVERBUILT) for a fabric whose host ports run slower than its
    leaf's ports, each taking a whole port (the catalog lists no split of the leaf's port to
    that rate): switch capacity the hosts cannot use. It names the catalog switch that
    builds the same fabric (hosts, ports, oversubscription, design) with fewer switches, or
    as many and fewer switch-to-switch cables: one of the hosts' rate, or one whose ports
    split to it."""
    for network, fabric in sorted(plan.fabrics.items()):
        config = getattr(plan.settings.fabric, network, None)
        if config is None or fabric.breakout_legs > 1:
            continue
        leaf = _leaf(plan, network)
        hosts = fabric_hosts(plan, network)
        if len(hosts.speeds) != 1 or min(hosts.speeds) >= leaf.port_speed_gbps:
            continue
        (speed,) = hosts.speeds
        best = _cheapest(plan, config, fabric, leaf.model, hosts, speed)
        if best is None:
            continue
        model, (switches, cables), legs = best
        now = _size(fabric)
        split = f" (its ports split {legs} ways)" if legs > 1 else ""
        yield Diagnostic(
            "FABRIC-OVERBUILT",
            f"{network} fabric: its {hosts.ports} host ports run at {speed} Gb/s, each on a "
            f"whole {leaf.port_speed_gbps} Gb/s port of a {leaf.model} (the catalog lists no "
            f"split of its ports to {speed} Gb/s); built as {now[0]} switches with {now[1]} "
            f"switch-to-switch cables, where {model}{split} builds it as {switches} "
            f"switches with {cables}",
            (*fabric.spec_path, "leaf_switch"), Severity.INFO,
            hint=f"leaf_switch: {model} (and spine_switch, core_switch alike), or a switch "
                 f"whose catalog entry lists a breakout to {speed} Gb/s",
            details={"measured": now[0], "limit": switches, "unit": "switches"})


def _cheapest(plan: Plan, config: Any, fabric: FabricPlan, current: str, hosts: FabricHosts,
              speed: int) -> tuple[str, tuple[int, int], int] | None:
    """The catalog switch (of the fabric's link layer, at the hosts' rate or splitting to
    it) that builds the fabric smallest, when smaller than it is: (model, (switches,
    switch-to-switch cables), legs per port); None when none is."""
    link = "infiniband" if fabric.technology == "infiniband" else "ethernet"
    tiers = getattr(config, "tiers", "auto")
    found = []
    for model, entry in sorted(plan.catalog.switches.items()):
        if model == current or entry.link != link or entry.port_speed_gbps < speed:
            continue
        legs = breakout_legs(entry, {speed})
        if entry.port_speed_gbps != speed and legs == 1:
            continue
        try:
            tree = size_fat_tree(hosts.hosts, hosts.most, entry.ports, entry.ports,
                                 entry.ports, parse_ratio(config.oversubscription),
                                 getattr(config, "design", "plain"),
                                 su_nodes=getattr(config, "scalable_unit_nodes", None),
                                 tiers=None if tiers == "auto" else int(tiers),
                                 planned_sus=getattr(config, "planned_scalable_units", None),
                                 node_ports=hosts.ports, legs=legs)
        except FabricSizeError:
            continue
        size = (tree.leaves + tree.spines + tree.cores,
                tree.leaf_spine_cables + tree.spine_core_cables)
        found.append((size, model, legs))
    if not found:
        return None
    size, model, legs = min(found)
    return (model, size, legs) if size < _size(fabric) else None


@check("fabric.host_ports")
def host_ports(plan: Plan) -> Iterator[Diagnostic]:
    """An info finding (FABRIC-HOST-PORTS) for a fabric (not rail-optimized) whose hosts,
    one port each, would fit one leaf switch, but whose ports do not: why a 41-host storage
    fabric on 64-port switches is more than one switch, with each node type's ports."""
    for network, fabric in sorted(plan.fabrics.items()):
        if fabric.tiers < 2 or fabric.design == "rail-optimized":
            continue
        leaf = _leaf(plan, network)
        hosts = fabric_hosts(plan, network)
        cages = -(-hosts.ports // fabric.breakout_legs)
        if hosts.hosts > leaf.ports * fabric.breakout_legs or cages <= leaf.ports:
            continue
        types = ", ".join(f"{n} {name} with {ports}" for name, (n, ports)
                          in sorted(hosts.types.items(), key=lambda t: (-t[1][1], t[0])))
        uppers = sum(n for t, n in fabric.switch_counts.items() if t != "leaf")
        yield Diagnostic(
            "FABRIC-HOST-PORTS",
            f"{network} fabric: its {hosts.hosts} hosts fit one {leaf.model} ({leaf.ports} "
            f"ports) with one port each, but they have {hosts.ports} ports ({types}), more "
            f"than one switch holds, so it is built as {fabric.switch_counts['leaf']} leaves "
            f"and {uppers} upper-tier switches", fabric.spec_path, Severity.INFO,
            hint="one port per host on this fabric makes it one switch, at that host's "
                 "bandwidth; keep the ports if the bandwidth or redundancy is wanted",
            details={"measured": hosts.ports, "limit": leaf.ports, "unit": "ports"})
