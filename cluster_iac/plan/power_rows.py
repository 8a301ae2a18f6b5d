"""Racks' power flows as named table rows.

The solver's plan is nameless and shared by identical racks; its rows are laid out once per
solution (a RackTemplate, every name left as an index), and the racks that share it (a
RackGroup) fill in their PDU, feed, panel and device names column by column: a 3,000-rack
cluster formats each distinct rack once and makes each table row without a Python call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from itertools import chain, repeat
from operator import itemgetter
from typing import Any, TypeVar

from cluster_iac.plan import electrical
from cluster_iac.plan.power import (
    FEED_NAME,
    INLET,
    PANEL_NAME,
    PDU_NAME,
    SIDES,
    pdu_labels,
    pdu_sides,
    side_names,
)
from cluster_iac.plan.power_tables import (
    NORMAL,
    PduLoad,
    PowerCircuit,
    PowerCord,
    PowerDevice,
    PowerFeed,
    PowerLine,
    PowerOutage,
)
from cluster_iac.plan.rack_flow import Case, RackFlow

_new = tuple.__new__
"""A named tuple made of its fields' tuple, ``map(_new, repeat(Kind), rows)``: Kind._make
is a Python call per row (200,000 power rows, 35,000 devices at 100,000 GPUs)."""


class RackTemplate:
    """A solved rack's rows with PDUs, devices and cases as indexes, and the figures of its
    PDU profile (the same for every rack that shares the template)."""

    def __init__(self, flow: RackFlow, profile: Any, policy_percent: float) -> None:
        self.flow = flow
        self._profile(profile, policy_percent)
        self._cases(flow)
        self._cords(flow)
        index = {case: n for n, case in enumerate(self.cases)}
        # (PDU, outlet) -> (device, ':PSUn') of the PSU it feeds
        psu_on = {(c.pdu, c.outlet): (c.device, f":PSU{c.psu + 1}") for c in flow.cords}
        slots, lines = self.slots, electrical.circuit_lines(profile.phases)
        self.lines = [
            (c.pdu, f"CB{c.index + 1}", lines[line.line], line.outlets,
             tuple(slots[s] for s in line.slots), line.devices, line.normal_a,
             tuple(index[case] for case, _ in line.cases),
             tuple(amps for _, amps in line.cases), line.worst_a, index[line.worst_case],
             tuple(psu_on[c.pdu, outlet] for outlet in line.outlets))
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
        table): per cord, its PDU, device and case as indexes and the fields every rack of
        the template shares."""
        slots = self.slots
        index = {case: n for n, case in enumerate(self.cases)}
        placed = sorted((c for c in flow.cords if c.outlet), key=lambda c: (c.pdu, c.outlet))
        self.cord_slots = [
            (c.pdu, c.device, index[c.maximum_case], f"CB{c.circuit + 1}", slots[c.slot],
             c.outlet, c.psu + 1, flow.consumers[c.device].psu_rating_w,
             electrical.FEED_LEG.get(slots[c.slot], ""), c.allocated_w, c.maximum_w)
            for c in placed]
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


