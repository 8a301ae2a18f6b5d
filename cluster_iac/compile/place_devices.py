"""Rack units for every node, switch, power shelf and PDU: nodes bottom-up, switches top-down.

A rack that arrives integrated (GB200/GB300 NVL72) first gets its trays, NVLink switch trays
and power shelves at the slots its platform's layout gives (compile/rack_layouts.py).
Switches stack from the top in bands, so that what a cluster grows by comes last and moves
nothing already racked: NVLink switch trays, then the rack's own management switches (top
of rack), then upper tiers (spines, cores, aggregation), then leaves (a new scalable unit
adds leaves below the existing ones).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from cluster_iac.base.errors import CompileError, Diagnostic
from cluster_iac.compile.rack_layouts import Slot, rack_slots
from cluster_iac.plan import Plan
from cluster_iac.plan.model import Placement, Switch
from cluster_iac.plan.power import DEFAULT_SHELF, power_shelves, rack_pdus
from cluster_iac.spec import ClusterSpec


# Records without generated __eq__/__repr__ (eq=False, repr=False): see plan/model.py.
@dataclass(eq=False, repr=False)
class _Stack:
    """Free space of one rack: the next unit from the bottom and from the top."""

    bottom: int
    top: int
    needed: int = 0
    taken: set[int] = field(default_factory=set)  # units the lock holds
    unplaced: list[tuple[str, int]] = field(default_factory=list)  # (device, U) with no room

    def free(self, unit: int, height: int) -> bool:
        return not self.taken or self.taken.isdisjoint(range(unit, unit + height))


def place_devices(spec: ClusterSpec, plan: Plan) -> Plan:
    """Placements in spec order; a rack whose devices exceed its height is a located error.
    Power and weight limits are checks (checks/facility.py), so every rack is reported.
    A device the lock places keeps its rack and units (a switch its rack too); the others
    take the free units the stacking order gives them."""
    racks = {r.name: r for r in plan.racks}
    stacks, placements, switches, problems = _stacked(plan, {})
    short = {name: stack.needed for name, stack in stacks.items()
             if stack.needed > racks[name].height_u}
    if short and not plan.lock.exists:
        # stacked again as if the short racks were tall enough: the units above the top are
        # nobody's twice, so cables and labels stay unique while the error is reported
        _, placements, switches, problems = _stacked(plan, short)
    overflow = [
        Diagnostic("SPEC-RACK-HEIGHT",
                   f"rack {name} needs {stack.needed} U for its devices but is "
                   f"{racks[name].height_u} U high", (*racks[name].spec_path, "height_u"),
                   details={"measured": stack.needed, "limit": racks[name].height_u, "unit": "U"})
        for name, stack in stacks.items() if stack.needed > racks[name].height_u
    ]
    problems += [
        Diagnostic("SPEC-RACK-HEIGHT",
                   f"rack {name} has no free {height} U for {device}: the lock holds the "
                   f"units of its other devices (and of retired ones until they are freed)",
                   (*racks[name].spec_path, "height_u"),
                   hint="free retired units with '--reallocate retired', or place the device "
                        "in another rack")
        for name, stack in stacks.items() if stack.needed <= racks[name].height_u
        for device, height in stack.unplaced[:1]
    ]
    if problems or (overflow and plan.lock.exists):  # a lock leaves overflow unplaced
        raise CompileError(problems + overflow)
    # Without a lock every device got units (past the top where the rack is short): what does
    # not depend on the units (power, cooling, the fabric) is still compiled and checked.
    return replace(plan, placements=placements, switches=tuple(switches),
                   deferred=(*plan.deferred, *overflow))


def _stacked(plan: Plan, tops: dict[str, int],
             ) -> tuple[dict[str, _Stack], dict[str, Placement], list[Switch], list[Diagnostic]]:
    """Every device stacked in its rack (``tops``: a rack's top unit in place of its
    height): the stacks, placements, switches (their locked racks) and the lock's conflicts."""
    stacks = {r.name: _Stack(bottom=1, top=tops.get(r.name, r.height_u)) for r in plan.racks}
    placements: dict[str, Placement] = {}
    shelves = power_shelves(plan)
    shelf_u = plan.catalog.power_shelves[DEFAULT_SHELF].height_u
    switches, problems = list(plan.switches), list[Diagnostic]()
    if plan.lock.exists:
        switches, problems = _locked(plan, stacks, placements, shelves, shelf_u)
    laid = set[str]()  # devices at their layout's slots (or locked where they are)
    for rack, slots in rack_slots(plan, shelves, shelf_u, switches).items():
        laid |= _laid_out(stacks[rack], placements, rack, slots)
    # Other racks with shelves put them at both ends, around the trays (half bottom, half top).
    spare = {rack: [n for n in names if n not in laid] for rack, names in shelves.items()}
    for rack, names in spare.items():
        for name in names[:len(names) // 2]:
            _bottom_up(stacks[rack], placements, name, rack, shelf_u)
    heights = {name: nt.height_u for name, nt in plan.node_types.items()}
    for node in plan.nodes:
        if node.hostname not in laid:
            _bottom_up(stacks[node.rack], placements, node.hostname, node.rack,
                       heights[node.node_type])
    for rack, names in spare.items():
        for name in names[len(names) // 2:]:
            _top_down(stacks[rack], placements, name, rack, shelf_u)
    for switch in sorted(switches, key=_band):
        if switch.rack not in stacks or switch.name in laid:  # a rack the spec removed: a
            continue  # conflict above
        _top_down(stacks[switch.rack], placements, switch.name, switch.rack, switch.height_u)
    for rack, pdus in rack_pdus(plan).items():  # vertical PDUs: 0U at the rear (one record
        placements.update(dict.fromkeys(pdus, Placement(rack, 0, 0)))  # for a rack's PDUs)
    return stacks, placements, switches, problems


def _laid_out(stack: _Stack, placements: dict[str, Placement], rack: str,
              slots: list[Slot]) -> set[str]:
    """Each slot's device at the slot; an empty slot reserved for the rack's own part. A
    device the lock places keeps its units; one whose slot the lock gives to another device,
    like a device the layout has no slot for, is left to the stacking. Returns the devices
    placed (or kept) here."""
    laid = set[str]()
    for unit, height, device in slots:
        units = range(unit, unit + height)
        if device is not None and device in placements:  # locked: counted where it is
            stack.needed += placements[device].height_u
            laid.add(device)
        elif stack.free(unit, height):
            stack.needed += height
            stack.taken.update(units)
            if device is not None:
                placements[device] = Placement(rack, unit, height)
                laid.add(device)
    return laid


def _locked(plan: Plan, stacks: dict[str, _Stack], placements: dict[str, Placement],
            shelves: dict[str, list[str]], shelf_u: int,
            ) -> tuple[list[Switch], list[Diagnostic]]:
    """Place what the lock records first, and reserve the units of retired devices; returns
    the switches with their locked racks and the conflicts, each at its lock line."""
    lock = plan.lock
    racks = {r.name: r for r in plan.racks}
    heights = {n.hostname: (plan.node_types[n.node_type].height_u, n.rack) for n in plan.nodes}
    heights.update((s.name, (s.height_u, s.rack)) for s in plan.switches)
    heights.update((name, (shelf_u, rack)) for rack, names in shelves.items() for name in names)
    problems: list[Diagnostic] = []
    owner: dict[str, list[str | None]] = {}  # rack -> the device at each U (index: the U)
    for entry in lock.of_kind("place", ""):
        device = entry.key[2]
        rack, unit, height = entry.value
        current = heights.get(device)
        if current is not None:
            height = current[0]
        if rack not in racks:
            if current is not None:
                problems.append(lock.error(entry, "LOCK-CONFLICT", f"{device} is locked in "
                                           f"rack {rack}, which the spec no longer has",
                                           lock.way_out(device)))
            continue
        top = unit + height - 1
        if top > racks[rack].height_u:
            problems.append(lock.error(entry, "LOCK-CONFLICT", f"{device} at {rack} U{unit} "
                                       f"is {height} U high and would reach U{top}, above the "
                                       f"rack's {racks[rack].height_u} U", lock.way_out(device)))
            continue
        units = owner.setdefault(rack, [None] * (racks[rack].height_u + 1))
        clash = next(filter(None, units[unit:top + 1]), None)
        if clash is not None:
            problems.append(lock.error(entry, "LOCK-CONFLICT", f"{device} at {rack} "
                                       f"U{unit}-U{top} ({height} U) overlaps {clash}",
                                       lock.way_out(device)))
            continue
        units[unit:top + 1] = [device] * height
        stacks[rack].taken.update(range(unit, top + 1))
        if current is not None:
            placements[device] = Placement(rack, unit, height)
    switches = [s if s.name not in placements or placements[s.name].rack == s.rack
                else s._replace(rack=placements[s.name].rack) for s in plan.switches]
    return switches, problems


# Top-down order of switch tiers; leaves of a second fabric after the first fabric's.
BANDS = {"nvswitch-tray": 0, "access": 1, "aggregation": 2, "core": 2, "spine": 2, "leaf": 3}


def _band(switch: Switch) -> int:
    band = BANDS.get(switch.tier, 2)
    return band + 1 if band == 3 and switch.network == "storage" else band


def _bottom_up(stack: _Stack, placements: dict[str, Placement], name: str, rack: str,
               height: int) -> None:
    """The lowest free units from the bottom (a locked device keeps its own)."""
    stack.needed += height
    if name in placements:
        return
    while stack.bottom + height - 1 <= stack.top and not stack.free(stack.bottom, height):
        stack.bottom += 1
    if stack.taken and stack.bottom + height - 1 > stack.top:
        stack.unplaced.append((name, height))
        return
    placements[name] = Placement(rack, stack.bottom, height)
    stack.bottom += height


def _top_down(stack: _Stack, placements: dict[str, Placement], name: str, rack: str,
              height: int) -> None:
    """The highest free units from the top (a locked device keeps its own)."""
    stack.needed += height
    if name in placements:
        return
    while stack.top - height + 1 >= stack.bottom and not stack.free(stack.top - height + 1,
                                                                      height):
        stack.top -= 1
    if stack.taken and stack.top - height + 1 < stack.bottom:
        stack.unplaced.append((name, height))
        return
    stack.top -= height
    placements[name] = Placement(rack, stack.top + 1, height)
