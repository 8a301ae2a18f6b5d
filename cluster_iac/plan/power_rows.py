"""One rack's power flow as named table rows.

The solver's plan is nameless and shared by identical racks; its rows are laid out once per
solution (a RackTemplate, every name left as an index) and each rack fills in its own PDU,
feed, panel and device names, so a 3,000-rack cluster formats each distinct rack once.
"""

from __future__ import annotations

from functools import partial
from itertools import repeat
from typing import Any

from cluster_iac.plan import electrical
from cluster_iac.plan.power import INLET, SIDES, feed_name, panel_name, pdu_name
from cluster_iac.plan.power_flow import Case, RackFlow
from cluster_iac.plan.power_tables import (
    NORMAL,
    PduLoad,
    PowerCircuit,
    PowerCord,
    PowerFeed,
    PowerLine,
    PowerOutage,
)

# Rows made whole with tuple.__new__ (no keyword parsing per row); a rack's cords from the
# template's columns with map and zip, no Python call per row.
_new_cord = partial(tuple.__new__, PowerCord)
_new_line = partial(tuple.__new__, PowerLine)
_new_circuit = partial(tuple.__new__, PowerCircuit)
_new_feed = partial(tuple.__new__, PowerFeed)
_new_pdu = partial(tuple.__new__, PduLoad)
# The fields of a cord that are the same in every rack sharing a template, in PowerCord order.
_CORD_FIXED = ("circuit", "line", "outlet", "psu", "rating_w", "feed_leg", "allocated_w",
               "maximum_w")


class RackTemplate:
    """A solved rack's rows with PDUs, devices and cases as indexes, and the figures of its
    PDU profile (the same for every rack that shares the template)."""

    def __init__(self, flow: RackFlow, profile: Any, policy_percent: float) -> None:
        self.flow = flow
        self._profile(profile, policy_percent)
        self._cases(flow)
        self._cords(flow)
        index = {case: n for n, case in enumerate(self.cases)}
        slots, lines = self.slots, electrical.circuit_lines(profile.phases)
        self.lines = [
            (c.pdu, f"CB{c.index + 1}", lines[line.line], line.outlets,
             tuple(slots[s] for s in line.slots), line.devices, line.normal_a,
             tuple(index[case] for case, _ in line.cases),
             tuple(amps for _, amps in line.cases), line.worst_a, index[line.worst_case])
            for c in flow.circuits for line in c.lines]
        self.circuits = [(c.pdu, f"CB{c.index + 1}", c.devices, c.outlets, c.load_w, c.worst_w,
                          index[c.worst_w_case]) for c in flow.circuits]
        self.feeds = [(f.pdu, f.normal_a, tuple(f.worst_a),
                       tuple(index[case] for case in f.worst_case), f.load_w)
                      for f in flow.feeds]
        self.pdus = [self._pdu(k, index) for k in range(len(flow.feeds))]

    def _profile(self, p: Any, policy_percent: float) -> None:
        self.slots = electrical.cord_slots(p.voltage_v, p.phases)
        percent = electrical.continuous_percent(p.rated_100_percent, policy_percent)
        self.limit_a = p.breaker_a * percent / 100
        capacity = electrical.circuit_capacity_w(p.voltage_v, p.phases, p.breaker_a,
                                                 p.power_factor)
        wiring = electrical.wiring(p.voltage_v, p.phases)
        # PowerCircuit's fields from wiring to limit_w
        self.circuit_fixed = (wiring, p.voltage_v, electrical.cord_volts(p.voltage_v, p.phases),
                              p.phases, p.breaker_a, p.rated_100_percent, p.power_factor,
                              percent, self.limit_a, capacity, capacity * percent / 100)
        # a PDU's circuits together, summed as the circuits' rows would be
        self.limit_w = sum([capacity * percent / 100] * p.circuits)
        amperage = p.inlet_a if p.inlet_a is not None else p.breaker_a * p.circuits
        # PowerFeed's fields from wiring to lines
        self.feed_fixed = (wiring, p.voltage_v, p.phases, amperage, amperage * percent / 100,
                           p.inlet_a is not None, electrical.circuit_lines(p.phases))
        self.layout = p.layout

    def _cases(self, flow: RackFlow) -> None:
        cases = {c.maximum_case for c in flow.cords}
        cases.update(case for c in flow.circuits for line in c.lines for case, _ in line.cases)
        cases.update(c.worst_w_case for c in flow.circuits)
        cases.update(case for f in flow.feeds for case in (f.worst_w_case, *f.worst_case))
        cases.update(o.case for o in flow.outages)
        self.cases = sorted(cases, key=repr)

    def _cords(self, flow: RackFlow) -> None:
        """The cords by PDU, then outlet (each PDU's cords are one run of the power_cords
        table), as columns."""
        slots = self.slots
        placed = sorted((c for c in flow.cords if c.outlet), key=lambda c: (c.pdu, c.outlet))
        fixed = [(f"CB{c.circuit + 1}", slots[c.slot], c.outlet, c.psu + 1,
                  flow.consumers[c.device].psu_rating_w,
                  electrical.FEED_LEG.get(slots[c.slot], ""), c.allocated_w, c.maximum_w)
                 for c in placed]
        columns = list(zip(*fixed, strict=True)) if fixed else [() for _ in _CORD_FIXED]
        self.cord_columns = dict(zip(_CORD_FIXED, columns, strict=True))
        self.cord_pdu = tuple(c.pdu for c in placed)
        self.cord_device = tuple(c.device for c in placed)
        index = {case: n for n, case in enumerate(self.cases)}
        self.cord_case = tuple(index[c.maximum_case] for c in placed)
        bounds = [n for n in range(1, len(placed)) if placed[n].pdu != placed[n - 1].pdu]
        self.cord_runs = (list(zip([0, *bounds], [*bounds, len(placed)], strict=True))
                          if placed else [])  # (start, end) of each PDU's run

    def _pdu(self, k: int, index: dict[Case, int]) -> tuple[Any, ...]:
        """PDU k's figures: its feed's real power and its worst line (the first of the
        busiest; lines are in circuit, line order), or none for a PDU with no cords."""
        feed = self.flow.feeds[k]
        mine = [row for row in self.lines if row[0] == k]
        worst = max(mine, key=lambda row: row[9]) if mine else None
        line = (worst[1], worst[2], worst[9], worst[10]) if worst else ("", "", 0.0,
                                                                         index.get(("normal",)))
        return (feed.load_w, feed.worst_w, index[feed.worst_w_case], self.limit_w, *line)


