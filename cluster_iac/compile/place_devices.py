"""Rack units for every node, switch, power shelf and PDU: nodes bottom-up, switches top-down.

Switches stack from the top in bands, so that what a cluster grows by comes last and moves
nothing already racked: NVLink switch trays, then the rack's own management switches (top
of rack), then upper tiers (spines, cores, aggregation), then leaves (a new scalable unit
adds leaves below the existing ones).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from cluster_iac.errors import CompileError, Diagnostic
from cluster_iac.plan import Plan
from cluster_iac.plan.model import Placement, Switch
from cluster_iac.plan.power import DEFAULT_SHELF, pdu_names, power_shelves
from cluster_iac.spec import ClusterSpec


# Records without generated __eq__/__repr__ (eq=False, repr=False): see plan/model.py.
@dataclass(eq=False, repr=False)
class _Stack:
    """Free space of one rack: the next unit from the bottom and from the top."""

    bottom: int
    top: int
    needed: int = 0


def place_devices(spec: ClusterSpec, plan: Plan) -> Plan:
    """Placements in spec order; a rack whose devices exceed its height is a located error.
    Power and weight limits are checks (checks/facility.py), so every rack is reported."""
    racks = {r.name: r for r in plan.racks}
    stacks = {r.name: _Stack(bottom=1, top=r.height_u) for r in plan.racks}
    placements: dict[str, Placement] = {}
    shelves = power_shelves(plan)
    shelf_u = plan.catalog.power_shelves[DEFAULT_SHELF].height_u
    # NVL72 racks put power shelves at both ends, around the trays (half bottom, half top).
    for rack, names in shelves.items():
        half = len(names) // 2
        for name in names[:half]:
            _bottom_up(stacks[rack], placements, name, rack, shelf_u)
    heights = {name: nt.height_u for name, nt in plan.node_types.items()}
    for node in plan.nodes:
        _bottom_up(stacks[node.rack], placements, node.hostname, node.rack,
                   heights[node.node_type])
    for rack, names in shelves.items():
        for name in names[len(names) // 2:]:
            _top_down(stacks[rack], placements, name, rack, shelf_u)
    for switch in sorted(plan.switches, key=_band):
        _top_down(stacks[switch.rack], placements, switch.name, switch.rack, switch.height_u)
    layouts = {name: profile.layout for name, profile in plan.settings.power.pdu_profiles.items()}
    for each in plan.racks:  # vertical PDUs: 0U at the rear (one record for a rack's PDUs)
        placements.update(dict.fromkeys(pdu_names(each.name, layouts[each.pdu_profile]),
                                        Placement(each.name, 0, 0)))
    problems = [
        Diagnostic("SPEC-RACK-HEIGHT",
                   f"rack {name} needs {stack.needed} U for its devices but is "
                   f"{racks[name].height_u} U high", (*racks[name].spec_path, "height_u"),
                   details={"measured": stack.needed, "limit": racks[name].height_u, "unit": "U"})
        for name, stack in stacks.items() if stack.needed > racks[name].height_u
    ]
    if problems:
        raise CompileError(problems)
    return replace(plan, placements=placements)


# Top-down order of switch tiers; leaves of a second fabric after the first fabric's.
BANDS = {"nvswitch-tray": 0, "access": 1, "aggregation": 2, "core": 2, "spine": 2, "leaf": 3}


def _band(switch: Switch) -> int:
    band = BANDS.get(switch.tier, 2)
    return band + 1 if band == 3 and switch.network == "storage" else band


def _bottom_up(stack: _Stack, placements: dict[str, Placement], name: str, rack: str,
               height: int) -> None:
    stack.needed += height
    placements[name] = Placement(rack, stack.bottom, height)
    stack.bottom += height


def _top_down(stack: _Stack, placements: dict[str, Placement], name: str, rack: str,
              height: int) -> None:
    stack.needed += height
    stack.top -= height
    placements[name] = Placement(rack, stack.top + 1, height)
