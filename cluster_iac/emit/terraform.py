"""Terraform variables: nodes, racks, networks and addresses as cluster.auto.tfvars.json."""

from __future__ import annotations

from cluster_iac.emit.formats import json_text
from cluster_iac.plan import Plan


def render(plan: Plan) -> dict[str, str]:
    return {"terraform/cluster.auto.tfvars.json": json_text(tfvars(plan), sort_keys=True)}


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
    partitions: dict[str, list[str]] = {}
    for part in plan.partitions:
        for host in part.nodes:
            partitions.setdefault(host, []).append(part.name)
    types = {name: (nt.gpu_count, nt.gpu_model, nt.platform)
             for name, nt in plan.node_types.items()}
    networks = list(plan.addresses.items())
    nodes: dict[str, dict[str, object]] = {}
    for d in plan.devices:
        if d.kind != "node":
            continue
        gpu_count, gpu_model, platform = types[d.model]
        nodes[d.name] = {
            "node_type": d.model, "role": d.role, "rack": d.rack, "row": d.row,
            "rack_u": d.u, "gpu_count": gpu_count, "gpu_model": gpu_model,
            "platform": platform, "partitions": sorted(partitions.get(d.name, ())),
            "addresses": {net: hosts[d.name] for net, hosts in networks if d.name in hosts},
        }
    return nodes


def _networks(plan: Plan) -> dict[str, dict[str, object]]:
    networks = plan.settings.networks
    result = {}
    for name in ("management", "bmc", "ipoib", "storage"):
        net = getattr(networks, name)
        if net is not None:
            result[name] = {"cidr": str(net.cidr), "interface": net.interface,
                            "reserved": net.reserved, "switch_model": net.switch}
    return result
