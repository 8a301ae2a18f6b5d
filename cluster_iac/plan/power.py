"""Power-graph helpers: names, power shelves, and the normal and failover loads of every part.

The power graph (plan.graphs['power'], an nx.DiGraph) runs feed -> pdu -> circuit -> outlet ->
psu -> device, and for busbar-fed trays (GB200 NVL72) power-shelf -> busbar -> tray. Node
attribute ``kind`` names the part. build_power writes, on every psu, circuit and pdu node,
``load_w`` (all feeds up) and ``failover_w`` (the worst case when one partner PDU or feed is
down, named in ``failover_case``); circuits also carry per-phase currents. Checks and the PDU
tables read them through the dataclasses below, so every output uses the same numbers.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from cluster_iac.plan import electrical
from cluster_iac.plan.model import Plan

# PDU sides of each layout: 'single' has one PDU, 'ab' two (2N), 'three' three (DGX racks).
SIDES = {"single": ("A",), "ab": ("A", "B"), "three": ("A", "B", "C")}
# The NVL72 power shelf feeds trays that have no PSUs of their own (catalog power_shelves).
DEFAULT_SHELF = "nvl72-33kw"
BUSBAR_TIERS = ("nvswitch-tray",)


def pdu_name(rack: str, side: str) -> str:
    return f"{rack}-pdu-{side.lower()}"


def feed_name(rack: str, side: str) -> str:
    return f"{rack}-feed-{side.lower()}"


def busbar_fed(plan: Plan) -> dict[str, list[tuple[str, int]]]:
    """Rack -> (device, max draw W) of trays with no PSUs, fed from the rack's busbar."""
    fed: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for node in plan.nodes:
        nt = plan.node_types[node.node_type]
        if nt.psu_count == 0:
            fed[node.rack].append((node.hostname, nt.max_power_w))
    for sw in plan.switches:
        if sw.psu_count == 0 or (sw.tier in BUSBAR_TIERS and sw.rack in fed):
            fed[sw.rack].append((sw.name, sw.max_power_w))
    return dict(fed)


def shelf_count(load_w: float, capacity_w: int, layout: str) -> int:
    """Shelves a busbar load needs: N+N split over the feeds for 'ab' (NVIDIA's NVL72 racks
    carry eight 33 kW shelves for ~132 kW), any two of three for 'three', N+1 for 'single'."""
    n = max(1, math.ceil(load_w / capacity_w))
    if layout == "ab":
        return 2 * n
    if layout == "three":
        return 3 * max(1, math.ceil(load_w / (2 * capacity_w)))
    return n + 1


def power_shelves(plan: Plan) -> dict[str, list[str]]:
    """Rack -> names of its power shelves (empty for racks without busbar-fed trays)."""
    racks = {r.name: r for r in plan.racks}
    capacity = plan.catalog.power_shelves[DEFAULT_SHELF].capacity_w
    result: dict[str, list[str]] = {}
    for rack, trays in busbar_fed(plan).items():
        layout = plan.settings.power.pdu_profiles[racks[rack].pdu_profile].layout
        count = shelf_count(sum(w for _, w in trays), capacity, layout)
        result[rack] = [f"{rack}-ps{k + 1}" for k in range(count)]
    return result


@dataclass(frozen=True)
class CircuitLoad:
    """One breaker/circuit of a PDU with its loads (W) and line currents (A)."""

    rack: str
    pdu: str
    side: str
    circuit: str  # graph node id, e.g. 'r01-pdu-a:cb1'
    name: str  # 'CB1'
    phases: int
    voltage_v: float
    breaker_a: float
    rated_100_percent: bool
    power_factor: float
    capacity_w: float
    limit_w: float
    devices: tuple[str, ...]
    outlets: tuple[str, ...]
    load_w: float
    failover_w: float
    failover_case: str  # the failed PDU that gives failover_w ('' when no partner)
    phase_load_w: dict[str, float]
    phase_current_a: dict[str, float]
    failover_phase_current_a: dict[str, float]
    spec_path: tuple[str | int, ...]

    @property
    def percent(self) -> float:
        return 100 * self.load_w / self.limit_w

    @property
    def failover_percent(self) -> float:
        return 100 * self.failover_w / self.limit_w


