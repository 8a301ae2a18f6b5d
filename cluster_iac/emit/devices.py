"""Shared views of the plan for the inventory emitters: devices, positions and links."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from cluster_iac.plan import Plan

# Graphs whose edges are data cables (one edge per cable), in cable-id order.
NETWORK_GRAPHS = ("compute", "storage", "management", "bmc")


@dataclass(frozen=True)
class Device:
    """Anything with a name, a rack and a U position: a node, a switch or a PDU."""

    name: str
    kind: str  # 'node' | 'switch' | 'pdu'
    role: str  # node role, switch network-tier ('compute-leaf'), or 'pdu'
    model: str  # node type, catalog switch key, or PDU profile
    rack: str
    u: int | None
    height_u: int


@dataclass(frozen=True)
class Link:
    """One cable between two device ports."""

    network: str  # graph name: 'compute', 'storage', 'management', 'bmc', 'power'
    a_device: str
    a_port: str
    b_device: str
    b_port: str
    speed_gbps: int  # 0 for power cords
    link: str  # 'infiniband' | 'ethernet' | 'power'
    psu_w: int = 0  # power cords: the rating of the PSU it feeds


def devices(plan: Plan) -> list[Device]:
    """Every node, switch and PDU of the plan, sorted by name."""
    found = [_node_device(plan, n) for n in plan.nodes]
    found += [_switch_device(plan, s) for s in plan.switches]
    found += _pdu_devices(plan)
    return sorted(found, key=lambda d: d.name)


def _node_device(plan: Plan, node: Any) -> Device:
    nt = plan.node_types[node.node_type]
    place = plan.placements.get(node.hostname)
    return Device(node.hostname, "node", node.role, node.node_type,
                  place.rack if place else node.rack, place.u if place else None,
                  place.height_u if place else nt.height_u)


def _switch_device(plan: Plan, switch: Any) -> Device:
    place = plan.placements.get(switch.name)
    return Device(switch.name, "switch", f"{switch.network}-{switch.tier}", switch.model,
                  place.rack if place else switch.rack, place.u if place else None,
                  place.height_u if place else switch.height_u)


def _pdu_devices(plan: Plan) -> list[Device]:
    """PDUs and power shelves (racked like a PDU), from the power pass's table."""
    pdus = []
    for part in plan.power_devices:
        place = plan.placements.get(part.name)
        pdus.append(Device(part.name, "pdu", part.kind, part.model,
                           place.rack if place else part.rack,
                           place.u if place else None, place.height_u if place else 0))
    return pdus


def rack_rows(plan: Plan) -> dict[str, str]:
    """Rack name -> row name."""
    return {rack.name: rack.row for rack in plan.racks}


def links(plan: Plan) -> list[Link]:
    """Every cable of the plan: one per network-graph edge, plus one per power cord."""
    found: list[Link] = []
    for network in NETWORK_GRAPHS:
        graph = plan.graphs.get(network)
        if graph is not None:
            found += _network_links(plan, network, graph)
    found += power_cords(plan)
    return found


def _network_links(plan: Plan, network: str, graph: Any) -> list[Link]:
    """One Link per MultiGraph edge; ends sorted so a link reads the same in every run."""
    used: dict[str, int] = {}
    default_speed, default_link = _speed_of(plan, network), _link_of(plan, network)
    result = []
    edges = sorted(graph.edges(keys=True, data=True),
                   key=lambda e: (str(e[0]), str(e[1]), str(e[2])))
    for u, v, _key, data in edges:
        a, b = (u, v) if str(u) <= str(v) else (v, u)
        a_port = _port_of(data, a, used)
        b_port = _port_of(data, b, used)
        speed = int(data.get("speed_gbps") or default_speed)
        link = str(data.get("link") or default_link)
        result.append(Link(network, str(a), a_port, str(b), b_port, speed, link))
    return result


def _port_of(data: dict[str, Any], device: Any, used: dict[str, int]) -> str:
    """The edge's port name at ``device``; numbered in edge order when the graph names none."""
    ports = data.get("ports")
    if isinstance(ports, dict) and device in ports:
        return str(ports[device])
    for key in (f"port_{device}", "port"):
        if key in data and not isinstance(data[key], dict):
            return str(data[key])
    used[str(device)] = used.get(str(device), 0) + 1
    return f"port{used[str(device)]}"


def _speed_of(plan: Plan, network: str) -> int:
    speeds = [s.port_speed_gbps for s in plan.switches if s.network == network]
    return min(speeds) if speeds else 1


def _link_of(plan: Plan, network: str) -> str:
    if network in ("management", "bmc"):
        return "ethernet"
    links = {plan.catalog.switches[s.model].link for s in plan.switches
             if s.network == network and s.model in plan.catalog.switches}
    return links.pop() if len(links) == 1 else "ethernet"


def power_cords(plan: Plan) -> list[Link]:
    """One cord per PSU, from the power pass's table: PDU outlet -> device inlet."""
    cords = [Link("power", c.pdu, f"outlet{c.outlet}", c.device, f"PSU{c.psu}", 0, "power",
                  int(c.rating_w)) for c in plan.power_cords]
    return sorted(cords, key=lambda c: (natural(c.a_device), natural(c.a_port),
                                        natural(c.b_device), natural(c.b_port)))


def natural(text: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key that puts outlet2 before outlet10."""
    return tuple((0, int(part)) if part.isdigit() else (1, part)
                 for part in re.split(r"(\d+)", text) if part)
