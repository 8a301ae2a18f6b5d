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

from collections.abc import Iterator
from functools import partial
from typing import Any

from cluster_iac.emit import avd_access
from cluster_iac.emit.avd_inputs import NODE_TYPE, HostPorts, fabric_inputs, fabric_name
from cluster_iac.emit.base import GENERATED_BY
from cluster_iac.formats.chunks import Chunks, whole
from cluster_iac.formats.yaml import yaml_text
from cluster_iac.formats.yaml_template import yaml_pieces
from cluster_iac.plan import Plan

ROLE_GROUP = {"leaf": "LEAVES", "spine": "SPINES", "super-spine": "SUPER_SPINES",
              "access": "ACCESS", "aggregation": "AGGREGATION", "core": "CORE"}


def render(plan: Plan) -> dict[str, str]:
    return whole(render_chunks(plan))


def render_chunks(plan: Plan) -> dict[str, str | Chunks]:
    """render's files, each network's group_vars of its nodes as Chunks: made as they are
    written, a slice of nodes at a time (yaml_pieces: yaml_text's bytes), so one network's
    inputs are held at a time and never with their whole text (46 MiB at 100,000 GPUs)."""
    files: dict[str, str | Chunks] = {}
    for network in sorted({c.fabric for c in plan.switch_configs.values()}):
        configs = [c for _name, c in sorted(plan.switch_configs.items())
                   if c.fabric == network]
        files.update(fabric_files(network, configs, plan.qos.get(network)))
    for network in sorted({c.fabric for c in plan.management_configs.values()}):
        configs = [c for _name, c in sorted(plan.management_configs.items())
                   if c.fabric == network]
        files.update(fabric_files(network, configs, None))
    return files


# AVD nodes (or p2p links) per piece of a network's group_vars: a leaf's 64 host ports and
# uplinks are some 25 KiB of text, a piece about 3 MiB
PIECE = 128


def fabric_files(network: str, configs: list[Any], qos: Any) -> dict[str, str | Chunks]:
    """One fabric's (or management network's) inventory and group_vars, the network's
    inputs as Chunks (made when read: input_pieces)."""
    name = fabric_name(network)
    base = f"switches/avd/{network}"
    bridged = all(c.bgp is None for c in configs)
    header = [GENERATED_BY, f"Arista AVD eos_designs inputs of the {network} " + (
        "network (docs/ethernet-fabric.md, 'Management and BMC switches')." if bridged
        else "fabric (docs/roce-qos.md, 'Arista AVD').")]
    roles = [role for role in ROLE_GROUP if any(c.role == role for c in configs)]
    node_type = avd_access.NODE_TYPE if bridged else NODE_TYPE
    files: dict[str, str | Chunks] = {f"{base}/group_vars/{name}.yml": Chunks(partial(
        input_pieces, network, configs, qos, header))}
    for role in roles:
        files[f"{base}/group_vars/{name}_{ROLE_GROUP[role]}.yml"] = yaml_text(
            {"type": node_type[role]}, header)
    files[f"{base}/inventory.yml"] = yaml_text({"all": {"children": {name: {"children": {
        f"{name}_{ROLE_GROUP[role]}": {"hosts": {c.name: None for c in configs
                                                 if c.role == role}}
        for role in roles}}}}}, header)
    return files


def input_pieces(network: str, configs: list[Any], qos: Any,
                 header: list[str]) -> Iterator[str]:
    """The text of a network's inputs (avd_access's for bridged switches, avd_inputs' with
    HostPorts' fills for routed ones) under ``header``, made now and written PIECE nodes at
    a time."""
    bridged = all(c.bgp is None for c in configs)
    inputs = (avd_access.network_inputs(network, configs) if bridged
              else fabric_inputs(network, configs, qos, HostPorts()))
    return yaml_pieces(inputs, header, PIECE)
