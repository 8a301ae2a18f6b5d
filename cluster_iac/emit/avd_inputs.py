"""Arista AVD ``eos_designs`` inputs of one Ethernet fabric, from the plan's switch model.

Everything AVD could derive is given to it: each node's ``id``, ``bgp_as`` and
``loopback_ipv4_address`` are the plan's (allocated once, kept by the lock), the uplinks are
the plan's cables port for port, and the underlay is BGP unnumbered (``underlay_rfc5549``) or
the plan's /31s (``structured_config`` on each port). The RoCE QoS is the plan's FabricQos as
AVD structured configuration: a DSCP -> traffic class map, one ``qos_profiles`` entry (trust
DSCP, PFC no-drop on the RoCE priority, WRED/ECN on its queue, CNP queue strict) applied to
every fabric port. Only plain data here; emit/avd.py writes it as YAML.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

from cluster_iac.formats.json_template import Slot
from cluster_iac.formats.yaml_template import YamlTemplate
from cluster_iac.plan.qos import FabricQos

QOS_PROFILE = "ROCE_LOSSLESS"
NODE_TYPE = {"leaf": "l3leaf", "spine": "spine", "super-spine": "super_spine"}
_PORT = re.compile(r"p(\d+)(?:s(\d+))?|swp(\d+)")


@cache  # a few hundred names (swp1-swp48, p1-p64 and their legs) on 100,000s of ports
def eos_port(name: str) -> str:
    """The plan's port name as EOS names it: 'p57' -> 'Ethernet57', 'p1s2' -> 'Ethernet1/2', a
    management switch's 'swp47' -> 'Ethernet47'."""
    match = _PORT.fullmatch(name)
    if match is None:
        raise ValueError(f"port {name!r} is not a plan port name (p<cage>, p<cage>s<leg>, "
                         "swp<n>)")
    cage, leg, access = match.groups()
    if access:
        return f"Ethernet{access}"
    return f"Ethernet{cage}" + (f"/{leg}" if leg else "")


def fabric_name(network: str) -> str:
    """AVD's fabric_name of a network: an upper-case name, the group of its switches."""
    return f"{network.upper()}_FABRIC"


# A leaf's host port as a value of the inputs: host_port (plain data) or HostPorts' fills
PortValue = Callable[[Any, "FabricQos | None"], object]


def fabric_inputs(network: str, configs: Sequence[Any], qos: FabricQos | None,
                  port_value: PortValue | None = None) -> dict[str, Any]:
    """The fabric-wide inputs: node types with their nodes, the underlay and the QoS.
    ``port_value``: each host port's entry (host_port, the default, or HostPorts())."""
    unnumbered = all(c.routing.unnumbered for c in configs)
    ids = {c.name: index for index, c in enumerate(configs, start=1)}
    data: dict[str, Any] = {
        "fabric_name": fabric_name(network),
        "underlay_routing_protocol": "ebgp",
        "overlay_routing_protocol": "none",
        "underlay_rfc5549": unnumbered,
        "p2p_uplinks_mtu": max((i.mtu for c in configs for i in c.uplinks), default=9216),
    }
    if qos is not None:
        data["p2p_uplinks_qos_profile"] = QOS_PROFILE
    if not unnumbered:
        data["l3_edge"] = {"p2p_links": p2p_links(configs, qos)}
    parallel = _parallel(configs)
    qos_configs: dict[frozenset[int], dict[str, Any]] = {}  # by port speeds, made once
    for role in NODE_TYPE:
        nodes = [node(c, ids[c.name], qos, unnumbered, qos_configs, port_value)
                 for c in configs if c.role == role]
        if nodes:
            data[NODE_TYPE[role]] = {"defaults": {"max_parallel_uplinks": parallel},
                                     "nodes": nodes}
    return data


def p2p_links(configs: Sequence[Any], qos: FabricQos | None) -> list[dict[str, Any]]:
    """Numbered underlay: every switch-to-switch cable with the plan's /31 on each end and
    the two ASNs, so AVD allocates no address of its own."""
    asn = {c.name: c.asn for c in configs}
    links = []
    for config in configs:
        for up in config.uplinks:
            link: dict[str, Any] = {
                "nodes": [config.name, up.peer],
                "interfaces": [eos_port(up.name), eos_port(up.peer_port)],
                "ip": [up.address, f"{up.peer_address}/31"],
                "as": [str(config.asn), str(asn[up.peer])],
                "include_in_underlay_protocol": True, "mtu": up.mtu,
                "descriptions": [up.description, f"{config.name}:{up.name} {up.cable_id}"]}
            if qos is not None:
                link["qos_profile"] = QOS_PROFILE
            links.append(link)
    return links


def node(config: Any, node_id: int, qos: FabricQos | None, unnumbered: bool,
         qos_configs: dict[frozenset[int], dict[str, Any]] | None = None,
         port_value: PortValue | None = None) -> dict[str, Any]:
    """One switch as an AVD node: its identity as the plan allocated it, its uplinks as cabled
    (``qos_configs``: structured_config's, kept across the switches of one fabric)."""
    found: dict[str, Any] = {"name": config.name, "id": node_id, "bgp_as": str(config.asn),
                             "loopback_ipv4_address": config.loopback,
                             # AVD wants a pool even beside the address: the address alone
                             "loopback_ipv4_pool": f"{config.loopback}/32"}
    if config.role == "leaf":
        found["vtep"] = False  # a routed AI fabric: no VXLAN overlay
    uplinks = config.uplinks if unnumbered else ()
    if uplinks:
        found["uplink_interfaces"] = [eos_port(i.name) for i in uplinks]
        found["uplink_switches"] = [i.peer for i in uplinks]
        found["uplink_switch_interfaces"] = [eos_port(i.peer_port) for i in uplinks]
        found["max_uplink_switches"] = len({i.peer for i in uplinks})
    structured = structured_config(config, qos, qos_configs, port_value)
    if structured:
        found["structured_config"] = structured
    return found


