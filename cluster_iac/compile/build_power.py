"""The power chain as tables: feeds, PDUs, circuits and their lines, every cord with its line
and outlet, and every line current in normal operation and in each single failure."""

from __future__ import annotations

from dataclasses import replace
from itertools import chain
from operator import attrgetter
from typing import Any

from cluster_iac.base.errors import CompileError, Diagnostic
from cluster_iac.plan import Plan
from cluster_iac.plan.power import (
    DEFAULT_SHELF,
    SIDES,
    busbar_fed,
    pdu_labels,
    pdu_name,
    power_shelves,
    rack_pdus,
)
from cluster_iac.plan.power_flow import solve
from cluster_iac.plan.power_retired import unpowered
from cluster_iac.plan.power_rows import (
    Groups,
    RackGroup,
    RackTemplate,
    Table,
    cord_table,
    rack_table,
)
from cluster_iac.plan.power_tables import PowerDevice
from cluster_iac.plan.rack_flow import NO_PINS, Circuitry, Consumer, Pins, RackFlow
from cluster_iac.spec import ClusterSpec


def build_power(spec: ClusterSpec, plan: Plan) -> Plan:
    """Every rack's feeds, PDUs, circuits, lines and cords, with the currents on each (one
    solution per distinct rack: identical racks are solved once and named together)."""
    fed = busbar_fed(plan)
    shelves = power_shelves(plan, fed)
    names, consumers, busbar = _consumers_by_rack(plan, fed, shelves)
    racks = plan.racks
    pins, problems = (_pins(plan, names, consumers) if plan.lock.exists else ({}, []))
    if problems:
        raise CompileError(problems)
    groups: dict[tuple[Any, ...], list[int]] = {}  # identical racks, by index
    for n, rack in enumerate(racks):
        key = (rack.pdu_profile, consumers.get(rack.name, ()), busbar.get(rack.name, 0.0),
               pins.get(rack.name, NO_PINS))
        groups.setdefault(key, []).append(n)
    policy_percent = plan.settings.policy.breaker_continuous_percent
    profiles = plan.settings.power.pdu_profiles
    templates: list[RackTemplate] = [None] * len(racks)  # type: ignore[list-item]
    devices: list[tuple[PowerDevice, ...]] = [()] * len(racks)
    line_groups: Groups = []  # (its racks' indexes, the group)
    for (name, parts, busbar_w, rack_pins), members in groups.items():
        profile = profiles[name]
        template = RackTemplate(solve(parts, _circuitry(profile), busbar_w, pins=rack_pins),
                                profile, policy_percent)
        group = RackGroup([racks[n] for n in members], profile,
                          [names.get(racks[n].name, ()) for n in members], template)
        for n, racked in zip(members, group.devices_by_rack(), strict=True):
            templates[n], devices[n] = template, racked
        line_groups.append((members, group))
    problems = [d for rack, t in zip(racks, templates, strict=True)
                for d in _outlet_problems(rack, profiles[rack.pdu_profile], t.flow)]
    problems += unpowered(plan, names, templates)
    if problems:
        raise CompileError(problems)
    shelf_devices = [PowerDevice(s, "power-shelf", rack, DEFAULT_SHELF, "")
                     for rack, names_ in shelves.items() for s in names_]
    def table(rows: Table[Any]) -> tuple[Any, ...]:
        return rack_table(len(racks), line_groups, rows)

    return replace(
        plan, power_devices=tuple(sorted(chain(chain.from_iterable(devices), shelf_devices),
                                         key=attrgetter("name"))),
        power_cords=cord_table([group for _members, group in line_groups]),
        power_feeds=table(RackGroup.feeds),
        power_circuits=table(RackGroup.circuits),
        power_pdus=table(RackGroup.pdu_loads),
        power_lines=table(RackGroup.lines),
        power_outages=table(RackGroup.outages),
        rack_loads_w=_rack_loads(plan))


def _pins(plan: Plan, names: dict[str, tuple[str, ...]],
          consumers: dict[str, tuple[Consumer, ...]]) -> tuple[dict[str, Pins], list[Any]]:
    """Rack -> the outlets the lock holds there: each present device's cords (by its place in
    the rack's order) and the outlets of retired devices; an outlet the rack's PDUs do not
    have, or a PSU the device no longer has, is a conflict at its lock line."""
    lock = plan.lock
    profiles = plan.settings.power.pdu_profiles
    outlets = {r.name: profiles[r.pdu_profile].outlets for r in plan.racks}
    pdu_rack = {pdu: (rack, k) for rack, pdus in rack_pdus(plan).items()
                for k, pdu in enumerate(pdus)}
    # device -> its rack, its place in the rack's order and its number of PSUs
    place = {name: (rack, d, consumer.psus) for rack, devices in names.items()
             for d, (name, consumer) in enumerate(zip(devices, consumers[rack], strict=True))}
    psu_index = {f"PSU{n}": n - 1 for n in range(1, 100)}  # the lock's PSU names (PSU1-PSU99)
    cords: dict[str, list[tuple[int, int, int, int]]] = {}
    reserved: dict[str, list[tuple[int, int]]] = {}
    problems = []
    freed = lock.reallocated
    # the entries of each PSU's scope, as lock.of_kind_all gives them, less its per-entry step
    for scope in sorted(scope for kind, scope in lock.groups if kind == "outlet"):
        psu = psu_index[scope]
        for device, entry in lock.groups[("outlet", scope)].items():
            if device in freed:
                continue
            pdu, outlet = entry.value
            at = pdu_rack.get(pdu)
            where = place.get(device)
            if where is None:  # a retired device's outlet: kept empty
                if at is not None:
                    reserved.setdefault(at[0], []).append((at[1], outlet))
                continue
            home, d, psus = where
            if at is None or at[0] != home or outlet > outlets[home] or psu >= psus:
                why = (f"PDU {pdu} is not one of rack {home}'s" if at is None or at[0] != home
                       else f"its PDUs have {outlets[home]} outlets" if outlet > outlets[home]
                       else f"it has {psus} PSUs")
                problems.append(lock.error(entry, "LOCK-CONFLICT", f"{device} {scope} is "
                                           f"locked to {pdu} outlet {outlet}, but {why}",
                                           lock.way_out(device)))
                continue
            cords.setdefault(home, []).append((d, psu, at[1], outlet))
    pins = {rack: Pins(tuple(sorted(cords.get(rack, ()))),
                       tuple(sorted(set(reserved.get(rack, ())))))
            for rack in set(cords) | set(reserved)}
    return pins, problems


