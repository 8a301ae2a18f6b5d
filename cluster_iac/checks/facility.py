"""Facility checks: each rack's power (sum of maximum draw) and weight against its spec limits."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from cluster_iac.base.errors import Diagnostic
from cluster_iac.checks.registry import check
from cluster_iac.plan import Plan
from cluster_iac.plan.power import DEFAULT_SHELF, rack_loads_w


@check("facility.rack_power")
def rack_power(plan: Plan) -> Iterator[Diagnostic]:
    """A rack's devices may not draw more than the facility delivers to it (max_power_kw)."""
    loads = rack_loads_w(plan)
    for rack in plan.racks:
        if rack.max_power_kw is None:
            continue
        kw = loads[rack.name] / 1000
        pct = 100 * kw / rack.max_power_kw
        if kw > rack.max_power_kw:
            yield Diagnostic(
                "FACILITY-RACK-POWER",
                f"rack {rack.name} draws {kw:.1f} kW at maximum, {pct:.0f}% "
                f"of its {rack.max_power_kw:g} kW limit", (*rack.spec_path, "max_power_kw"),
                details={"measured": round(kw, 3), "limit": rack.max_power_kw, "unit": "kW"})


@check("facility.rack_weight")
def rack_weight(plan: Plan) -> Iterator[Diagnostic]:
    """The devices in a rack may not weigh more than its static load rating (max_weight_kg)."""
    if all(rack.max_weight_kg is None for rack in plan.racks):
        return  # no rack rated: nothing to weigh against
    weights = rack_weights_kg(plan)
    for rack in plan.racks:
        if rack.max_weight_kg is None:
            continue
        kg = weights[rack.name]
        pct = 100 * kg / rack.max_weight_kg
        if kg > rack.max_weight_kg:
            yield Diagnostic(
                "FACILITY-RACK-WEIGHT",
                f"rack {rack.name} holds {kg:.0f} kg of devices, {pct:.0f}% "
                f"of its {rack.max_weight_kg:g} kg rating", (*rack.spec_path, "max_weight_kg"),
                details={"measured": round(kg, 1), "limit": rack.max_weight_kg, "unit": "kg"})


def rack_weights_kg(plan: Plan) -> dict[str, float]:
    """Rack -> weight of its nodes, switches and power shelves (PDUs and the empty rack are
    not in the catalog, so the rating is compared with the equipment alone)."""
    weights = {r.name: 0.0 for r in plan.racks}
    for node in plan.nodes:
        weights[node.rack] += plan.node_types[node.node_type].weight_kg
    for switch in plan.switches:
        weights[switch.rack] += switch.weight_kg
    shelf_kg = plan.catalog.power_shelves[DEFAULT_SHELF].weight_kg
    shelves = Counter(d.rack for d in plan.power_devices if d.kind == "power-shelf")
    for rack, count in shelves.items():
        weights[rack] += shelf_kg * count
    return weights
