"""Power checks: breakers, A/B and three-PDU redundancy, phase balance, budgets, PSU redundancy.

Loads come from the power graph (plan.power: circuit_loads, pdu_loads, psu_loads), so the
checks, the PDU breaker tables and report.md all use the same numbers.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import replace

from cluster_iac.checks import check
from cluster_iac.errors import Diagnostic, Severity
from cluster_iac.plan import Plan
from cluster_iac.plan.electrical import phase_imbalance
from cluster_iac.plan.power import CircuitLoad, circuit_loads, rack_loads_w


def rating(circuit: CircuitLoad, continuous_percent: float) -> str:
    """'415 V 3-phase 32 A x 0.95 PF x 80 %': how the derated limit was computed."""
    percent = 100 if circuit.rated_100_percent else continuous_percent
    return (f"{circuit.voltage_v:g} V {circuit.phases}-phase {circuit.breaker_a:g} A x "
            f"{circuit.power_factor:g} PF x {percent:g} %")


def _where(c: CircuitLoad) -> str:
    return f"rack {c.rack} PDU {c.pdu} breaker {c.name}"


@check("power.breaker_load")
def breaker_load(plan: Plan) -> Iterator[Diagnostic]:
    """Each breaker carries its devices' maximum draw within its continuous rating."""
    percent = plan.settings.policy.breaker_continuous_percent
    found = []
    for c in circuit_loads(plan):
        if c.load_w > c.limit_w:
            found.append((c, c.load_w, Diagnostic(
                "POWER-BREAKER",
                f"{_where(c)} carries {c.load_w / 1000:.2f} kW ({', '.join(c.devices)}), "
                f"{c.percent:.0f}% of its {c.limit_w / 1000:.2f} kW derated limit "
                f"({rating(c, percent)}); over by {(c.load_w - c.limit_w) / 1000:.2f} kW",
                (*c.spec_path, "breaker_a"),
                details={"measured": round(c.load_w / 1000, 3),
                         "limit": round(c.limit_w / 1000, 3), "unit": "kW"})))
    yield from worst_per_profile(found, "breaker(s)")


@check("power.redundancy")
def redundancy(plan: Plan) -> Iterator[Diagnostic]:
    """With A/B feeds either side alone, with three PDUs any two, carry the rack in rating."""
    percent = plan.settings.policy.breaker_continuous_percent
    found = []
    for c in circuit_loads(plan):
        if c.load_w > c.limit_w or c.failover_w <= c.limit_w:
            continue  # over in normal operation: POWER-BREAKER already says so
        found.append((c, c.failover_w, Diagnostic(
            "POWER-REDUNDANCY",
            f"{_where(c)} carries {c.failover_w / 1000:.2f} kW with {c.failover_case} down, "
            f"{c.failover_percent:.0f}% of its {c.limit_w / 1000:.2f} kW derated limit "
            f"({rating(c, percent)}); over by {(c.failover_w - c.limit_w) / 1000:.2f} kW, "
            f"so the rack is not redundant", (*c.spec_path, "layout"),
            details={"measured": round(c.failover_w / 1000, 3),
                     "limit": round(c.limit_w / 1000, 3), "unit": "kW"})))
    yield from worst_per_profile(found, "breaker(s)")