class RackGroup:
    """The racks that share one template: the names of their power parts column by column
    (one list over the racks per PDU, feed, panel, device or case) and their rows. Each row
    of the template is made for every rack of the group at once, with map and zip."""

    def __init__(self, racks: list[Any], profile: Any, devices: list[tuple[str, ...]],
                 template: RackTemplate) -> None:
        self.template = template
        self.racks = [r.name for r in racks]
        self.rows = [r.row for r in racks]
        self.profile = racks[0].pdu_profile
        self.sides = pdu_sides(profile)  # each PDU's side, in PDU order
        labels = pdu_labels(profile)
        self.pdus = [side_names(PDU_NAME, self.racks, label) for label in labels]
        self.feed_names = [side_names(FEED_NAME, self.racks, label) for label in labels]
        self.panels = [side_names(PANEL_NAME, self.rows, side) for side in self.sides]
        # each side's panel (a case of its own with several PDUs a side)
        self.side_panels = [side_names(PANEL_NAME, self.rows, side)
                            for side in SIDES[profile.layout]]
        self.spec_path = ("power", "pdu_profiles", self.profile)
        self.devices = list(zip(*devices, strict=True))  # device d of each rack
        self.named = _CaseNames(self)

    def case(self, case: Case) -> list[str]:
        """'normal', 'PDU r01-pdu-a down', 'panel a-panel-a down' (all of a side's PDUs, with
        several a side) or 'gpu01 PSU3 failed', in each rack."""
        if case[0] == "side":
            side = int(case[1])  # type: ignore[call-overload]
            return list(map("panel {} down".format, self.side_panels[side]))
        if case[0] == "pdu":
            pdu = int(case[1])  # type: ignore[call-overload]
            return list(map("PDU {} down".format, self.pdus[pdu]))
        if case[0] == "psu":
            device, psu = int(case[1]), int(case[2])  # type: ignore[call-overload]
            return list(map(f"{{}} PSU{psu + 1} failed".format, self.devices[device]))
        return [NORMAL] * len(self.racks)

    def _on(self, devices: tuple[int, ...]) -> Iterator[tuple[str, ...]]:
        """Each rack's names of these devices."""
        if not devices:
            return repeat(())
        return zip(*map(self.devices.__getitem__, devices), strict=True)

    def _cases(self, cases: tuple[int, ...], amps: tuple[float, ...],
               ) -> Iterator[tuple[tuple[str, float], ...]]:
        """Each rack's (case, amps) pairs."""
        if not cases:
            return repeat(())
        return zip(*(zip(self.named[c], repeat(a)) for c, a in zip(cases, amps, strict=True)),
                   strict=True)

    def devices_by_rack(self) -> Iterator[tuple[PowerDevice, ...]]:
        """Each rack's PDUs, by side."""
        return zip(*(map(_new, repeat(PowerDevice), zip(pdus, repeat("pdu"), self.racks,
                                                repeat(self.profile), repeat(side)))
                     for side, pdus in zip(self.sides, self.pdus, strict=True)), strict=True)

    def cord_runs(self) -> Iterator[tuple[str, tuple[PowerCord, ...]]]:
        """(PDU, its cords by outlet) of every rack and PDU of the group."""
        t, named = self.template, self.named
        slots = [list(map(_new, repeat(PowerCord), zip(
            self.racks, self.pdus[pdu], repeat(circuit), repeat(line), repeat(outlet),
            self.devices[device], repeat(psu), repeat(rating), repeat(INLET), repeat(leg),
            repeat(allocated), repeat(maximum), named[case])))
            for pdu, device, case, circuit, line, outlet, psu, rating, leg, allocated, maximum
            in t.cord_slots]
        return chain.from_iterable(
            zip(self.pdus[t.cord_slots[start][0]], zip(*slots[start:end], strict=True),
                strict=True)
            for start, end in t.cord_runs)

    def circuits(self) -> list[list[PowerCircuit]]:
        fixed = tuple(map(repeat, self.template.circuit_fixed))
        return [list(map(_new, repeat(PowerCircuit), zip(
            self.racks, self.pdus[p], repeat(self.sides[p]), self.feed_names[p], repeat(name),
            *fixed, self._on(on), repeat(outlets), repeat(load), repeat(worst),
            self.named[case], repeat(self.spec_path))))
            for p, name, on, outlets, load, worst, case in self.template.circuits]

    def lines(self) -> list[list[PowerLine]]:
        t, named = self.template, self.named
        return [list(map(_new, repeat(PowerLine), zip(
            self.racks, self.pdus[p], repeat(cb), repeat(line), repeat(t.limit_a),
            repeat(outlets), repeat(slots), self._on(on), repeat(normal),
            self._cases(cases, amps), repeat(worst), named[case], self._psus(psus))))
            for p, cb, line, outlets, slots, on, normal, cases, amps, worst, case, psus
            in t.lines]

    def _psus(self, psus: tuple[tuple[int, str], ...]) -> Iterator[tuple[str, ...]]:
        """Each rack's 'device:PSUn' labels of these (device, ':PSUn')."""
        if not psus:
            return repeat(())
        return zip(*(map(str.__add__, self.devices[device], repeat(suffix))
                     for device, suffix in psus), strict=True)

    def feeds(self) -> list[list[PowerFeed]]:
        fixed = tuple(map(repeat, self.template.feed_fixed))
        named = self.named
        return [list(map(_new, repeat(PowerFeed), zip(
            self.feed_names[k], self.panels[k], self.rows, self.racks, repeat(self.sides[k]),
            self.pdus[k], repeat(INLET), *fixed, repeat(normal), repeat(worst),
            zip(*map(named.__getitem__, cases), strict=True) if cases else repeat(()),
            repeat(load), repeat(self.spec_path))))
            for k, normal, worst, cases, load in self.template.feeds]

    def pdu_loads(self) -> list[list[PduLoad]]:
        """Each PDU's real power (normal and worst) and its worst line (the verdict)."""
        t, named = self.template, self.named
        return [list(map(_new, repeat(PduLoad), zip(
            self.racks, self.pdus[k], repeat(self.sides[k]), repeat(t.layout),
            self.feed_names[k], repeat(load), repeat(worst_w), named[w_case], repeat(limit_w),
            repeat(circuit), repeat(line), repeat(worst_a), repeat(t.limit_a),
            named[case] if case is not None else repeat(NORMAL))))
            for k, (load, worst_w, w_case, limit_w, circuit, line, worst_a, case)
            in enumerate(t.pdus)]

    def outages(self) -> list[list[PowerOutage]]:
        flow, named = self.template.flow, self.named
        index = {case: n for n, case in enumerate(self.template.cases)}
        return [list(map(_new, repeat(PowerOutage), zip(
            self.racks, self.devices[o.device] if o.device >= 0
            else map("{}-busbar".format, self.racks),
            repeat(flow.consumers[o.device].kind if o.device >= 0 else "busbar"),
            named[index[o.case]], repeat(o.live), repeat(o.required), repeat(o.total),
            repeat(o.draw_w), repeat(o.capacity_w))))
            for o in flow.outages]


