"""Ansible YAML inventory: groups by role, node type, rack, partition and fabric leaf."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterator
from functools import partial

from cluster_iac.emit.base import GENERATED_BY
from cluster_iac.formats.chunks import Chunks, whole
from cluster_iac.formats.json_template import Slot
from cluster_iac.formats.yaml_template import YamlTemplate, yaml_pieces
from cluster_iac.plan import Node, Plan
from cluster_iac.plan.host_rails import HostRail, RailPort, rail_config, rail_entry
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
    """The inventory (the playbook that installs the tree is emit/playbook.py's family), its
    ``roce_rails`` laid out once per node type (RailsTemplates)."""
    return whole(render_chunks(plan))


def render_chunks(plan: Plan) -> dict[str, str | Chunks]:
    """render's files, the inventory as Chunks (41 MiB at 100,000 GPUs on RoCE): made as it
    is written (inventory_pieces), so the render holds neither its data nor its text before."""
    return {"ansible/inventory.yml": Chunks(partial(inventory_pieces, plan))}


def inventory_pieces(plan: Plan) -> Iterator[str]:
    """The inventory's text, made now and written a slice of hosts or groups at a time
    (yaml_pieces: the same bytes as yaml_text's)."""
    return yaml_pieces(inventory(plan, RailsTemplates()), [GENERATED_BY], PIECE)


# Hosts (or groups) per piece of the inventory's text: some 35 pieces of 1 MiB at 100,000 GPUs
PIECE = 1024


RailsValue = Callable[[tuple[HostRail, ...]], object]


def plain_rails(rails: tuple[HostRail, ...]) -> dict[str, object]:
    """A host's ``roce_rails`` as plain data: each NIC's netplan entry (rail_config)."""
    return {r.interface: rail_config(r) for r in rails}


class RailsTemplates:
    """A host's ``roce_rails`` as a YamlTemplate filled with its own strings (each NIC's
    address, its leaf's and its source; the rest is its node type's RailPort): one template
    per set of RailPorts, that is per node type, laid out once, and a fill per host, where
    plain_rails made 12 scalars a NIC for the writer to walk (100,000 NICs at 100,000 GPUs).
    yaml_text writes the same bytes either way: tests/test_rails_playbook.py compares them."""

    def __init__(self) -> None:
        self.templates: dict[tuple[RailPort, ...], YamlTemplate] = {}

    def __call__(self, rails: tuple[HostRail, ...]) -> object:
        ports = tuple(r.port for r in rails)
        template = self.templates.get(ports)
        if template is None:
            template = self.templates[ports] = YamlTemplate({
                r.interface: rail_entry(r, Slot(3 * n), Slot(3 * n + 1), Slot(3 * n + 2))
                for n, r in enumerate(rails)})
        return template.fill([text for r in rails
                              for text in (f"{r.source}/31", r.gateway, r.source)])


def inventory(plan: Plan, rails_value: RailsValue = plain_rails) -> dict[str, object]:
    """The inventory as data (all -> vars, hosts, children), hosts and groups sorted; a YAML
    serializer writes it, so no name or value can add a host, group or variable.
    ``rails_value``: a RoCE host's ``roce_rails`` value from its NICs (plain_rails, or
    RailsTemplates' fills, which yaml_text writes the same)."""
    children: dict[str, object] = {}
    for name, (group_vars, hosts) in sorted(_groups(plan, plan.devices).items()):
        entry: dict[str, object] = {}
        if group_vars:
            entry["vars"] = dict(sorted(group_vars.items()))
        entry["hosts"] = dict.fromkeys(sorted(hosts))  # a host listed twice is one key
        children[name] = entry
    return {"all": {
        "vars": dict(sorted(_all_vars(plan).items())),
        "hosts": _hosts(plan, rails_value),
        "children": children,
    }}


def group_name(prefix: str, name: str) -> str:
    """A valid Ansible group name: letters, digits and '_', never a leading digit."""
    return f"{prefix}_{re.sub(r'[^A-Za-z0-9_]', '_', name)}"


def _groups(plan: Plan, devs: tuple[Device, ...]) -> dict[str, tuple[dict[str, str], list[str]]]:
    """Group name -> (its vars, its hosts; inventory() sorts them and drops repeats). Members
    are collected per prefix and name first, a group's name made and checked once, not once
    per host; the devices come in name order (plan.devices), so most lists come sorted."""
    plain: dict[str, list[str]] = defaultdict(list)  # the role groups, switches, PDUs
    members: dict[str, dict[str, list[str]]] = {
        prefix: defaultdict(list) for prefix in ("type", "rack", "partition", "leaf", "su", "row")}
    types, racks, rows = members["type"], members["rack"], members["row"]
    for d in devs:
        if d.kind == "node":
            plain[ROLE_GROUPS[d.role]].append(d.name)
            types[d.model].append(d.name)
        else:
            plain[_device_group(d)].append(d.name)
        if d.rack:
            racks[d.rack].append(d.name)
        if d.row:
            rows[d.row].append(d.name)
    for part in plan.partitions:
        members["partition"][part.name].extend(part.nodes)
    leaves = members["leaf"]
    compute = plan.compute_nodes  # picked out of the nodes once for both groupings
    for uppers, hosts in _hosts_by_leaves(plan, compute).items():
        for name in uppers:
            leaves[name] += hosts
    for unit, hosts in _scalable_units(plan, compute).items():
        members["su"][unit] += hosts
    groups: dict[str, tuple[dict[str, str], list[str]]] = {
        name: ({}, hosts) for name, hosts in plain.items()}
    originals: dict[str, tuple[str, str]] = {name: ("", name) for name in plain}
    for prefix, named in members.items():
        for name, hosts in named.items():
            gname = group_name(prefix, name)
            first = originals.setdefault(gname, (prefix, name))
            if first != (prefix, name):
                raise ValueError(f"group names {':'.join(first)!r} and {prefix}:{name!r} "
                                 f"both become {gname!r}")
            groups[gname] = ({"cluster_iac_name": name}, hosts)
    for type_name in {d.model for d in devs if d.kind == "node" and d.role == "compute"}:
        env = plan.nccl.get(type_name)
        if env is None:  # no GPUs: no NCCL files for this type
            continue
        group_vars = groups.setdefault(group_name("type", type_name), ({}, []))[0]
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


def _hosts_by_leaves(plan: Plan, compute: tuple[Node, ...]
                     ) -> dict[tuple[str, ...], list[str]]:
    """The compute nodes by the compute-fabric leaves their NICs are cabled to: a rail
    leaf's hosts share one set, so each leaf takes them together (12,500 hosts at 100,000
    GPUs, some 200 sets of leaves)."""
    wiring = plan.fabric_wiring.get("compute")
    if wiring is None:
        return {}
    up = wiring.up  # a host's switches above it are its leaves
    found: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for node in compute:
        uppers = up.get(node.hostname)
        if uppers is not None:
            found[uppers].append(node.hostname)
    return found


def _scalable_units(plan: Plan, compute: tuple[Node, ...]) -> dict[str, list[str]]:
    """Scalable unit (its number as text, made once per unit) -> its compute nodes, where the
    compute fabric's wiring gives one."""
    wiring = plan.fabric_wiring.get("compute")
    if wiring is None:
        return {}
    su = wiring.su
    found: dict[int, list[str]] = defaultdict(list)
    for node in compute:
        unit = su.get(node.hostname)
        if unit is not None:
            found[unit].append(node.hostname)
    return {str(unit): hosts for unit, hosts in found.items()}


def _all_vars(plan: Plan) -> dict[str, object]:
    return {
        "cluster_name": plan.cluster.name,
        "slurm_conf_dir": SLURM_CONF_DIR,
        "slurm_conf_src": "slurm",
        "slurm_topology_conf": f"{SLURM_CONF_DIR}/topology.conf",
    }


def _hosts(plan: Plan, rails_value: RailsValue) -> dict[str, dict[str, object]]:
    """Each device's host vars, keys sorted: its rack and place, addresses, and what it is;
    a GPU node on a routed RoCE fabric also its RoCE NICs as netplan ``ethernets``
    (``roce_rails``, plan/host_rails.py), which emit/playbook.py installs as its netplan file.
    Each dict is made whole in sorted key order and what a device lacks is taken out (a
    100,000-GPU cluster has 35,000 hosts)."""
    devs = plan.devices
    names = [d.name for d in devs]
    mgmt, bmc, ipoib, storage = (list(map(plan.addresses.get(network, {}).get, names))
                                 for network, _ in ADDRESS_VARS)
    gpus = {name: nt.gpu_count for name, nt in plan.node_types.items()}
    rails = plan.rails.get("compute", {})  # compile/plan_host_rails.py
    hosts: dict[str, dict[str, object]] = {}
    for d, mg, bm, ib, st in zip(devs, mgmt, bmc, ipoib, storage, strict=True):
        hv: dict[str, object]
        if d.kind == "node":
            hv = {"ansible_host": mg, "bmc_ip": bm, "device_kind": d.kind,
                  "gpu_count": gpus[d.model], "ipoib_ip": ib, "mgmt_ip": mg,
                  "node_role": d.role, "node_type": d.model, "rack": d.rack, "rack_u": d.u,
                  "storage_ip": st}
        elif d.kind == "switch":
            hv = {"ansible_host": mg, "bmc_ip": bm, "device_kind": d.kind, "ipoib_ip": ib,
                  "mgmt_ip": mg, "rack": d.rack, "rack_u": d.u, "storage_ip": st,
                  "switch_model": d.model, "switch_role": d.role}
        else:
            hv = {"ansible_host": mg, "bmc_ip": bm, "device_kind": d.kind, "ipoib_ip": ib,
                  "mgmt_ip": mg, "pdu_profile": d.model, "rack": d.rack, "rack_u": d.u,
                  "storage_ip": st}
        if not mg:  # an address only where the device has one on that network
            del hv["ansible_host"], hv["mgmt_ip"]
        if not bm:
            del hv["bmc_ip"]
        if not ib:
            del hv["ipoib_ip"]
        if not st:
            del hv["storage_ip"]
        if d.u is None:
            del hv["rack_u"]
        if d.name in rails:  # its place among the sorted keys: after rack_u
            hv = dict(sorted({**hv, "roce_rails": rails_value(rails[d.name])}.items()))
        hosts[d.name] = hv
    return hosts
