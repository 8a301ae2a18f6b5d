"""Loads on the power graph: normal, and with each partner PDU (feed) failed in turn."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from cluster_iac.plan.power import phase_currents


def annotate_loads(graph: Any, rack_pdus: dict[str, list[str]]) -> None:
    """Write load_w / failover_w / failover_case on psu, circuit and pdu nodes, and per-phase
    loads and currents on circuits. A device's draw is shared equally by its live PSUs
    (current-sharing supplies); a power shelf draws its busbar's load shared by the live shelves."""
    psus_by_rack: dict[str, list[str]] = defaultdict(list)
    for pid, data in graph.nodes(data=True):
        if data["kind"] == "psu":
            psus_by_rack[data["rack"]].append(pid)
    for rack, pdus in rack_pdus.items():
        _annotate_rack(graph, sorted(psus_by_rack.get(rack, [])), pdus)


def psu_loads(graph: Any, psus: list[str], failed: frozenset[str]) -> dict[str, float]:
    """PSU -> watts with the PDUs in ``failed`` down."""
    live: dict[str, list[str]] = defaultdict(list)
    for psu in psus:
        if graph.nodes[psu]["pdu"] not in failed:
            live[graph.nodes[psu]["device"]].append(psu)
    draw = _device_draws(graph, psus, live)
    loads = dict.fromkeys(psus, 0.0)
    for device, alive in live.items():
        for psu in alive:
            loads[psu] = draw[device] / len(alive)
    return loads


def _device_draws(graph: Any, psus: list[str], live: dict[str, list[str]]) -> dict[str, float]:
    """Device -> watts it pulls from its PSUs; shelves split their busbar's load."""
    draws: dict[str, float] = {}
    shelves: dict[str, list[str]] = defaultdict(list)
    for device in {graph.nodes[p]["device"] for p in psus}:
        data = graph.nodes[device]
        if data["kind"] == "power-shelf":
            if device in live:
                shelves[data["busbar"]].append(device)
        else:
            draws[device] = data["max_power_w"]
    for busbar, alive in shelves.items():
        load = sum(graph.nodes[t]["max_power_w"] for t in graph.successors(busbar))
        for shelf in alive:
            draws[shelf] = load / len(alive)
    return draws


def _annotate_rack(graph: Any, psus: list[str], pdus: list[str]) -> None:
    # Normal operation, then each PDU (with its feed) down in turn when there is a partner.
    scenarios: list[frozenset[str]] = [frozenset()]
    if len(pdus) > 1:
        scenarios += [frozenset([p]) for p in pdus]
    results = [(s, psu_loads(graph, psus, s)) for s in scenarios]
    normal = results[0][1]
    for psu in psus:
        graph.nodes[psu]["load_w"] = normal[psu]
        graph.nodes[psu]["failover_w"] = max(loads[psu] for _, loads in results)
    circuits = sorted({graph.nodes[p]["circuit"] for p in psus} | _all_circuits(graph, pdus))
    per_case = [(s, _circuit_slot_loads(graph, psus, loads)) for s, loads in results]
    for cid in circuits:
        _annotate_circuit(graph, cid, per_case)
    for pdu in pdus:
        _annotate_pdu(graph, pdu, per_case)


def _all_circuits(graph: Any, pdus: list[str]) -> set[str]:
    return {c for pdu in pdus for c in graph.successors(pdu)}


def _circuit_slot_loads(graph: Any, psus: list[str],
                        loads: dict[str, float]) -> dict[str, dict[str, float]]:
    """Circuit -> slot (phase or line pair) -> watts."""
    result: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for psu in psus:
        data = graph.nodes[psu]
        result[data["circuit"]][data["slot"]] += loads[psu]
    return result


def _annotate_circuit(graph: Any, cid: str, per_case: list[tuple[frozenset[str], Any]]) -> None:
    data = graph.nodes[cid]
    slots = data["slots"]
    normal = {s: per_case[0][1].get(cid, {}).get(s, 0.0) for s in slots}
    data["load_w"] = sum(normal.values())
    data["phase_load_w"] = normal
    data["phase_current_a"] = phase_currents(data, normal)
    worst, case, worst_slots = data["load_w"], "", normal
    for failed, loads in per_case[1:]:
        if data["pdu"] in failed:
            continue
        slot_w = {s: loads.get(cid, {}).get(s, 0.0) for s in slots}
        if sum(slot_w.values()) > worst + 1e-9:
            worst, case, worst_slots = sum(slot_w.values()), next(iter(failed)), slot_w
    data["failover_w"], data["failover_case"] = worst, case
    data["failover_phase_current_a"] = phase_currents(data, worst_slots)


def _annotate_pdu(graph: Any, pdu: str, per_case: list[tuple[frozenset[str], Any]]) -> None:
    data = graph.nodes[pdu]
    circuits = list(graph.successors(pdu))
    totals = [(failed, sum(sum(loads.get(c, {}).values()) for c in circuits))
              for failed, loads in per_case if pdu not in failed]
    data["load_w"] = totals[0][1]
    worst = max(totals, key=lambda t: t[1])
    data["failover_w"] = worst[1]
    data["failover_case"] = next(iter(worst[0])) if worst[0] and worst[1] > totals[0][1] else ""
    data["limit_w"] = sum(graph.nodes[c]["limit_w"] for c in circuits)
