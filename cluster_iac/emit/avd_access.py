"""Arista AVD ``eos_designs`` inputs of one management or BMC network, from the plan's switch
model (plan/switching.py, bridged switches: compile/plan_access.py).

A layer-2 leaf-spine (AVD's l2leaf and l2spine node types, no underlay or overlay routing):
each access switch an ``l2leaf`` whose uplinks are the plan's cables port for port, in one
LACP port-channel (``uplink_port_channel_id``: its first uplink port's number, the plan's
``uplink`` bond; ``uplink_switch_port_channel_id``: its port on the pair above, the pair's
``bond<n>``); the aggregation and core switches ``l2spine`` nodes. The network's VLAN is a
``tenants`` l2vlan, which AVD allows on every uplink trunk. What eos_designs does not model
is structured configuration: each host port an access port of the VLAN with the cable's
label and the network's MTU (EOS ``l2 mtu``), and the cable's label on every uplink member.
Only plain data here; emit/avd.py writes it as YAML.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cluster_iac.emit.avd_inputs import eos_port, fabric_name
from cluster_iac.plan.switching import port_number

NODE_TYPE = {"access": "l2leaf", "aggregation": "l2spine", "core": "l2spine"}


def network_inputs(network: str, configs: Sequence[Any]) -> dict[str, Any]:
    """The network-wide inputs: its VLAN, the node types with their nodes."""
    vlans = {v.vid: v for c in configs for v in c.vlans}
    data: dict[str, Any] = {
        "fabric_name": fabric_name(network),
        "underlay_routing_protocol": "none",
        "overlay_routing_protocol": "none",
        "tenants": [{"name": network.upper(), "l2vlans": [
            {"id": vid, "name": vlan.name} for vid, vlan in sorted(vlans.items())]}],
    }
    for role, node_type in NODE_TYPE.items():
        members = [c for c in configs if c.role == role]
        if members:
            data.setdefault(node_type, {"defaults": {"mlag": False}, "nodes": []})
            data[node_type]["nodes"] += [node(c, index) for index, c in enumerate(
                configs, start=1) if c.role == role]
    return data


def node(config: Any, node_id: int) -> dict[str, Any]:
    """One switch as an AVD node: its uplinks as cabled, its ports' structured config."""
    found: dict[str, Any] = {"name": config.name, "id": node_id}
    uplinks = config.uplinks
    if uplinks:
        found["uplink_interfaces"] = [eos_port(i.name) for i in uplinks]
        found["uplink_switches"] = [i.peer for i in uplinks]
        found["uplink_switch_interfaces"] = [eos_port(i.peer_port) for i in uplinks]
        found["max_uplink_switches"] = len({i.peer for i in uplinks})
        found["uplink_port_channel_id"] = port_number(uplinks[0].name)
        # the plan gives the child one port number on each switch of the pair above
        found["uplink_switch_port_channel_id"] = port_number(uplinks[0].peer_port)
    found["structured_config"] = structured_config(config)
    return found


def structured_config(config: Any) -> dict[str, Any]:
    """Host ports: access ports of the VLAN; every port: its cable's label and the MTU; each
    bond (AVD's port-channel, numbered as the plan's): the switches it leads to and the MTU."""
    ports = []
    for port in config.interfaces:
        entry: dict[str, Any] = {"name": eos_port(port.name), "description": port.description,
                                 "l2_mtu": port.mtu}
        if port.kind == "host":
            entry.update({"shutdown": False, "switchport": {
                "enabled": True, "mode": "access", "access_vlan": port.vlan}})
        ports.append(entry)
    channels = [{"name": f"Port-Channel{port_number(b.members[0])}",
                 "description": b.description, "l2_mtu": b.mtu} for b in config.bonds]
    found: dict[str, Any] = {"ethernet_interfaces": ports}
    if channels:
        found["port_channel_interfaces"] = channels
    return found
