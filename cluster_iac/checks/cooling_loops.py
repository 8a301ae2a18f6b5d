"""Liquid cooling checks: platforms that need liquid, and each loop's flow, CDU and pumps."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from cluster_iac.base.errors import Diagnostic, Severity
from cluster_iac.base.hostlist import HostlistError
from cluster_iac.base.suggest import did_you_mean
from cluster_iac.checks.cooling import looped_racks, per_spec_path
from cluster_iac.checks.registry import check
from cluster_iac.plan import Plan
from cluster_iac.plan.cooling import LoopFigures, loop_figures, loop_racks
from cluster_iac.plan.power import rack_loads_w


@check("cooling.platform")
def platform_cooling(plan: Plan) -> Iterator[Diagnostic]:
    """A platform cooled by liquid only (direct-to-chip, e.g. GB200 NVL72 trays) sits in a
    liquid rack: in an air rack nothing removes its heat, whatever the air limit says."""
    yield from per_spec_path(_platform_cooling(plan), "rack(s)")


def _platform_cooling(plan: Plan) -> Iterator[Diagnostic]:
    racks = {r.name: r for r in plan.racks}
    liquid_only = {name for name, nt in plan.node_types.items() if nt.cooling == "liquid"}
    placed = Counter((n.rack, n.node_type) for n in plan.nodes if n.node_type in liquid_only)
    for (rack_name, node_type), count in sorted(placed.items()):
        rack = racks[rack_name]
        if rack.cooling != "air":
            continue
        yield Diagnostic(
            "COOLING-PLATFORM",
            f"air-cooled rack {rack.name} holds {count} node(s) of type {node_type} "
            f"({plan.node_types[node_type].platform_name}), which are cooled by liquid only: "
            f"declare the rack cooling: liquid and the loop that cools it",
            (*rack.spec_path, "cooling"), details={"measured": count, "unit": "nodes"})


@check("cooling.rack_on_a_loop")
def rack_on_a_loop(plan: Plan) -> Iterator[Diagnostic]:
    """With loops declared, a liquid rack with load is on one of them or has a CDU of its own
    (in_rack_cdu): its liquid_capacity_kw rates its manifold or rear door, not a path for its
    heat to the facility. (A rack with no liquid_capacity_kw either is COOLING-LOOP-MISSING.)"""
    yield from per_spec_path(_racks_on_no_loop(plan), "rack(s)")


def _racks_on_no_loop(plan: Plan) -> Iterator[Diagnostic]:
    loops = [loop.name for loop in plan.settings.cooling.loops]
    if not loops:
        return
    loads = rack_loads_w(plan)
    looped = looped_racks(plan)
    for rack in plan.racks:
        kw = loads[rack.name] / 1000
        if (rack.cooling != "liquid" or rack.liquid_capacity_kw is None or kw <= 0
                or rack.name in looped or rack.in_rack_cdu):
            continue
        yield Diagnostic(
            "COOLING-RACK-NO-LOOP",
            f"liquid-cooled rack {rack.name} sheds {kw:.1f} kW into none of the spec's loops "
            f"({', '.join(loops)}): its liquid_capacity_kw ({rack.liquid_capacity_kw:g} kW) "
            f"rates its manifold, not a path for its heat to the facility",
            (*rack.spec_path, "cooling"),
            hint="add the rack to the racks of the loop that cools it (cooling.loops[].racks), "
                 "or declare in_rack_cdu: true if the rack has a CDU of its own",
            details={"measured": round(kw, 3), "unit": "kW"})


@check("cooling.loop_references")
def loop_references(plan: Plan) -> Iterator[Diagnostic]:
    """Each loop names a catalog coolant, a return warmer than its supply, no more required
    pumps than it has, and liquid racks that no other loop also claims."""
    racks = {r.name: r for r in plan.racks}
    owner: dict[str, str] = {}
    for index, loop in enumerate(plan.settings.cooling.loops):
        path = ("cooling", "loops", index)
        if loop.coolant not in plan.catalog.coolants:
            yield Diagnostic("COOLING-LOOP-COOLANT", f"loop {loop.name}: unknown coolant "
                             f"'{loop.coolant}'", (*path, "coolant"),
                             hint=did_you_mean(loop.coolant, sorted(plan.catalog.coolants)))
        if loop.return_c <= loop.supply_c:
            yield Diagnostic("COOLING-LOOP-TEMPERATURE", f"loop {loop.name}: return "
                             f"{loop.return_c:g} C is not above supply {loop.supply_c:g} C, so "
                             f"the loop carries no heat", (*path, "return_c"))
        if loop.pumps.required > loop.pumps.count:
            yield Diagnostic("COOLING-LOOP-PUMPS", f"loop {loop.name} needs "
                             f"{loop.pumps.required} pumps for its flow but has "
                             f"{loop.pumps.count}", (*path, "pumps"))
        yield from _loop_rack_problems(loop, index, racks, owner)


def _loop_rack_problems(loop, index, racks, owner) -> Iterator[Diagnostic]:  # type: ignore[no-untyped-def]
    path = ("cooling", "loops", index, "racks")
    try:
        names = loop_racks(loop.racks)
    except HostlistError as error:
        yield Diagnostic("SPEC-HOSTLIST", f"loop {loop.name} racks: {error}", path)
        return
    for name in names:
        rack = racks.get(name)
        if rack is None:
            yield Diagnostic("COOLING-LOOP-RACK", f"loop {loop.name}: '{name}' is not a rack of "
                             f"any row", path, hint=did_you_mean(name, sorted(racks)))
        elif rack.cooling != "liquid":
            yield Diagnostic("COOLING-LOOP-RACK", f"loop {loop.name} cools rack {name}, which "
                             f"is declared cooling: air", path)
        elif name in owner:
            yield Diagnostic("COOLING-LOOP-RACK", f"rack {name} is in loops {owner[name]} and "
                             f"{loop.name}; give each rack one loop", path)
        else:
            owner[name] = loop.name


@check("cooling.loop_heat")
def loop_heat(plan: Plan) -> Iterator[Diagnostic]:
    """Each loop's racks shed no more heat than its flow carries at its temperature rise, than
    its CDU exchanges, and (N+1) than it carries with one pump down."""
    for fig in loop_figures(plan):
        yield from _loop_heat(fig)


def _carries(fig: LoopFigures, flow_lpm: float) -> str:
    return (f"{flow_lpm:.0f} L/min of {fig.coolant} x {fig.density:.1f} kg/m3 x "
            f"{fig.cp:.3f} kJ/(kg K) x {fig.rise_k:g} K")


def _loop_heat(fig: LoopFigures) -> Iterator[Diagnostic]:
    heat = fig.heat_kw
    racks = ", ".join(fig.racks) or "no racks"
    if heat > fig.flow_kw:
        need = fig.flow_lpm * heat / fig.flow_kw
        yield Diagnostic(
            "COOLING-LOOP-FLOW",
            f"loop {fig.name} must carry {heat:.1f} kW from {racks}, but "
            f"{_carries(fig, fig.flow_lpm)} = {fig.flow_kw:.1f} kW "
            f"({100 * heat / fig.flow_kw:.0f}%); it needs {need:.0f} L/min at this rise",
            (*fig.spec_path, "flow_lpm"),
            details={"measured": round(heat, 3), "limit": round(fig.flow_kw, 3), "unit": "kW"})
        return
    if fig.cdu_kw is not None and heat > fig.cdu_kw:
        yield Diagnostic(
            "COOLING-CDU",
            f"loop {fig.name} must carry {heat:.1f} kW from {racks}, "
            f"{100 * heat / fig.cdu_kw:.0f}% of {_cdus(fig)} {fig.cdu_kw:g} kW; over by "
            f"{heat - fig.cdu_kw:.1f} kW", (*fig.spec_path, "cdu_capacity_kw"),
            details={"measured": round(heat, 3), "limit": fig.cdu_kw, "unit": "kW"})
    if heat > fig.one_pump_down_kw:
        flow = fig.flow_lpm * fig.one_pump_down_kw / fig.flow_kw
        yield Diagnostic(
            "COOLING-PUMP-REDUNDANCY",
            f"loop {fig.name} with one pump down: {_carries(fig, flow)} = "
            f"{fig.one_pump_down_kw:.1f} kW, less than the {heat:.1f} kW of {racks} "
            f"(N+1 needs one pump more than its required ones)", (*fig.spec_path, "pumps"),
            details={"measured": round(heat, 3), "limit": round(fig.one_pump_down_kw, 3),
                     "unit": "kW"})


def _cdus(fig: LoopFigures) -> str:
    return "its CDU's" if fig.cdus == 1 else f"its {fig.cdus} CDUs'"


@check("cooling.cdu_redundancy")
def cdu_redundancy(plan: Plan) -> Iterator[Diagnostic]:
    """A warning (SPOF-CDU) for a loop with one CDU: its heat exchanger, controls and valves
    (whatever its pumps' N+1) are a single point of failure of every rack on the loop; and for
    a loop of several CDUs whose others do not exchange its heat with one down."""
    for fig in loop_figures(plan):
        racks = ", ".join(fig.racks) or "no racks"
        if fig.cdus == 1:
            yield Diagnostic(
                "SPOF-CDU",
                f"loop {fig.name} has one CDU for {len(fig.racks)} rack(s) ({racks}, "
                f"{fig.heat_kw:.1f} kW): its failure stops the cooling of all of them, "
                f"whatever its pumps' redundancy", fig.spec_path, Severity.WARNING,
                hint="cdus: 2 (each of cdu_capacity_kw) where the loop has a second CDU in "
                     "parallel, or accept it: policy: {levels: {SPOF-CDU: info}}",
                details={"measured": 1, "limit": 2, "unit": "CDUs"})
        elif fig.one_cdu_down_kw is not None and fig.heat_kw > fig.one_cdu_down_kw:
            yield Diagnostic(
                "SPOF-CDU",
                f"loop {fig.name} with one of its {fig.cdus} CDUs down: the others exchange "
                f"{fig.one_cdu_down_kw:g} kW, less than the {fig.heat_kw:.1f} kW of {racks}",
                (*fig.spec_path, "cdus"), Severity.WARNING,
                hint="one more CDU (cdus), or CDUs of a larger cdu_capacity_kw",
                details={"measured": round(fig.heat_kw, 3),
                         "limit": round(fig.one_cdu_down_kw, 3), "unit": "kW"})