class _CaseNames(dict[int, list[str]]):
    """Case index -> its name in each rack of the group (RackGroup.case), each made when
    first asked: only the cases a table row cites are named (a DGX rack has some 30 cases,
    3,125 racks of them at 100,000 GPUs)."""

    def __init__(self, group: RackGroup) -> None:
        super().__init__()
        self.group = group

    def __missing__(self, index: int) -> list[str]:
        names = self[index] = self.group.case(self.group.template.cases[index])
        return names


Row = TypeVar("Row")


def cord_table(groups: list[RackGroup]) -> tuple[PowerCord, ...]:
    """Every PSU cord (plan.power_cords), by PDU then outlet."""
    runs = list(chain.from_iterable(group.cord_runs() for group in groups))
    # Each PDU's cords are one run, in outlet order: sorting the runs by PDU name orders the
    # table by (pdu, outlet) without a key per cord.
    runs.sort(key=itemgetter(0))
    return tuple(chain.from_iterable(map(itemgetter(1), runs)))


Groups = list[tuple[list[int], RackGroup]]  # (its racks' indexes in the plan, the group)
Table = Callable[[RackGroup], list[list[Row]]]  # one list over the group's racks per row


def rack_table(racks: int, groups: Groups, table: Table[Row]) -> tuple[Row, ...]:
    """A table of every rack group (``table``: RackGroup.lines, circuits, feeds, pdu_loads
    or outages), rack by rack in plan order, each rack's rows in its template's order."""
    by_rack: list[tuple[Row, ...]] = [()] * racks
    for members, group in groups:
        rows = table(group)
        if rows:
            for n, mine in zip(members, zip(*rows, strict=True), strict=True):
                by_rack[n] = mine
    return tuple(chain.from_iterable(by_rack))
