"""Ansible YAML inventory: groups by role, node type, rack, partition and fabric leaf."""

from __future__ import annotations

import re
from collections import defaultdict

from cluster_iac.emit.base import GENERATED_BY
from cluster_iac.emit.formats import yaml_text
from cluster_iac.plan import Plan
from cluster_iac.plan.physical import Device

# Role group names (the playbooks' words); switches and PDUs are groups of their own.
ROLE_GROUPS = {
    "compute": "compute",
    "controller": "controllers",
    "login": "login",
    "lustre_mds": "lustre_mds",
    "lustre_oss": "lustre_oss",
    "service": "service",
}
# Where the playbooks install what the slurm and nccl emitters render (paths relative to the
# rendered tree on the left, on the hosts on the right). NCCL reads /etc/nccl.conf by default.
SLURM_CONF_DIR = "/etc/slurm"
NCCL_CONF_PATH = "/etc/nccl.conf"
NCCL_TOPO_DIR = "/etc/nccl"
ADDRESS_VARS = (("management", "mgmt_ip"), ("bmc", "bmc_ip"), ("ipoib", "ipoib_ip"),
                ("storage", "storage_ip"))


def render(plan: Plan) -> dict[str, str]:
    return {"ansible/inventory.yml": yaml_text(inventory(plan), [GENERATED_BY])}


def inventory(plan: Plan) -> dict[str, object]:
    """The inventory as data (all -> vars, hosts, children), hosts and groups sorted; a YAML
    serializer writes it, so no name or value can add a host, group or variable."""
    devs = plan.devices
    groups = _groups(plan, devs)
    children: dict[str, object] = {}
    for name, group in sorted(groups.items()):
        entry: dict[str, object] = {}
        if group["vars"]:
            entry["vars"] = dict(sorted(group["vars"].items()))
        entry["hosts"] = dict.fromkeys(sorted(group["hosts"]))
        children[name] = entry
    return {"all": {
        "vars": dict(sorted(_all_vars(plan).items())),
        "hosts": {d.name: _host_vars(plan, d) for d in devs},
        "children": children,
    }}


def group_name(prefix: str, name: str) -> str:
    """A valid Ansible group name: letters, digits and '_', never a leading digit."""
    return f"{prefix}_{re.sub(r'[^A-Za-z0-9_]', '_', name)}"


def _groups(plan: Plan, devs: tuple[Device, ...]) -> dict[str, dict]:
    groups: dict[str, dict] = defaultdict(lambda: {"vars": {}, "hosts": set()})
    originals: dict[str, tuple[str, str]] = {}
    known: dict[tuple[str, str], set[str]] = {}  # (prefix, name) -> its group's hosts

    def add(prefix: str, name: str, host: str) -> None:
        hosts = known.get((prefix, name))
        if hosts is None:  # a group's name is made and checked once, not once per host
            gname = group_name(prefix, name) if prefix else name
            first = originals.setdefault(gname, (prefix, name))
            if first != (prefix, name):
                raise ValueError(f"group names {':'.join(first)!r} and {prefix}:{name!r} "
                                 f"both become {gname!r}")
            if prefix:
                groups[gname]["vars"]["cluster_iac_name"] = name
            hosts = known[(prefix, name)] = groups[gname]["hosts"]
        hosts.add(host)

    for d in devs:
        if d.kind == "node":
            add("", ROLE_GROUPS[d.role], d.name)
            add("type", d.model, d.name)
        else:
            add("", _device_group(d), d.name)
        if d.rack:
            add("rack", d.rack, d.name)
    for part in plan.partitions:
        for host in part.nodes:
            add("partition", part.name, host)
    for host, leaf in _fabric_leaves(plan).items():
        for name in leaf:
            add("leaf", name, host)
    for host, unit in _scalable_units(plan).items():
        add("su", unit, host)
    for d in devs:
        if d.row:
            add("row", d.row, d.name)
    for type_name in {d.model for d in devs if d.kind == "node" and d.role == "compute"}:
        env = plan.nccl.get(type_name)
        if env is None:  # no GPUs: no NCCL files for this type
            continue
        group_vars = groups[group_name("type", type_name)]["vars"]
        # what emit/nccl.py writes for the type, and where the playbooks install it
        group_vars["nccl_conf_src"] = f"nccl/{type_name}.nccl.conf"
        group_vars["nccl_conf_path"] = NCCL_CONF_PATH
        group_vars["nccl_env_src"] = f"nccl/{type_name}.env"
        if env.topo_file:
            group_vars["nccl_topo_src"] = f"nccl/{type_name}.topo.xml"
            group_vars["nccl_topo_file"] = env.topo_file
    return groups


def _device_group(d: Device) -> str:
    if d.kind == "switch":
        return "switches"
    return "power_shelves" if d.role == "power-shelf" else "pdus"


def _fabric_leaves(plan: Plan) -> dict[str, list[str]]:
    """Node -> the compute-fabric leaves its NICs are cabled to."""
    graph = plan.graphs.get("compute")
    if graph is None:
        return {}
    leaves = {s.name for s in plan.switches if s.network == "compute" and s.tier == "leaf"}
    result: dict[str, list[str]] = {}
    for node in plan.compute_nodes:
        if node.hostname in graph:
            result[node.hostname] = sorted(set(graph.neighbors(node.hostname)) & leaves)
    return result


def _scalable_units(plan: Plan) -> dict[str, str]:
    """Node -> scalable unit, where the compute graph's nodes carry one ('su' attribute)."""
    graph = plan.graphs.get("compute")
    if graph is None:
        return {}
    units = {}
    for node in plan.compute_nodes:
        if node.hostname in graph:
            unit = graph.nodes[node.hostname].get("su")
            if unit is not None:
                units[node.hostname] = str(unit)
    return units


def _all_vars(plan: Plan) -> dict[str, object]:
    return {
        "cluster_name": plan.cluster.name,
        "slurm_conf_dir": SLURM_CONF_DIR,
        "slurm_conf_src": "slurm",
        "slurm_topology_conf": f"{SLURM_CONF_DIR}/topology.conf",
    }


def _host_vars(plan: Plan, d: Device) -> dict[str, object]:
    hv: dict[str, object] = {"rack": d.rack, "device_kind": d.kind}
    if d.u is not None:
        hv["rack_u"] = d.u
    for network, var in ADDRESS_VARS:
        ip = plan.addresses.get(network, {}).get(d.name)
        if ip:
            hv[var] = ip
    if "mgmt_ip" in hv:
        hv["ansible_host"] = hv["mgmt_ip"]
    if d.kind == "node":
        nt = plan.node_types[d.model]
        hv.update(node_type=d.model, node_role=d.role, gpu_count=nt.gpu_count)
    elif d.kind == "switch":
        hv.update(switch_model=d.model, switch_role=d.role)
    else:
        hv["pdu_profile"] = d.model
    return dict(sorted(hv.items()))
