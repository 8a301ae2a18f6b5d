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
Each aggregation or core pair is an l2spine ``node_group`` with ``mlag: true``: its peer link's
ports (``mlag_interfaces``, port-channel numbered as the plan's first peer-link port), the
peer VLAN 4094's addresses from the link-local pool (the peer link is one isolated link per
pair, so every pair may reuse it); AVD then makes each port-channel down to a switch below
an MLAG port-channel (``mlag <n>``, n the channel's number, the same on both switches).
Only plain data here; emit/avd.py writes it as YAML.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cluster_iac.emit.avd_inputs import eos_port, fabric_name
from cluster_iac.plan.switching import Bond, port_number

NODE_TYPE = {"access": "l2leaf", "aggregation": "l2spine", "core": "l2spine"}
# The MLAG peer VLAN's addresses: IPv4 link-local (RFC 3927), never routed, as Cumulus's
# 'clagd-peer-ip linklocal' uses IPv6's; AVD numbers each pair from its nodes' ids.
MLAG_PEER_POOL = "169.254.0.0/16"


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
    channels: dict[Bond, dict[str, Any]] = {}  # each bond's port-channel, made once
    for role, node_type in NODE_TYPE.items():
        members = [c for c in configs if c.role == role]
        if members:
            data.setdefault(node_type, {"defaults": {"mlag": False}, "nodes": []})
            data[node_type]["nodes"] += [node(c, index, channels) for index, c in enumerate(
                configs, start=1) if c.role == role]
    mlags = {c.name: c.mlag for c in configs if c.mlag is not None}
    if mlags:
        data["l2spine"] = mlag_groups(data["l2spine"], mlags)
    return data


def mlag_groups(spines: dict[str, Any], mlags: dict[str, Any]) -> dict[str, Any]:
    """The l2spine nodes of MLAG pairs as node groups, one per pair, MLAG on."""
    groups: dict[str, dict[str, Any]] = {}
    alone = []
    for found in spines["nodes"]:
        mlag = mlags.get(found["name"])
        if mlag is None:
            alone.append(found)
            continue
        groups.setdefault(mlag.domain, {
            "group": mlag.domain, "mlag": True, "mlag_peer_ipv4_pool": MLAG_PEER_POOL,
            "mlag_interfaces": [eos_port(p) for p in mlag.ports],
            "mlag_port_channel_id": port_number(mlag.ports[0]), "nodes": []})["nodes"].append(
                found)
    result: dict[str, Any] = {"defaults": spines["defaults"],
                              "node_groups": list(groups.values())}
    if alone:
        result["nodes"] = alone
    return result


def node(config: Any, node_id: int, channels: dict[Bond, dict[str, Any]] | None = None
         ) -> dict[str, Any]:
    """One switch as an AVD node: its uplinks as cabled, its ports' structured config
    (``channels``: structured_config's, kept across the switches of one network)."""
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
    found["structured_config"] = structured_config(config, channels)
    return found


def structured_config(config: Any, channels: dict[Bond, dict[str, Any]] | None = None
                      ) -> dict[str, Any]:
    """Host ports: access ports of the VLAN; every port: its cable's label and the MTU; each
    bond (AVD's port-channel, numbered as the plan's): the switches it leads to and the MTU.
    ``channels``: each bond's port-channel by the bond, kept across calls: the access switches
    below one pair have the same uplink bond, made once (the YAML writer only reads them)."""
    access = {v.vid: {"enabled": True, "mode": "access", "access_vlan": v.vid}
              for v in config.vlans}  # one per VLAN, the same for every host port of it
    # each port's description (SwitchInterface.description) written out: 100,000 ports
    ports = [{"name": eos_port(port.name),
              "description": f"{port.peer}:{port.peer_port} {port.cable_id}",
              "l2_mtu": port.mtu, "shutdown": False, "switchport": access[port.vlan]}
             if port.kind == "host" else
             {"name": eos_port(port.name),
              "description": f"{port.peer}:{port.peer_port} {port.cable_id}", "l2_mtu": port.mtu}
             for port in config.interfaces]
    known = {} if channels is None else channels
    found: dict[str, Any] = {"ethernet_interfaces": ports}
    if config.bonds:
        found["port_channel_interfaces"] = [known.get(b) or known.setdefault(b, _channel(b))
                                            for b in config.bonds]
    return found


def _channel(bond: Bond) -> dict[str, Any]:
    """A bond as AVD's port-channel, numbered as its first member port."""
    return {"name": f"Port-Channel{port_number(bond.members[0])}",
            "description": bond.description, "l2_mtu": bond.mtu}
