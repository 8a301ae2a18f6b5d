"""Arista AVD ``eos_designs`` inputs per Ethernet fabric and per management network: an
Ansible inventory and group_vars.

    switches/avd/<fabric>/inventory.yml                 the fabric group, its spines and leaves
    switches/avd/<fabric>/group_vars/<FABRIC>.yml       fabric_name, underlay, nodes, QoS
    switches/avd/<fabric>/group_vars/<FABRIC>_<ROLE>.yml  each role's AVD node type

A management or BMC network (bridged switches) has the same three kinds of files, its
inputs from emit/avd_access.py: a layer-2 leaf-spine, its access switches l2leaf nodes
(group ACCESS), its aggregation and core switches l2spine nodes (AGGREGATION, CORE).

the layout of AVD's examples (arista.avd.eos_designs reads group_vars by inventory group;
pyavd's validate_inputs takes one host's merged variables). The values are the plan's switch
model (plan/switching.py) and QoS (plan/qos.py), through emit/avd_inputs.py; the FRR dialect
(emit/frr.py) prints the same model, so the two cannot disagree.
"""

from __future__ import annotations

from typing import Any

from cluster_iac.emit import avd_access
from cluster_iac.emit.avd_inputs import NODE_TYPE, HostPorts, fabric_inputs, fabric_name
from cluster_iac.emit.base import GENERATED_BY
from cluster_iac.formats.yaml import yaml_text
from cluster_iac.plan import Plan

ROLE_GROUP = {"leaf": "LEAVES", "spine": "SPINES", "super-spine": "SUPER_SPINES",
              "access": "ACCESS", "aggregation": "AGGREGATION", "core": "CORE"}


def render(plan: Plan) -> dict[str, str]:
    files: dict[str, str] = {}
    for network in sorted({c.fabric for c in plan.switch_configs.values()}):
        configs = [c for _name, c in sorted(plan.switch_configs.items())
                   if c.fabric == network]
        files.update(fabric_files(network, configs, plan.qos.get(network)))
    for network in sorted({c.fabric for c in plan.management_configs.values()}):
        configs = [c for _name, c in sorted(plan.management_configs.items())
                   if c.fabric == network]
        files.update(fabric_files(network, configs, None))
    return files


def fabric_files(network: str, configs: list[Any], qos: Any) -> dict[str, str]:
    """One fabric's (or management network's) inventory and group_vars."""
    name = fabric_name(network)
    base = f"switches/avd/{network}"
    bridged = all(c.bgp is None for c in configs)
    header = [GENERATED_BY, f"Arista AVD eos_designs inputs of the {network} " + (
        "network (docs/ethernet-fabric.md, 'Management and BMC switches')." if bridged
        else "fabric (docs/roce-qos.md, 'Arista AVD').")]
    roles = [role for role in ROLE_GROUP if any(c.role == role for c in configs)]
    inputs = (avd_access.network_inputs(network, configs) if bridged
              else fabric_inputs(network, configs, qos, HostPorts()))
    node_type = avd_access.NODE_TYPE if bridged else NODE_TYPE
    files = {f"{base}/group_vars/{name}.yml": yaml_text(inputs, header)}
    for role in roles:
        files[f"{base}/group_vars/{name}_{ROLE_GROUP[role]}.yml"] = yaml_text(
            {"type": node_type[role]}, header)
    files[f"{base}/inventory.yml"] = yaml_text({"all": {"children": {name: {"children": {
        f"{name}_{ROLE_GROUP[role]}": {"hosts": {c.name: None for c in configs
                                                 if c.role == role}}
        for role in roles}}}}}, header)
    return files