class RackNames:
    """Names of one rack's power parts, and its rows from a solved rack's template."""

    def __init__(self, rack: Any, profile: Any, devices: tuple[str, ...]) -> None:
        self.rack = rack
        self.devices = devices
        self.sides = SIDES[profile.layout]
        self.pdus = [pdu_name(rack.name, side) for side in self.sides]
        self.feed_names = [feed_name(rack.name, side) for side in self.sides]
        self.panels = [panel_name(rack.row, side) for side in self.sides]
        self.spec_path = ("power", "pdu_profiles", rack.pdu_profile)
        self.named: list[str] = []

    def case(self, case: Case) -> str:
        """'normal', 'PDU r01-pdu-a down' or 'gpu01 PSU3 failed'."""
        if case[0] == "pdu":
            return f"PDU {self.pdus[int(case[1])]} down"  # type: ignore[call-overload]
        if case[0] == "psu":
            device, psu = int(case[1]), int(case[2])  # type: ignore[call-overload]
            return f"{self.devices[device]} PSU{psu + 1} failed"
        return NORMAL

    def rows(self, template: RackTemplate) -> tuple[list[Any], ...]:
        """(cords, circuits, lines, feeds, PDU loads, outages) of this rack."""
        self.named = list(map(self.case, template.cases))
        return (self.cords(template), self.circuits(template), self.lines(template),
                self.feeds(template), self.pdu_loads(template), self.outages(template))

    def cords(self, template: RackTemplate) -> list[PowerCord]:
        """This rack's cords, by PDU and outlet: the template's columns with its names."""
        t, fixed = template, template.cord_columns
        return list(map(_new_cord, zip(
            repeat(self.rack.name), map(self.pdus.__getitem__, t.cord_pdu), fixed["circuit"],
            fixed["line"], fixed["outlet"], map(self.devices.__getitem__, t.cord_device),
            fixed["psu"], fixed["rating_w"], repeat(INLET), fixed["feed_leg"],
            fixed["allocated_w"], fixed["maximum_w"],
            map(self.named.__getitem__, t.cord_case))))

    def circuits(self, template: RackTemplate) -> list[PowerCircuit]:
        rack, pdus, sides, feeds = self.rack.name, self.pdus, self.sides, self.feed_names
        device, named, fixed = self.devices.__getitem__, self.named, template.circuit_fixed
        return [_new_circuit((rack, pdus[p], sides[p], feeds[p], name, *fixed,
                              tuple(map(device, on)), outlets, load, worst, named[case],
                              self.spec_path))
                for p, name, on, outlets, load, worst, case in template.circuits]

    def lines(self, template: RackTemplate) -> list[PowerLine]:
        rack, pdus, named = self.rack.name, self.pdus, self.named
        device, case_name = self.devices.__getitem__, named.__getitem__
        limit = template.limit_a
        return [_new_line((rack, pdus[p], cb, line, limit, outlets, slots,
                           tuple(map(device, on)), normal,
                           tuple(zip(map(case_name, cases), amps, strict=True)), worst,
                           named[case]))
                for p, cb, line, outlets, slots, on, normal, cases, amps, worst, case
                in template.lines]

    def feeds(self, template: RackTemplate) -> list[PowerFeed]:
        rack, row, named, fixed = self.rack.name, self.rack.row, self.named, template.feed_fixed
        return [_new_feed((self.feed_names[k], self.panels[k], row, rack, self.sides[k],
                           self.pdus[k], INLET, *fixed, normal, worst,
                           tuple(map(named.__getitem__, cases)), load, self.spec_path))
                for k, normal, worst, cases, load in template.feeds]

    def pdu_loads(self, template: RackTemplate) -> list[PduLoad]:
        """Each PDU's real power (normal and worst) and its worst line (the verdict)."""
        rack, named, layout = self.rack.name, self.named, template.layout
        limit_a = template.limit_a
        return [_new_pdu((rack, self.pdus[k], self.sides[k], layout, self.feed_names[k], load,
                          worst_w, named[w_case], limit_w, circuit, line, worst_a, limit_a,
                          named[case] if case is not None else NORMAL))
                for k, (load, worst_w, w_case, limit_w, circuit, line, worst_a, case)
                in enumerate(template.pdus)]

    def outages(self, template: RackTemplate) -> list[PowerOutage]:
        flow, index = template.flow, {case: n for n, case in enumerate(template.cases)}
        return [PowerOutage(
            rack=self.rack.name,
            device=self.devices[o.device] if o.device >= 0 else f"{self.rack.name}-busbar",
            kind=flow.consumers[o.device].kind if o.device >= 0 else "busbar",
            case=self.named[index[o.case]], live_psus=o.live, required=o.required,
            psus=o.total, draw_w=o.draw_w, capacity_w=o.capacity_w) for o in flow.outages]