@check("power.phase_imbalance")
def phase_balance(plan: Plan) -> Iterator[Diagnostic]:
    """Line currents of each three-phase PDU (its circuits summed) stay within the policy's
    imbalance; an unbalanced PDU trips a line breaker before the power sum says so. PDUs
    loaded below policy.phase_imbalance_min_load_percent of their limit have headroom on
    every line and are not checked."""
    policy = plan.settings.policy
    currents: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    circuits: dict[str, list[CircuitLoad]] = defaultdict(list)
    for c in circuit_loads(plan):
        if c.phases == 3:
            circuits[c.pdu].append(c)
            for line, current in c.phase_current_a.items():
                currents[c.pdu][line] += current
    found = []
    for pdu, lines in currents.items():
        first = circuits[pdu][0]
        load = sum(c.load_w for c in circuits[pdu])
        limit = sum(c.limit_w for c in circuits[pdu])
        imbalance = phase_imbalance(dict(lines))
        if imbalance <= policy.max_phase_imbalance:
            continue
        if 100 * load < policy.phase_imbalance_min_load_percent * limit:
            continue
        amps = ", ".join(f"{phase} {a:.1f} A" for phase, a in sorted(lines.items()))
        found.append((first, imbalance, Diagnostic(
            "POWER-PHASE-IMBALANCE",
            f"rack {first.rack} PDU {pdu} phase imbalance {100 * imbalance:.0f}% ({amps}) at "
            f"{100 * load / limit:.0f}% load exceeds the policy's "
            f"{100 * policy.max_phase_imbalance:.0f}% by "
            f"{100 * (imbalance - policy.max_phase_imbalance):.0f} points",
            ("policy", "max_phase_imbalance"), Severity.WARNING,
            details={"measured": round(imbalance, 3), "limit": policy.max_phase_imbalance,
                     "unit": "ratio"})))
    yield from worst_per_profile(found, "PDU(s)")


def worst_per_profile(found: list[tuple[CircuitLoad, float, Diagnostic]],
                      noun: str) -> Iterator[Diagnostic]:
    """One finding per PDU profile: the worst circuit or PDU, with how many more share the
    problem (a 1,000-rack cluster gets one line per profile, not one per breaker)."""
    groups: dict[str, list[tuple[float, Diagnostic]]] = defaultdict(list)
    for circuit, measured, diag in found:
        groups[str(circuit.spec_path[2])].append((measured, diag))
    for profile in sorted(groups):
        items = groups[profile]
        measured, diag = max(items, key=lambda item: item[0])  # first of equals: sorted order
        if len(items) > 1:
            diag = replace(diag, message=f"{diag.message} (and {len(items) - 1} more {noun} "
                                         f"of PDU profile {profile})")
        yield diag


@check("power.row_budget")
def row_budget(plan: Plan) -> Iterator[Diagnostic]:
    """A row's racks draw no more than its busway or panel delivers (row max_power_kw)."""
    loads = rack_loads_w(plan)
    for row in plan.rows:
        if row.max_power_kw is None:
            continue
        kw = sum(loads[r] for r in row.racks) / 1000
        if kw > row.max_power_kw:
            yield Diagnostic(
                "POWER-ROW",
                f"row {row.name} draws {kw:.1f} kW at maximum, {100 * kw / row.max_power_kw:.0f}% "
                f"of its {row.max_power_kw:g} kW budget; over by {kw - row.max_power_kw:.1f} kW",
                (*row.spec_path, "max_power_kw"),
                details={"measured": round(kw, 3), "limit": row.max_power_kw, "unit": "kW"})


def facility_load_kw(plan: Plan) -> tuple[float, float]:
    """(IT load, facility load = IT load x PUE) in kW."""
    it_kw = sum(rack_loads_w(plan).values()) / 1000
    return it_kw, it_kw * plan.settings.power.pue


@check("power.facility_budget")
def facility_budget(plan: Plan) -> Iterator[Diagnostic]:
    """IT load x PUE within the facility's power capacity (power.facility_capacity_kw)."""
    capacity = plan.settings.power.facility_capacity_kw
    if capacity is None:
        return
    it_kw, total_kw = facility_load_kw(plan)
    if total_kw > capacity:
        yield Diagnostic(
            "POWER-FACILITY",
            f"the cluster draws {it_kw:.1f} kW IT load x PUE {plan.settings.power.pue:g} = "
            f"{total_kw:.1f} kW, {100 * total_kw / capacity:.0f}% of the facility's "
            f"{capacity:g} kW; over by {total_kw - capacity:.1f} kW",
            ("power", "facility_capacity_kw"),
            details={"measured": round(total_kw, 3), "limit": capacity, "unit": "kW"})