def _circuitry(profile: Any) -> Circuitry:
    return Circuitry(len(SIDES[profile.layout]) * profile.pdus_per_side, profile.circuits,
                     profile.outlets, profile.outlet_wiring == "banked", profile.voltage_v,
                     profile.phases, profile.power_factor, profile.pdus_per_side)


def _consumers_by_rack(plan: Plan, fed: dict[str, list[tuple[str, int]]],
                       shelves_by_rack: dict[str, list[str]],
                       ) -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[Consumer, ...]],
                                  dict[str, float]]:
    """Per rack, in order (nodes in spec order, the rack's switches, power shelves): device
    names, the devices as the solver sees them, and the load of the rack's busbar. Nodes
    first: their heavy cords pick lines while every outlet is free, the switches' light cords
    fill what is left (outlets are wired to lines, so the last cords have the least choice)."""
    # Busbar trays have no cords; a name given twice (CONSISTENCY-NAME-CLASH, an error of the
    # checks) is powered once, so its cords' cable ids stay unique until the check reports it.
    skip = {name for trays in fed.values() for name, _ in trays}
    names: dict[str, list[str]] = {}
    found: dict[str, list[Consumer]] = {}
    kinds: dict[object, Consumer] = {}  # node type, or a switch's power figures: made once
    for node in plan.nodes:
        name = node.hostname
        if name in skip:
            continue
        skip.add(name)
        consumer = kinds.get(node.node_type)
        if consumer is None:
            nt = plan.node_types[node.node_type]
            consumer = kinds[node.node_type] = Consumer("node", nt.max_power_w, nt.psu_count,
                                                 nt.psu_rating_w, nt.psu_required)
        if node.rack not in names:
            names[node.rack], found[node.rack] = [], []
        names[node.rack].append(name)
        found[node.rack].append(consumer)
    for sw in plan.switches:
        if sw.name in skip:
            continue
        skip.add(sw.name)
        key = (sw.max_power_w, sw.psu_count, sw.psu_required)
        consumer = kinds.get(key)
        if consumer is None:
            rating = -(-sw.max_power_w // sw.psu_required)  # each PSU carries its N share
            consumer = kinds[key] = Consumer("switch", sw.max_power_w, sw.psu_count, rating,
                                             sw.psu_required)
        if sw.rack not in names:
            names[sw.rack], found[sw.rack] = [], []
        names[sw.rack].append(sw.name)
        found[sw.rack].append(consumer)
    shelf = plan.catalog.power_shelves[DEFAULT_SHELF]
    shelf_consumer = Consumer("power-shelf", shelf.capacity_w, shelf.psus.count,
                              shelf.psus.rating_w, shelf.psus.required)
    for rack, shelves in shelves_by_rack.items():
        names.setdefault(rack, []).extend(shelves)
        found.setdefault(rack, []).extend([shelf_consumer] * len(shelves))
    busbar = {rack: float(sum(w for _, w in trays)) for rack, trays in fed.items()}
    return ({r: tuple(v) for r, v in names.items()}, {r: tuple(v) for r, v in found.items()},
            busbar)


def _rack_loads(plan: Plan) -> dict[str, float]:
    """Rack -> sum of its devices' maximum draw (nodes, switches, busbar trays; power shelves
    pass power through and add nothing). Equals the sum of its PDUs' normal loads."""
    loads = {r.name: 0.0 for r in plan.racks}
    for node in plan.nodes:
        loads[node.rack] += plan.node_types[node.node_type].max_power_w
    for sw in plan.switches:
        loads[sw.rack] += sw.max_power_w
    return loads


def _outlet_problems(rack: Any, profile: Any, flow: RackFlow) -> list[Diagnostic]:
    """A PDU with more cords than outlets is a located spec error."""
    over = [(k, used) for k, used in flow.outlets_needed.items() if used > profile.outlets]
    if not over:  # the labels are made only for a rack with a problem to name
        return []
    labels = pdu_labels(profile)
    return [Diagnostic(
        "SPEC-PDU-OUTLETS",
        f"rack {rack.name} PDU {pdu_name(rack.name, labels[k])} needs {used} outlets but profile "
        f"'{rack.pdu_profile}' gives {profile.outlets}",
        ("power", "pdu_profiles", rack.pdu_profile, "outlets"),
        hint=f"outlets: {used} or more in profile '{rack.pdu_profile}' where its PDUs have "
             f"them, or fewer devices in rack {rack.name} (another rack in the group's racks)",
        details={"measured": used, "limit": profile.outlets})
        for k, used in over]

