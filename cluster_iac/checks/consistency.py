"""Consistency checks the compile passes leave open: name and address clashes across device
kinds and networks, unused node types, unscheduled nodes, empty racks, Lustre server roles."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from itertools import chain, combinations

from cluster_iac.base.errors import Diagnostic, Severity
from cluster_iac.checks.registry import check
from cluster_iac.plan import Plan


@check("consistency.device_names")
def device_names(plan: Plan) -> Iterator[Diagnostic]:
    """Hostnames, switch, PDU and power-shelf names are one namespace (inventory, DNS, NetBox);
    expand_nodes already rejects two nodes with one hostname."""
    power = plan.power_devices  # the power pass's PDUs and shelves (each rack's, by name)
    names = Counter(chain((n.hostname for n in plan.nodes), (s.name for s in plan.switches),
                          (d.name for d in power)))
    clashes = {name for name, n in names.items() if n > 1}
    if not clashes:  # the usual case: the owners are looked up only for names used twice
        return
    owners: dict[str, list[tuple[str, tuple[str | int, ...]]]] = {}
    for node in plan.nodes:
        if node.hostname in clashes:
            owners.setdefault(node.hostname, []).append(("node", (*node.spec_path, "hostname")))
    for sw in plan.switches:
        if sw.name in clashes:
            owners.setdefault(sw.name, []).append((f"{sw.network} switch", sw.spec_path))
    racks = {rack.name: rack.spec_path for rack in plan.racks}
    for device in power:
        if device.kind == "pdu" and device.name in clashes:
            owners.setdefault(device.name, []).append(("PDU", racks[device.rack]))
    for device in power:
        if device.kind == "power-shelf" and device.name in clashes:
            owners.setdefault(device.name, []).append(("power shelf", ()))
    for name in sorted(owners):
        kinds = owners[name]
        if len(kinds) > 1:
            yield Diagnostic(
                "CONSISTENCY-NAME-CLASH",
                f"device name {name} is used by {len(kinds)} devices "
                f"({', '.join(kind for kind, _ in kinds)}); inventories need unique names",
                next((path for _, path in kinds if path), ()))


@check("consistency.addresses")
def addresses(plan: Plan) -> Iterator[Diagnostic]:
    """No address is given twice in one network, and no two IP networks overlap."""
    for network, table in sorted(plan.addresses.items()):
        if len(set(table.values())) == len(table):
            continue  # no address given twice
        counts = Counter(table.values())
        for address, n in sorted(counts.items()):
            if n > 1:
                devices = sorted(d for d, a in table.items() if a == address)
                yield Diagnostic(
                    "CONSISTENCY-DUPLICATE-ADDRESS",
                    f"{network} address {address} is given to {n} devices ({', '.join(devices)})",
                    ("networks", network, "cidr"))
    nets = plan.settings.networks
    declared = [(name, getattr(nets, name)) for name in ("management", "bmc", "ipoib", "storage")
                if getattr(nets, name) is not None]
    for (a, net_a), (b, net_b) in combinations(declared, 2):
        if net_a.cidr.overlaps(net_b.cidr):
            yield Diagnostic(
                "CONSISTENCY-SUBNET-OVERLAP",
                f"networks.{b}.cidr {net_b.cidr} overlaps networks.{a}.cidr {net_a.cidr}; "
                f"hosts on both would get clashing routes", ("networks", b, "cidr"))


@check("consistency.node_types")
def unused_node_types(plan: Plan) -> Iterator[Diagnostic]:
    """A node type that no node group uses is never racked, powered or scheduled."""
    used = {n.node_type for n in plan.nodes}
    for name in sorted(set(plan.node_types) - used):
        yield Diagnostic(
            "CONSISTENCY-UNUSED-NODE-TYPE",
            f"node type {name} is defined but no node group uses it, so no rack holds it",
            plan.node_types[name].spec_path, Severity.WARNING)


@check("consistency.partitions")
def partitions(plan: Plan) -> Iterator[Diagnostic]:
    """Partitions name known nodes once each, and every compute node is in some partition."""
    known = {n.hostname for n in plan.nodes}
    scheduled: set[str] = set()
    for part in plan.partitions:
        unknown = sorted(set(part.nodes) - known)
        if unknown:
            yield Diagnostic(
                "CONSISTENCY-PARTITION-NODES",
                f"partition {part.name} names {len(unknown)} unknown node(s), e.g. {unknown[0]}",
                part.spec_path)
        if not part.nodes:
            yield Diagnostic("CONSISTENCY-PARTITION-EMPTY", f"partition {part.name} has no nodes",
                             part.spec_path)
        twice = sorted(h for h, n in Counter(part.nodes).items() if n > 1)
        if twice:
            yield Diagnostic(
                "CONSISTENCY-PARTITION-DUPLICATE",
                f"partition {part.name} lists {len(twice)} node(s) more than once, e.g. "
                f"{twice[0]} (named twice: by a node group, a hostlist or a count)",
                part.spec_path,
                Severity.WARNING)
        scheduled.update(part.nodes)
    groups: dict[str, list[str]] = {}
    for node in plan.compute_nodes:
        if node.hostname not in scheduled:
            groups.setdefault(node.group, []).append(node.hostname)
    for group, hosts in sorted(groups.items()):
        path = next(n.spec_path for n in plan.nodes if n.group == group)
        yield Diagnostic(
            "CONSISTENCY-UNSCHEDULED",
            f"{len(hosts)} compute node(s) of group {group} ({hosts[0]}...) are in no "
            f"partition, so Slurm never runs jobs on them", path, Severity.WARNING)


@check("consistency.racks")
def empty_racks(plan: Plan) -> Iterator[Diagnostic]:
    """A rack that holds only its own management access switches serves nothing."""
    used = {n.rack for n in plan.nodes}
    used |= {s.rack for s in plan.switches if not (s.tier == "access" and s.network in
                                                   ("management", "bmc"))}
    for rack in plan.racks:
        if rack.name not in used:
            yield Diagnostic("CONSISTENCY-EMPTY-RACK",
                             f"rack {rack.name} holds no node and no fabric or aggregation "
                             f"switch", rack.spec_path, Severity.WARNING)
