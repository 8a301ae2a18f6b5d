"""Terraform variables: nodes, racks, networks and addresses as cluster.auto.tfvars.json."""

from __future__ import annotations

from cluster_iac.formats.json import json_text
from cluster_iac.plan import Plan


def render(plan: Plan) -> dict[str, str]:
    variables = tfvars(plan)
    return {"terraform/cluster.auto.tfvars.json": json_text(variables, sort_keys=True)}


def tfvars(plan: Plan) -> dict[str, object]:
    """Plain maps keyed by name, so `for_each` over them gives stable resource addresses."""
    return {
        "cluster_name": plan.cluster.name,
        "site": plan.cluster.site,
        "racks": {r.name: {"row": r.row, "position": r.position, "height_u": r.height_u,
                           "cooling": r.cooling, "pdu_profile": r.pdu_profile,
                           "max_power_kw": r.max_power_kw} for r in plan.racks},
        "nodes": _nodes(plan),
        "switches": {d.name: {"rack": d.rack, "rack_u": d.u, "model": d.model, "role": d.role}
                     for d in plan.devices if d.kind == "switch"},
        "networks": _networks(plan),
        "addresses": dict(plan.addresses),  # json_text sorts every mapping's keys
    }


def _nodes(plan: Plan) -> dict[str, dict[str, object]]:
    nodes = [d for d in plan.devices if d.kind == "node"]
    names = [d.name for d in nodes]
    partitions = _partitions(plan, names)
    types = {name: (nt.gpu_count, nt.gpu_model, nt.platform)
             for name, nt in plan.node_types.items()}
    found: dict[str, dict[str, object]] = {}
    for d, parts, addresses in zip(nodes, partitions, _addresses(plan, names), strict=True):
        gpu_count, gpu_model, platform = types[d.model]
        found[d.name] = {
            "node_type": d.model, "role": d.role, "rack": d.rack, "row": d.row,
            "rack_u": d.u, "gpu_count": gpu_count, "gpu_model": gpu_model,
            "platform": platform, "partitions": parts, "addresses": addresses,
        }
    return found


def _partitions(plan: Plan, names: list[str]) -> list[list[str]]:
    """Each node's partitions, sorted: one list for the nodes of the same partitions (most
    are in one), sorted once, not once per node."""
    member: dict[str, list[str]] = {}
    for part in plan.partitions:
        for host in part.nodes:
            member.setdefault(host, []).append(part.name)
    of = [tuple(member.get(name, ())) for name in names]
    ordered = {parts: sorted(parts) for parts in set(of)}
    return list(map(ordered.__getitem__, of))


def _addresses(plan: Plan, names: list[str]) -> list[dict[str, str]]:
    """Each node's address on each network it is on, network by network (a node that is on
    all of them takes them as one row)."""
    networks = list(plan.addresses)
    columns = [list(map(hosts.get, names)) for hosts in plan.addresses.values()]
    rows = zip(*columns, strict=True) if columns else ([()] * len(names))
    return [dict(zip(networks, row, strict=True)) if None not in row
            else {net: a for net, a in zip(networks, row, strict=True) if a is not None}
            for row in rows]


def _networks(plan: Plan) -> dict[str, dict[str, object]]:
    networks = plan.settings.networks
    result = {}
    for name in ("management", "bmc", "ipoib", "storage"):
        net = getattr(networks, name)
        if net is not None:
            result[name] = {"cidr": str(net.cidr), "interface": net.interface,
                            "reserved": net.reserved, "switch_model": net.switch}
    return result
