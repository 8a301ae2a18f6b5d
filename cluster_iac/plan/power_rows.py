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

# Rows made from a whole column set at C speed (tuple.__new__ over zip): a rack's names are
# filled into the template's columns with map, no Python call per row.
_new_cord = partial(tuple.__new__, PowerCord)
_new_line = partial(tuple.__new__, PowerLine)
# The fields of a cord that are the same in every rack sharing a template, in PowerCord order.
_CORD_FIXED = ("circuit", "line", "outlet", "psu", "rating_w", "feed_leg", "allocated_w",
               "maximum_w")


class RackTemplate:
    """A solved rack's rows with PDUs, devices and cases as indexes."""

    def __init__(self, flow: RackFlow, profile: Any) -> None:
        slots = electrical.cord_slots(profile.voltage_v, profile.phases)
        lines = electrical.circuit_lines(profile.phases)
        self.flow = flow
        # Cords by PDU, then outlet: each PDU's cords are one run of the power_cords table.
        placed = sorted((c for c in flow.cords if c.outlet), key=lambda c: (c.pdu, c.outlet))
        fixed = [(f"CB{c.circuit + 1}", slots[c.slot], c.outlet, c.psu + 1,
                  flow.consumers[c.device].psu_rating_w,
                  electrical.FEED_LEG.get(slots[c.slot], ""), c.allocated_w, c.maximum_w)
                 for c in placed]
        columns = list(zip(*fixed, strict=True)) if fixed else [() for _ in _CORD_FIXED]
        self.cord_columns = dict(zip(_CORD_FIXED, columns, strict=True))
        self.cord_pdu = tuple(c.pdu for c in placed)
        self.cord_device = tuple(c.device for c in placed)
        # (start, end) of each PDU's run of cords
        bounds = [n for n in range(1, len(placed)) if placed[n].pdu != placed[n - 1].pdu]
        self.cord_runs = (list(zip([0, *bounds], [*bounds, len(placed)], strict=True))
                          if placed else [])
        cases = {c.maximum_case for c in flow.cords}
        cases.update(case for c in flow.circuits for line in c.lines for case, _ in line.cases)
        cases.update(c.worst_w_case for c in flow.circuits)
        cases.update(case for f in flow.feeds for case in (f.worst_w_case, *f.worst_case))
        cases.update(o.case for o in flow.outages)
        self.cases = sorted(cases, key=repr)
        index = {case: n for n, case in enumerate(self.cases)}
        self.cord_case = tuple(index[c.maximum_case] for c in placed)
        self.lines = [
            (c.pdu, f"CB{c.index + 1}", lines[line.line], line.outlets,
             tuple(slots[s] for s in line.slots), line.devices, line.normal_a,
             tuple(index[case] for case, _ in line.cases),
             tuple(amps for _, amps in line.cases), line.worst_a, line.worst_case)
            for c in flow.circuits for line in c.lines]
        # Each PDU's worst line: the first of the busiest (rows are in circuit, line order).
        self.worst_line = []
        for k in range(len(flow.feeds)):
            mine = [n for n, row in enumerate(self.lines) if row[0] == k]
            self.worst_line.append(max(mine, key=lambda n: self.lines[n][9]) if mine else -1)


