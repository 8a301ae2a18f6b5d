"""Cooling checks: rack heat against air or liquid capacity, and the facility's heat rejection."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from cluster_iac.base.errors import Diagnostic, Severity
from cluster_iac.base.hostlist import HostlistError
from cluster_iac.checks.registry import check
from cluster_iac.plan import Plan
from cluster_iac.plan.cooling import loop_racks
from cluster_iac.plan.power import rack_loads_w

# The heat a rack must shed is its IT load: every watt drawn leaves as heat (the devices do
# no external work). A liquid rack's loop is checked against the whole load, which is
# conservative for direct-to-chip designs that still leave 10-30 % of the heat to room air.


@check("cooling.rack_heat")
def rack_heat(plan: Plan) -> Iterator[Diagnostic]:
    """Air racks within policy.air_cooled_rack_kw; liquid racks within their loop capacity.
    One finding per rack group of the spec: its hottest rack, and how many more share it."""
    yield from per_spec_path(_rack_heat(plan), "rack(s)")


def per_spec_path(found: Iterator[Diagnostic], noun: str) -> Iterator[Diagnostic]:
    """Group findings by (code, spec path); keep the largest measured one and count the rest."""
    groups: dict[tuple[object, ...], list[Diagnostic]] = {}
    for diag in found:
        groups.setdefault((diag.code, diag.path), []).append(diag)
    for items in groups.values():
        worst = max(items, key=lambda d: float(d.details.get("measured", 0)))  # type: ignore[arg-type]
        if len(items) > 1:
            worst = replace(worst, message=f"{worst.message} (and {len(items) - 1} more {noun} "
                                           f"of this rack group)")
        yield worst


def _rack_heat(plan: Plan) -> Iterator[Diagnostic]:
    loads = rack_loads_w(plan)
    air_limit = plan.settings.policy.air_cooled_rack_kw
    loops = [loop.name for loop in plan.settings.cooling.loops]
    looped = looped_racks(plan)
    for rack in plan.racks:
        kw = loads[rack.name] / 1000
        if rack.cooling == "air" and kw > air_limit:
            yield Diagnostic(
                "COOLING-AIR",
                f"air-cooled rack {rack.name} must shed {kw:.1f} kW of heat, "
                f"{100 * kw / air_limit:.0f}% of the {air_limit:g} kW an air-cooled rack can "
                f"(policy.air_cooled_rack_kw); over by {kw - air_limit:.1f} kW: declare "
                f"cooling: liquid with its liquid_capacity_kw", (*rack.spec_path, "cooling"),
                hint="or put fewer nodes in each rack (node_groups[].per_rack, or more racks "
                     "in the group's racks)",
                details={"measured": round(kw, 3), "limit": air_limit, "unit": "kW"})
        elif (rack.cooling == "liquid" and rack.liquid_capacity_kw is None and kw > 0
              and rack.name not in looped and loops and not rack.in_rack_cdu):
            yield Diagnostic(
                "COOLING-LOOP-MISSING",
                f"liquid-cooled rack {rack.name} sheds {kw:.1f} kW into no cooling loop: the "
                f"spec's loops ({', '.join(loops)}) cool other racks, and the rack declares no "
                f"liquid_capacity_kw of its own", (*rack.spec_path, "cooling"),
                hint="add the rack to the racks of the loop that cools it (cooling.loops[]."
                     "racks), declare in_rack_cdu: true with its liquid_capacity_kw if it has "
                     "a CDU of its own, or declare it cooling: air",
                details={"measured": round(kw, 3), "unit": "kW"})
        elif (rack.cooling == "liquid" and rack.liquid_capacity_kw is None and kw > 0
              and rack.name not in looped):
            yield Diagnostic(
                "COOLING-LIQUID-CAPACITY",
                f"liquid-cooled rack {rack.name} sheds {kw:.1f} kW but declares no "
                f"liquid_capacity_kw and is in no cooling.loops entry, so its liquid cooling "
                f"cannot be checked", (*rack.spec_path, "cooling"),
                severity=Severity.WARNING, details={"measured": round(kw, 3), "unit": "kW"})
        elif rack.liquid_capacity_kw is not None and kw > rack.liquid_capacity_kw:
            cap = rack.liquid_capacity_kw
            yield Diagnostic(
                "COOLING-LIQUID",
                f"liquid-cooled rack {rack.name} must shed {kw:.1f} kW of heat, "
                f"{100 * kw / cap:.0f}% of its loop's {cap:g} kW; over by {kw - cap:.1f} kW",
                (*rack.spec_path, "liquid_capacity_kw"),
                details={"measured": round(kw, 3), "limit": cap, "unit": "kW"})


def looped_racks(plan: Plan) -> set[str]:
    """Every rack a loop names, whether or not the loop's coolant and racks resolve (the loop
    checks report those): a rack in a broken loop is still not on *no* loop."""
    out: set[str] = set()
    for loop in plan.settings.cooling.loops:
        try:
            out.update(loop_racks(loop.racks))
        except HostlistError:
            continue
    return out


def facility_heat_kw(plan: Plan) -> float:
    """Heat the facility must reject: the whole IT load, kW."""
    return sum(rack_loads_w(plan).values()) / 1000


@check("cooling.facility_heat")
def facility_heat(plan: Plan) -> Iterator[Diagnostic]:
    """The cluster's heat within what the chillers or dry coolers reject (cooling spec)."""
    capacity = plan.settings.cooling.heat_rejection_kw
    if capacity is None:
        return
    kw = facility_heat_kw(plan)
    if kw > capacity:
        yield Diagnostic(
            "COOLING-FACILITY",
            f"the cluster's {kw:.1f} kW of heat is {100 * kw / capacity:.0f}% of the facility's "
            f"{capacity:g} kW heat rejection; over by {kw - capacity:.1f} kW",
            ("cooling", "heat_rejection_kw"),
            details={"measured": round(kw, 3), "limit": capacity, "unit": "kW"})