@check("power.psu_redundancy")
def psu_redundancy(plan: Plan) -> Iterator[Diagnostic]:
    """Each node type's required PSUs carry its maximum draw when the spare PSUs have failed
    (DGX H100: 4 of 6 x 3.3 kW carry 10.2 kW)."""
    used = {n.node_type for n in plan.nodes}
    for name in sorted(used):
        nt = plan.node_types[name]
        if nt.psu_count == 0 or nt.psu_required == 0:
            continue  # busbar-fed trays: the power shelves are checked as devices
        per_psu = nt.max_power_w / nt.psu_required
        if nt.psu_required > nt.psu_count or per_psu > nt.psu_rating_w:
            yield Diagnostic(
                "POWER-PSU-REDUNDANCY",
                f"node type {name}: {nt.psu_required} of {nt.psu_count} PSUs carry "
                f"{nt.max_power_w / 1000:.2f} kW at {per_psu / 1000:.2f} kW each, "
                f"{100 * per_psu / nt.psu_rating_w:.0f}% of their {nt.psu_rating_w / 1000:g} kW "
                f"rating; over by {(per_psu - nt.psu_rating_w) / 1000:.2f} kW per PSU",
                (*nt.spec_path, "psus"),
                details={"measured": round(per_psu, 1), "limit": nt.psu_rating_w, "unit": "W"})


@check("power.psu_failover")
def psu_failover(plan: Plan) -> Iterator[Diagnostic]:
    """With one partner PDU (feed) down, each device's live PSUs carry it within rating.
    One finding per node type or switch model, naming the first device and the count."""
    paths = {n.hostname: (n.node_type, plan.node_types[n.node_type].spec_path)
             for n in plan.nodes}
    paths.update({s.name: (s.model, s.spec_path) for s in plan.switches})
    # One pass over the power graph's PSUs (their failover loads are annotated by build_power).
    graph = plan.graphs.get("power")
    over: dict[str, list[tuple[float, int, str, int]]] = defaultdict(list)
    for _, d in graph.nodes(data=True) if graph is not None else ():
        if d["kind"] == "psu" and d["failover_w"] > d["rating_w"] + 1e-6:
            over[d["device"]].append((-d["failover_w"], int(d["name"][3:]), d["name"],
                                      d["rating_w"]))
    worst: dict[str, tuple[float, str, str, int]] = {}
    count: dict[str, int] = defaultdict(int)
    for device in sorted(over):
        if device not in paths:
            continue
        kind = paths[device][0]
        count[kind] += 1
        neg_load, _, psu, rating_w = min(over[device])
        if kind not in worst or -neg_load > worst[kind][0] + 1e-6:
            worst[kind] = (-neg_load, device, psu, rating_w)
    for kind, (load, device, psu, rating_w) in sorted(worst.items()):
        others = f" and {count[kind] - 1} more" if count[kind] > 1 else ""
        yield Diagnostic(
            "POWER-PSU-FAILOVER",
            f"{device}{others} ({kind}): with a partner PDU down, {psu} carries "
            f"{load / 1000:.2f} kW, {100 * load / rating_w:.0f}% of its {rating_w / 1000:g} kW "
            f"rating; too few PSUs stay on the live feeds",
            _device_path(plan, device, paths[device][1]),
            details={"measured": round(load, 1), "limit": rating_w, "unit": "W"})


def _device_path(plan: Plan, device: str, default: tuple[str | int, ...]) -> tuple[str | int, ...]:
    """The PDU profile's layout decides how PSUs split over feeds; cite it for racked nodes."""
    placement = plan.placements.get(device)
    racks = {r.name: r for r in plan.racks}
    if placement is not None and placement.rack in racks:
        return ("power", "pdu_profiles", racks[placement.rack].pdu_profile, "layout")
    return default