@dataclass(frozen=True)
class PduLoad:
    """One rack PDU (one feed) with its total loads (W)."""

    rack: str
    pdu: str
    side: str
    layout: str
    load_w: float
    failover_w: float
    failover_case: str
    limit_w: float  # sum of its circuits' continuous limits


def circuit_loads(plan: Plan) -> list[CircuitLoad]:
    """Every circuit of every PDU, sorted by rack, PDU and circuit."""
    graph = plan.graphs.get("power")
    if graph is None:
        return []
    found = []
    for cid, data in graph.nodes(data=True):
        if data["kind"] != "circuit":
            continue
        outlets = sorted(graph.successors(cid), key=lambda o: graph.nodes[o]["number"])
        devices = _unique(graph.nodes[p]["device"] for o in outlets for p in graph.successors(o))
        found.append(CircuitLoad(
            rack=data["rack"], pdu=data["pdu"], side=data["side"], circuit=cid, name=data["name"],
            phases=data["phases"], voltage_v=data["voltage_v"], breaker_a=data["breaker_a"],
            rated_100_percent=data["rated_100_percent"], power_factor=data["power_factor"],
            capacity_w=data["capacity_w"], limit_w=data["limit_w"], devices=devices,
            outlets=tuple(graph.nodes[o]["name"] for o in outlets), load_w=data["load_w"],
            failover_w=data["failover_w"], failover_case=data["failover_case"],
            phase_load_w=dict(data["phase_load_w"]), phase_current_a=dict(data["phase_current_a"]),
            failover_phase_current_a=dict(data["failover_phase_current_a"]),
            spec_path=data["spec_path"]))
    return sorted(found, key=lambda c: (c.rack, c.pdu, graph.nodes[c.circuit]["index"]))


def pdu_loads(plan: Plan) -> list[PduLoad]:
    """Every PDU with its normal and worst failover load, sorted by rack and side."""
    graph = plan.graphs.get("power")
    if graph is None:
        return []
    found = [PduLoad(d["rack"], pid, d["side"], d["layout"], d["load_w"], d["failover_w"],
                     d["failover_case"], d["limit_w"])
             for pid, d in graph.nodes(data=True) if d["kind"] == "pdu"]
    return sorted(found, key=lambda p: (p.rack, p.side))


@dataclass(frozen=True)
class PsuLoad:
    """One PSU (one cord) of a device: where it plugs in and what it carries."""

    device: str
    psu: str  # 'PSU1'
    pdu: str
    circuit: str
    outlet: str
    slot: str  # phase ('L1') or line pair ('L1-L2')
    rating_w: int
    load_w: float
    failover_w: float  # the most it carries with any one partner PDU down


def psu_loads(plan: Plan) -> dict[str, list[PsuLoad]]:
    """Device -> its PSUs in order (devices with PSUs only; busbar trays have none)."""
    graph = plan.graphs.get("power")
    result: dict[str, list[PsuLoad]] = defaultdict(list)
    if graph is None:
        return {}
    for _, d in sorted(graph.nodes(data=True), key=lambda nd: str(nd[0])):
        if d["kind"] == "psu":
            result[d["device"]].append(PsuLoad(
                d["device"], d["name"], d["pdu"], d["circuit"], graph.nodes[d["outlet"]]["name"],
                d["slot"], d["rating_w"], d["load_w"], d["failover_w"]))
    for psus in result.values():
        psus.sort(key=lambda p: int(p.psu[3:]))
    return dict(result)


def rack_loads_w(plan: Plan) -> dict[str, float]:
    """Rack -> sum of its devices' maximum draw (nodes, switches, busbar trays; shelves pass
    power through and add nothing). Equals the sum of its PDUs' normal loads."""
    graph = plan.graphs.get("power")
    loads: dict[str, float] = {r.name: 0.0 for r in plan.racks}
    if graph is None:
        return loads
    for _, data in graph.nodes(data=True):
        if data["kind"] in ("node", "switch"):
            loads[data["rack"]] += data["max_power_w"]
    return loads


def _unique(items: Iterable[Any]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(str(i) for i in items))


def phase_currents(circuit: dict[str, Any], loads_w: dict[str, float]) -> dict[str, float]:
    """Line currents of a circuit node from its per-slot loads (see electrical.phase_currents)."""
    return electrical.phase_currents(loads_w, circuit["voltage_v"], circuit["phases"],
                                     circuit["power_factor"])