def structured_config(config: Any, qos: FabricQos | None,
                      qos_configs: dict[frozenset[int], dict[str, Any]] | None = None,
                      port_value: PortValue | None = None) -> dict[str, Any]:
    """What AVD's eos_designs does not model: the host ports and the QoS. ``qos_configs``:
    qos_config's by the switch's port speeds, kept across calls: the thousands of switches
    of one fabric have a few sets of speeds, so the same QoS is made a few times, not once
    per switch (the YAML writer only reads it)."""
    # ECMP across every uplink: the plan's width (AVD's default is 4)
    found: dict[str, Any] = {"router_bgp": {"maximum_paths": {
        "paths": config.routing.maximum_paths}}}
    write = host_port if port_value is None else port_value
    ports = [write(i, qos) for i in config.host_ports]
    if config.routing.unnumbered:  # AVD names its uplinks itself: the cable's label instead
        # the cable's label (SwitchInterface.description) written out: 200,000 uplinks
        ports += [{"name": eos_port(i.name),
                   "description": f"{i.peer}:{i.peer_port} {i.cable_id}"}
                  for i in config.uplinks]
    if ports:
        found["ethernet_interfaces"] = ports
    if qos is not None:
        speeds = frozenset([i.speed_gbps for i in config.interfaces])
        known = {} if qos_configs is None else qos_configs
        made = known.get(speeds)
        if made is None:
            made = known[speeds] = qos_config(qos, set(speeds))
        found.update(made)
    return found


def host_port(interface: Any, qos: FabricQos | None) -> dict[str, Any]:
    """A leaf port down to a host NIC: routed, its /31, the host MTU, the QoS profile."""
    # SwitchInterface.description written out (100,000 host ports)
    return host_port_entry(eos_port(interface.name), f"{interface.peer}:{interface.peer_port} "
                           f"{interface.cable_id}", interface.mtu, interface.address, qos)


def host_port_entry(name: Any, description: Any, mtu: int, address: Any,
                    qos: FabricQos | None) -> dict[str, Any]:
    """host_port with its strings given (or HostPorts' Slots for them); no address: ''."""
    port: dict[str, Any] = {"name": name, "description": description, "shutdown": False,
                            "mtu": mtu, "switchport": {"enabled": False}}
    if address:
        port["ip_address"] = address
    if qos is not None:
        port["service_profile"] = QOS_PROFILE
    return port


class HostPorts:
    """host_port's entries as YamlTemplate fills: one template per MTU, QoS and whether the
    port has an address, laid out once, and a fill of three strings (name, description,
    address) per port, where host_port made seven keys and a dict for the writer to walk
    (100,000 host ports at 100,000 GPUs). yaml_text writes the same bytes either way:
    tests/test_switches.py compares the fabric's inputs both ways."""

    def __init__(self) -> None:
        self.templates: dict[tuple[int, bool, bool], YamlTemplate] = {}

    def __call__(self, interface: Any, qos: FabricQos | None) -> object:
        address = interface.address
        key = (interface.mtu, bool(address), qos is not None)
        template = self.templates.get(key)
        if template is None:
            template = self.templates[key] = YamlTemplate(host_port_entry(
                Slot(0), Slot(1), interface.mtu, Slot(2) if address else "", qos))
        description = f"{interface.peer}:{interface.peer_port} {interface.cable_id}"
        return template.fill((eos_port(interface.name), description, address) if address
                             else (eos_port(interface.name), description))


def qos_config(qos: FabricQos, speeds: set[int]) -> dict[str, Any]:
    """The switch's QoS: trust DSCP, RoCE -> its lossless queue with PFC and ECN, CNP strict."""
    # one profile for every port: EOS applies ECN thresholds per queue, the speeds of one
    # switch share the source's value (plan/qos.py); the slowest speed's is the safest
    ecn = min((e for e in qos.ecn if e.speed_gbps in speeds), key=lambda e: e.speed_gbps,
              default=qos.ecn[0])
    return {
        "qos": {"map": {"dscp": [f"{qos.roce_dscp} to traffic-class {qos.roce_priority}",
                                 f"{qos.cnp_dscp} to traffic-class {qos.cnp_priority}"]}},
        "priority_flow_control": {"all_off": False},
        "qos_profiles": [{
            "name": QOS_PROFILE,
            "trust": "dscp",
            "priority_flow_control": {
                "enabled": True,
                "priorities": [{"priority": qos.roce_priority, "no_drop": True}]},
            "tx_queues": [
                {"id": qos.roce_priority, "bandwidth_percent": 50,
                 "random_detect": {"ecn": {"threshold": {
                     "units": "kbytes", "min": ecn.min_bytes // 1000,
                     "max": ecn.max_bytes // 1000,
                     "max_probability": ecn.probability_pct}}}},
                {"id": qos.cnp_priority, "priority": "priority strict"}]}],
    }


def _parallel(configs: Sequence[Any]) -> int:
    """The most cables from one switch to one switch above it (AVD's max_parallel_uplinks)."""
    # counted in one pass over each switch's uplinks (100,000s at 100,000 GPUs), not once per
    # switch above it
    counts: Counter[tuple[str, str]] = Counter(
        (c.name, i.peer) for c in configs for i in c.uplinks)
    return max(counts.values(), default=1)
