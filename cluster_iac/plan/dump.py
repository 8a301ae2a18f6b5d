"""The expanded plan as plain data (counts first), for `cluster-iac plan` as YAML or JSON."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from cluster_iac.base.hostlist import fold
from cluster_iac.base.runs import runs
from cluster_iac.formats.yaml import ruamel_yaml_text
from cluster_iac.plan import Plan

NETWORKS = ("compute", "storage", "management", "bmc")


def counts(plan: Plan) -> dict[str, Any]:
    """Nodes, GPUs, switches per network and tier, links per network and tier, racks, PDUs."""
    switches: dict[str, dict[str, int]] = {}
    for sw in plan.switches:
        tiers = switches.setdefault(sw.network, {})
        tiers[sw.tier] = tiers.get(sw.tier, 0) + 1
    table = plan.links
    by_tier: dict[tuple[str, str], int] = {}
    # the builders lay a network's tier's cables together: a run at a time, not cable by cable
    for start, stop in runs(table.network, table.tier):
        key = (table.network[start], table.tier[start])
        by_tier[key] = by_tier.get(key, 0) + stop - start
    links = {network: {t: n for (net, t), n in sorted(by_tier.items()) if net == network}
             for network in NETWORKS if any(net == network for net, _t in by_tier)}
    pdus = sum(1 for d in plan.power_devices if d.kind == "pdu")
    return {
        "nodes": len(plan.nodes),
        "nodes_by_role": dict(sorted(Counter(n.role for n in plan.nodes).items())),
        "gpus": plan.gpu_count,
        "rows": len(plan.rows),
        "racks": len(plan.racks),
        "pdus": pdus,
        "switches": {k: dict(sorted(v.items())) for k, v in sorted(switches.items())},
        "links": links,
        "nvlink_domains": len(plan.nvlink_domains),
    }


def plan_data(plan: Plan) -> dict[str, Any]:
    """Everything a reviewer or a pipeline wants from the plan, sorted and JSON-safe."""
    su = _scalable_units(plan)
    return {
        "cluster": {"name": plan.cluster.name, "slurm_version": plan.cluster.slurm_version},
        "counts": counts(plan),
        "fabrics": {name: _fabric(f) for name, f in sorted(plan.fabrics.items())},
        "nvlink_domains": [
            {"name": d.name, "kind": d.kind, "gpus": d.gpus, "nodes": fold(d.nodes),
             "gpu_bandwidth_gbs": d.gpu_bandwidth_gbs, "switch_trays": list(d.switch_trays)}
            for d in plan.nvlink_domains],
        "node_types": {name: {"platform": nt.platform, "gpus": nt.gpu_count,
                              "gpu_model": nt.gpu_model, "cpus": nt.cpus,
                              "memory_gib": nt.memory_gib, "max_power_w": nt.max_power_w,
                              "nics": {n.role: n.count for n in nt.nics}}
                       for name, nt in sorted(plan.node_types.items())},
        "racks": [{"name": r.name, "row": r.row, "height_u": r.height_u,
                   "pdu_profile": r.pdu_profile} for r in plan.racks],
        "nodes": [_node(plan, n, su) for n in plan.nodes],
        "switches": [_switch(plan, s) for s in plan.switches],
        "partitions": [{"name": p.name, "nodes": fold(p.nodes), "default": p.default}
                       for p in plan.partitions],
    }


def to_json(plan: Plan) -> str:
    return json.dumps(plan_data(plan), indent=2, sort_keys=False) + "\n"


def to_yaml(plan: Plan) -> str:
    return ruamel_yaml_text(plan_data(plan))


def _fabric(fabric: Any) -> dict[str, Any]:
    return {
        "technology": fabric.technology, "design": fabric.design, "tiers": fabric.tiers,
        "link_speed_gbps": fabric.link_speed_gbps,
        "scalable_unit_nodes": fabric.scalable_unit_nodes,
        "scalable_units": fabric.scalable_units,
        "switches": dict(fabric.switch_counts), "links": dict(fabric.link_counts),
        "oversubscription": {tier: round(fabric.oversubscription(tier), 4)
                             for tier in fabric.tier_bandwidth_gbps},
        "spare_ports": fabric.spare_ports,
    }


def _scalable_units(plan: Plan) -> dict[str, int]:
    wiring = plan.fabric_wiring.get("compute")
    if wiring is None:
        return {}
    return {host: wiring.su[host] for host in wiring.hosts()}


def _node(plan: Plan, node: Any, su: dict[str, int]) -> dict[str, Any]:
    place = plan.placements.get(node.hostname)
    data: dict[str, Any] = {"hostname": node.hostname, "role": node.role,
                            "node_type": node.node_type, "rack": node.rack,
                            "u": place.u if place else None}
    if node.hostname in su:
        data["scalable_unit"] = su[node.hostname]
    addresses = {net: by[node.hostname] for net, by in sorted(plan.addresses.items())
                 if node.hostname in by}
    if addresses:
        data["addresses"] = addresses
    return data


def _switch(plan: Plan, switch: Any) -> dict[str, Any]:
    place = plan.placements.get(switch.name)
    return {"name": switch.name, "model": switch.model, "network": switch.network,
            "tier": switch.tier, "rack": switch.rack, "u": place.u if place else None}
