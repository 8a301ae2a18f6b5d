"""One rack's power flow as named table rows (the solver's plan is nameless and shared by
identical racks; this gives it the rack's PDU, feed, panel and device names)."""

from __future__ import annotations

from typing import Any

from cluster_iac.plan import electrical
from cluster_iac.plan.power import SIDES, feed_name, inlet_name, panel_name, pdu_name
from cluster_iac.plan.power_flow import Case, CircuitFlow, RackFlow
from cluster_iac.plan.power_tables import (
    NORMAL,
    PduLoad,
    PowerCircuit,
    PowerCord,
    PowerFeed,
    PowerLine,
    PowerOutage,
)


class RackNames:
    """Names of one rack's power parts, and its rows from a solved RackFlow."""

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
        self.slots = electrical.cord_slots(profile.voltage_v, profile.phases)
        self.lines_of = electrical.circuit_lines(profile.phases)
        self.wiring = electrical.wiring(profile.voltage_v, profile.phases)
        self.spec_path = ("power", "pdu_profiles", rack.pdu_profile)

    def case(self, case: Case) -> str:
        """'normal', 'PDU r01-pdu-a down' or 'gpu01 PSU3 failed'."""
        if case[0] == "pdu":
            return f"PDU {self.pdus[int(case[1])]} down"  # type: ignore[call-overload]
        if case[0] == "psu":
            device, psu = int(case[1]), int(case[2])  # type: ignore[call-overload]
            return f"{self.devices[device]} PSU{psu + 1} failed"
        return NORMAL

    def cords(self, flow: RackFlow) -> list[PowerCord]:
        rack = self.rack.name
        return [PowerCord(
            rack, self.pdus[c.pdu], f"CB{c.circuit + 1}", self.slots[c.slot], c.outlet,
            self.devices[c.device], c.psu + 1, flow.consumers[c.device].psu_rating_w,
            inlet_name(self.pdus[c.pdu]), electrical.FEED_LEG.get(self.slots[c.slot], ""),
            c.allocated_w, c.maximum_w, self.case(c.maximum_case))
            for c in flow.cords if c.outlet]

    def circuits(self, flow: RackFlow) -> list[PowerCircuit]:
        p = self.profile
        capacity = electrical.circuit_capacity_w(p.voltage_v, p.phases, p.breaker_a,
                                                 p.power_factor)
        return [PowerCircuit(
            rack=self.rack.name, pdu=self.pdus[c.pdu], side=self.sides[c.pdu],
            feed=self.feed_names[c.pdu], name=f"CB{c.index + 1}", index=c.index,
            wiring=self.wiring, voltage_v=p.voltage_v,
            cord_v=electrical.cord_volts(p.voltage_v, p.phases), phases=p.phases,
            breaker_a=p.breaker_a, rated_100_percent=p.rated_100_percent,
            power_factor=p.power_factor, continuous_percent=self.percent, limit_a=self.limit_a,
            capacity_w=capacity, limit_w=capacity * self.percent / 100,
            devices=tuple(self.devices[d] for d in c.devices), outlets=c.outlets,
            load_w=c.load_w, worst_w=c.worst_w, worst_w_case=self.case(c.worst_w_case),
            spec_path=self.spec_path) for c in flow.circuits]

    def lines(self, flow: RackFlow) -> list[PowerLine]:
        return [self._line(c, line) for c in flow.circuits for line in c.lines]

    def _line(self, c: CircuitFlow, line: Any) -> PowerLine:
        return PowerLine(
            rack=self.rack.name, pdu=self.pdus[c.pdu], circuit=f"CB{c.index + 1}",
            line=self.lines_of[line.line], limit_a=self.limit_a, outlets=line.outlets,
            slots=tuple(self.slots[s] for s in line.slots),
            devices=tuple(self.devices[d] for d in line.devices), normal_a=line.normal_a,
            cases=tuple((self.case(case), amps) for case, amps in line.cases),
            worst_a=line.worst_a, worst_case=self.case(line.worst_case))

    def feeds(self, flow: RackFlow) -> list[PowerFeed]:
        p = self.profile
        amperage = p.inlet_a if p.inlet_a is not None else p.breaker_a * p.circuits
        return [PowerFeed(
            name=self.feed_names[f.pdu], panel=self.panels[f.pdu], row=self.rack.row,
            rack=self.rack.name, side=self.sides[f.pdu], pdu=self.pdus[f.pdu],
            inlet=inlet_name(self.pdus[f.pdu]), wiring=self.wiring, voltage_v=p.voltage_v,
            phases=p.phases, amperage_a=amperage, limit_a=amperage * self.percent / 100,
            checked=p.inlet_a is not None, lines=self.lines_of, normal_a=f.normal_a,
            worst_a=tuple(f.worst_a), worst_case=tuple(self.case(c) for c in f.worst_case),
            load_w=f.load_w, spec_path=self.spec_path) for f in flow.feeds]

    def pdu_loads(self, flow: RackFlow, circuits: list[PowerCircuit],
                  lines: list[PowerLine]) -> list[PduLoad]:
        """Each PDU's real power (normal and worst) and its worst line (the verdict)."""
        found = []
        for k, pdu in enumerate(self.pdus):
            mine = [line for line in lines if line.pdu == pdu]
            worst = max(mine, key=lambda line: line.worst_a, default=None)
            feed = flow.feeds[k]
            found.append(PduLoad(
                rack=self.rack.name, pdu=pdu, side=self.sides[k], layout=self.profile.layout,
                feed=self.feed_names[k], load_w=feed.load_w, worst_w=feed.worst_w,
                worst_w_case=self.case(feed.worst_w_case),
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
            case=self.case(o.case), live_psus=o.live, required=o.required, psus=o.total,
            draw_w=o.draw_w, capacity_w=o.capacity_w) for o in flow.outages]
