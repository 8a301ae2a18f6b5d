"""Power graph: feed -> PDU -> circuit (breaker) -> outlet -> PSU -> device, per rack."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import networkx as nx

from cluster_iac.errors import CompileError, Diagnostic
from cluster_iac.plan import Plan, PowerCord, PowerDevice, electrical
from cluster_iac.plan.power import (
    DEFAULT_SHELF,
    SIDES,
    busbar_fed,
    feed_name,
    pdu_name,
    power_shelves,
)
from cluster_iac.plan.power_flow import annotate_loads
from cluster_iac.spec import ClusterSpec


@dataclass(frozen=True)
class Powered:
    """A device with PSUs, as the power pass sees it."""

    name: str
    kind: str  # 'node' | 'switch' | 'power-shelf'
    rack: str
    max_power_w: float
    psus: int
    psu_rating_w: int
    psu_required: int


def build_power(spec: ClusterSpec, plan: Plan) -> Plan:
    """Every rack's feeds, PDUs, circuits and cords, with the loads on each (plan.power)."""
    graph = nx.DiGraph()
    problems: list[Diagnostic] = []
    rack_pdus: dict[str, list[str]] = {}
    devices = _devices_by_rack(plan, graph)
    for rack in plan.racks:
        profile = plan.settings.power.pdu_profiles[rack.pdu_profile]
        pdus = _add_pdus(plan, graph, rack, profile)
        rack_pdus[rack.name] = pdus
        problems += _wire_rack(graph, rack, profile, pdus, devices.get(rack.name, []))
    if problems:
        raise CompileError(problems)
    annotate_loads(graph, rack_pdus)
    return replace(plan, graphs={**plan.graphs, "power": graph},
                   power_devices=_power_devices(graph), power_cords=_power_cords(graph))


def _power_devices(graph: nx.DiGraph) -> tuple[PowerDevice, ...]:
    """PDUs and power shelves, by name."""
    found = [PowerDevice(str(name), data["kind"], data["rack"],
                         str(data.get("profile") or data.get("model")), data.get("side", ""))
             for name, data in graph.nodes(data=True) if data["kind"] in ("pdu", "power-shelf")]
    return tuple(sorted(found, key=lambda d: d.name))


def _power_cords(graph: nx.DiGraph) -> tuple[PowerCord, ...]:
    """Every outlet -> PSU cord with its circuit and line, by PDU and outlet number."""
    cords = []
    for _, data in graph.nodes(data=True):
        if data["kind"] != "psu":
            continue
        outlet = graph.nodes[data["outlet"]]
        cords.append(PowerCord(
            rack=data["rack"], pdu=data["pdu"], circuit=graph.nodes[data["circuit"]]["name"],
            line=data["slot"], outlet=outlet["number"], device=data["device"],
            psu=int(data["name"][3:]), rating_w=data["rating_w"]))
    return tuple(sorted(cords, key=lambda c: (c.pdu, c.outlet)))