class RackNames:
    """Names of one rack's power parts, and its rows from a solved rack's template."""

    def __init__(self, rack: Any, profile: Any, devices: tuple[str, ...],
                 policy_percent: float) -> None:
        self.rack = rack
        self.profile = profile
        self.devices = devices
        self.sides = SIDES[profile.layout]
        self.pdus = [pdu_name(rack.name, side) for side in self.sides]
        self.feed_names = [feed_name(rack.name, side) for side in self.sides]
        self.panels = [panel_name(rack.row, side) for side in self.sides]
        self.percent = electrical.continuous_percent(profile.rated_100_percent, policy_percent)
        self.limit_a = profile.breaker_a * self.percent / 100
        self.lines_of = electrical.circuit_lines(profile.phases)
        self.wiring = electrical.wiring(profile.voltage_v, profile.phases)
        self.spec_path = ("power", "pdu_profiles", rack.pdu_profile)
        self.names: dict[Case, str] = {}

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
        self.names = {case: self.case(case) for case in template.cases}
        circuits = self.circuits(template.flow)
        lines = self.lines(template)
        return (self.cords(template), circuits, lines, self.feeds(template.flow),
                self.pdu_loads(template, circuits, lines), self.outages(template.flow))

    def cords(self, template: RackTemplate) -> list[PowerCord]:
        """This rack's cords, by PDU and outlet: the template's columns with its names."""
        t, fixed = template, template.cord_columns
        named = [self.names[case] for case in t.cases]
        return list(map(_new_cord, zip(
            repeat(self.rack.name), map(self.pdus.__getitem__, t.cord_pdu), fixed["circuit"],
            fixed["line"], fixed["outlet"], map(self.devices.__getitem__, t.cord_device),
            fixed["psu"], fixed["rating_w"], repeat(INLET), fixed["feed_leg"],
            fixed["allocated_w"], fixed["maximum_w"], map(named.__getitem__, t.cord_case))))

    def circuits(self, flow: RackFlow) -> list[PowerCircuit]:
        p = self.profile
        capacity = electrical.circuit_capacity_w(p.voltage_v, p.phases, p.breaker_a,
                                                 p.power_factor)
        cord_v = electrical.cord_volts(p.voltage_v, p.phases)
        return [PowerCircuit(
            rack=self.rack.name, pdu=self.pdus[c.pdu], side=self.sides[c.pdu],
            feed=self.feed_names[c.pdu], name=f"CB{c.index + 1}",
            wiring=self.wiring, voltage_v=p.voltage_v, cord_v=cord_v, phases=p.phases,
            breaker_a=p.breaker_a, rated_100_percent=p.rated_100_percent,
            power_factor=p.power_factor, continuous_percent=self.percent, limit_a=self.limit_a,
            capacity_w=capacity, limit_w=capacity * self.percent / 100,
            devices=tuple(self.devices[d] for d in c.devices), outlets=c.outlets,
            load_w=c.load_w, worst_w=c.worst_w, worst_w_case=self.names[c.worst_w_case],
            spec_path=self.spec_path) for c in flow.circuits]

    def lines(self, template: RackTemplate) -> list[PowerLine]:
        rack, pdus, devices, names = self.rack.name, self.pdus, self.devices, self.names
        named = [names[case] for case in template.cases]
        device, case_name = devices.__getitem__, named.__getitem__
        limit = self.limit_a
        return [_new_line((rack, pdus[p], cb, line, limit, outlets, slots,
                           tuple(map(device, on)), normal,
                           tuple(zip(map(case_name, cases), amps, strict=True)), worst,
                           names[case]))
                for p, cb, line, outlets, slots, on, normal, cases, amps, worst, case
                in template.lines]

    def feeds(self, flow: RackFlow) -> list[PowerFeed]:
        p = self.profile
        amperage = p.inlet_a if p.inlet_a is not None else p.breaker_a * p.circuits
        return [PowerFeed(
            name=self.feed_names[f.pdu], panel=self.panels[f.pdu], row=self.rack.row,
            rack=self.rack.name, side=self.sides[f.pdu], pdu=self.pdus[f.pdu], inlet=INLET,
            wiring=self.wiring, voltage_v=p.voltage_v, phases=p.phases, amperage_a=amperage,
            limit_a=amperage * self.percent / 100, checked=p.inlet_a is not None,
            lines=self.lines_of, normal_a=f.normal_a, worst_a=tuple(f.worst_a),
            worst_case=tuple(self.names[c] for c in f.worst_case), load_w=f.load_w,
            spec_path=self.spec_path) for f in flow.feeds]

    def pdu_loads(self, template: RackTemplate, circuits: list[PowerCircuit],
                  lines: list[PowerLine]) -> list[PduLoad]:
        """Each PDU's real power (normal and worst) and its worst line (the verdict)."""
        found = []
        for k, pdu in enumerate(self.pdus):
            n = template.worst_line[k]
            worst = lines[n] if n >= 0 else None
            feed = template.flow.feeds[k]
            found.append(PduLoad(
                rack=self.rack.name, pdu=pdu, side=self.sides[k], layout=self.profile.layout,
                feed=self.feed_names[k], load_w=feed.load_w, worst_w=feed.worst_w,
                worst_w_case=self.names[feed.worst_w_case],
                limit_w=sum(c.limit_w for c in circuits if c.pdu == pdu),
                circuit=worst.circuit if worst else "", line=worst.line if worst else "",
                worst_a=worst.worst_a if worst else 0.0, limit_a=self.limit_a,
                worst_case=worst.worst_case if worst else NORMAL))
        return found

    def outages(self, flow: RackFlow) -> list[PowerOutage]:
        return [PowerOutage(
            rack=self.rack.name,
            device=self.devices[o.device] if o.device >= 0 else f"{self.rack.name}-busbar",
            kind=flow.consumers[o.device].kind if o.device >= 0 else "busbar",
            case=self.names[o.case], live_psus=o.live, required=o.required, psus=o.total,
            draw_w=o.draw_w, capacity_w=o.capacity_w) for o in flow.outages]