def _devices_by_rack(plan: Plan, graph: nx.DiGraph) -> dict[str, list[Powered]]:
    """Devices with PSUs per rack, in order: nodes (spec order), switches, power shelves;
    busbar-fed trays become graph nodes under their rack's busbar."""
    fed = busbar_fed(plan)
    on_busbar = {name for trays in fed.values() for name, _ in trays}
    result: dict[str, list[Powered]] = {}
    for node in plan.nodes:
        nt = plan.node_types[node.node_type]
        _add_device(graph, node.hostname, "node", node.rack, nt.max_power_w, nt.psu_required,
                    node.spec_path)
        if node.hostname not in on_busbar:
            result.setdefault(node.rack, []).append(Powered(
                node.hostname, "node", node.rack, nt.max_power_w, nt.psu_count,
                nt.psu_rating_w, nt.psu_required))
    for sw in plan.switches:
        _add_device(graph, sw.name, "switch", sw.rack, sw.max_power_w, sw.psu_required,
                    sw.spec_path)
        if sw.name not in on_busbar:
            rating = -(-sw.max_power_w // sw.psu_required)  # each PSU carries its share of N
            result.setdefault(sw.rack, []).append(Powered(
                sw.name, "switch", sw.rack, sw.max_power_w, sw.psu_count, rating, sw.psu_required))
    shelf = plan.catalog.power_shelves[DEFAULT_SHELF]
    for rack, shelves in power_shelves(plan).items():
        busbar = f"{rack}-busbar"
        graph.add_node(busbar, kind="busbar", rack=rack)
        for tray, _ in fed[rack]:
            graph.add_edge(busbar, tray)
        for name in shelves:
            graph.add_node(name, kind="power-shelf", rack=rack, model=DEFAULT_SHELF,
                           capacity_w=shelf.capacity_w, busbar=busbar,
                           psu_required=shelf.psus.required, spec_path=())
            graph.add_edge(name, busbar)
            result.setdefault(rack, []).append(Powered(
                name, "power-shelf", rack, shelf.capacity_w, shelf.psus.count,
                shelf.psus.rating_w, shelf.psus.required))
    return result


def _add_device(graph: nx.DiGraph, name: str, kind: str, rack: str, max_power_w: float,
                psu_required: int, spec_path: tuple[str | int, ...]) -> None:
    graph.add_node(name, kind=kind, rack=rack, max_power_w=max_power_w,
                   psu_required=psu_required, spec_path=spec_path)


def _add_pdus(plan: Plan, graph: nx.DiGraph, rack: Any, profile: Any) -> list[str]:
    """The rack's feeds, PDUs and circuits (breakers) from its PDU profile."""
    policy = plan.settings.policy
    capacity = electrical.circuit_capacity_w(profile.voltage_v, profile.phases, profile.breaker_a,
                                             profile.power_factor)
    limit = electrical.continuous_limit_w(capacity, profile.rated_100_percent,
                                          policy.breaker_continuous_percent)
    spec_path = ("power", "pdu_profiles", rack.pdu_profile)
    pdus = []
    for side in SIDES[profile.layout]:
        feed, pdu = feed_name(rack.name, side), pdu_name(rack.name, side)
        graph.add_node(feed, kind="feed", rack=rack.name, side=side,
                       panel=f"{rack.row}-panel-{side.lower()}")
        graph.add_node(pdu, kind="pdu", rack=rack.name, side=side, profile=rack.pdu_profile,
                       layout=profile.layout, outlets=profile.outlets, spec_path=spec_path)
        graph.add_edge(feed, pdu)
        for k in range(profile.circuits):
            cid = f"{pdu}:cb{k + 1}"
            graph.add_node(cid, kind="circuit", rack=rack.name, pdu=pdu, side=side, index=k,
                           name=f"CB{k + 1}", phases=profile.phases, voltage_v=profile.voltage_v,
                           breaker_a=profile.breaker_a,
                           rated_100_percent=profile.rated_100_percent,
                           power_factor=profile.power_factor, capacity_w=capacity, limit_w=limit,
                           slots=electrical.cord_slots(profile.voltage_v, profile.phases),
                           assigned_w=0.0, spec_path=spec_path)
            graph.add_edge(pdu, cid)
        pdus.append(pdu)
    return pdus


def _wire_rack(graph: nx.DiGraph, rack: Any, profile: Any, pdus: list[str],
               devices: list[Powered]) -> list[Diagnostic]:
    """Cords: PSUs round-robin over the PDUs (A, B, A, ... or A, B, C, ...), each device's
    PSUs on one PDU to that PDU's least-loaded circuit, each cord on the circuit's
    least-loaded phase (or line pair); ties by index, so the result is deterministic."""
    used: dict[str, int] = {}
    slot_w: dict[tuple[str, str], float] = {}
    cursor = 0
    for device in devices:
        share = device.max_power_w / device.psus if device.psus else 0.0
        by_pdu: dict[str, list[int]] = {}
        for i in range(device.psus):
            pdu = pdus[(cursor + (i if device.kind != "power-shelf" else 0)) % len(pdus)]
            by_pdu.setdefault(pdu, []).append(i)
        cursor += device.psus if device.kind != "power-shelf" else 1
        for pdu, psu_indexes in by_pdu.items():
            cid = min(graph.successors(pdu),
                      key=lambda c: (graph.nodes[c]["assigned_w"], graph.nodes[c]["index"]))
            graph.nodes[cid]["assigned_w"] += share * len(psu_indexes)
            for i in psu_indexes:
                _cord(graph, rack.name, cid, device, i, share, used, slot_w)
    return _outlet_problems(rack, profile, pdus, used)


def _cord(graph: nx.DiGraph, rack: str, cid: str, device: Powered, i: int, share: float,
          used: dict[str, int], slot_w: dict[tuple[str, str], float]) -> None:
    circuit = graph.nodes[cid]
    slots = circuit["slots"]
    slot = min(slots, key=lambda s: (slot_w.get((cid, s), 0.0), slots.index(s)))
    slot_w[(cid, slot)] = slot_w.get((cid, slot), 0.0) + share
    used[circuit["pdu"]] = number = used.get(circuit["pdu"], 0) + 1
    outlet = f"{circuit['pdu']}:o{number}"
    graph.add_node(outlet, kind="outlet", rack=rack, pdu=circuit["pdu"], circuit=cid,
                   name=f"outlet{number}", number=number, slot=slot)
    graph.add_edge(cid, outlet)
    psu = f"{device.name}:psu{i + 1}"
    graph.add_node(psu, kind="psu", rack=rack, device=device.name, name=f"PSU{i + 1}",
                   rating_w=device.psu_rating_w, pdu=circuit["pdu"], circuit=cid, slot=slot,
                   outlet=outlet)
    graph.add_edge(outlet, psu)
    graph.add_edge(psu, device.name)


def _outlet_problems(rack: Any, profile: Any, pdus: list[str],
                     used: dict[str, int]) -> list[Diagnostic]:
    """A PDU with more cords than outlets is a located spec error."""
    return [Diagnostic(
        "SPEC-PDU-OUTLETS",
        f"rack {rack.name} PDU {pdu} needs {used[pdu]} outlets but profile "
        f"'{rack.pdu_profile}' gives {profile.outlets}",
        ("power", "pdu_profiles", rack.pdu_profile, "outlets"),
        details={"measured": used[pdu], "limit": profile.outlets})
        for pdu in pdus if used.get(pdu, 0) > profile.outlets]
