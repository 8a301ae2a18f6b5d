"""One rack's power flow: the PDU, circuit, line and outlet of every PSU cord, and the line
currents of every circuit and feed in normal operation and in every single failure.

The solver sees devices without names, so identical racks (the same devices in the same
order on the same PDU profile) share one solution; the power pass names it per rack.

Single-failure cases of a rack:
- **A PDU down.** Each PDU has its own feed, a whip from the row's panel of its side (A, B or
  C). A PDU failure, its feed's failure and its panel's failure leave this rack in the same
  state: that PDU dark. A panel failure darkens that side of every rack of the row at once, but
  racks share no circuit, so each rack's lines see exactly their own 'PDU down' case. (What a
  panel itself can carry is the row budget, rows[].max_power_kw.)
- **A side's panel down**, with several PDUs a side (pdus_per_side): all of that side's PDUs
  dark at once, a case of its own beside each PDU down (a device with PSUs on two PDUs of a
  side loses both).
- **One PSU failed**: the device's other PSUs share its draw. Only one case per distinct
  PDU, circuit and line of the failed PSU is computed (the others give the same currents).
- A tripped branch breaker is not a case of its own: a device's cords on one PDU share one
  circuit, so a trip drops, for every device on that circuit, a subset of the PSUs that the
  PDU-down case drops, and the others' currents stay at or below that case's.
A device's draw is shared equally by its live PSUs (N+M supplies share current); with fewer
live PSUs than it requires it is down and draws nothing in that case (an outage, reported as
POWER-PSU-FAILOVER when the device has spare PSUs). The PSU counts and the number required are
the vendor's (catalog platforms.yaml, each with its source: DGX H100 6 x 3.3 kW, 4 required).
Equal sharing assumes active current sharing. A supply set to cold standby (an option of
some redundant PSUs) carries nothing until needed, so its partners' lines carry more in normal
operation than computed here; with a PDU down, when every live PSU is needed, it is the same.
Power shelves share their busbar's trays equally among the live shelves; a busbar whose live
shelves cannot carry it is an outage too.

The solver's records are plan/rack_flow.py's; plan/power_outlets.py puts the cords on outlets.
"""

from __future__ import annotations

from functools import cached_property

from cluster_iac.plan import electrical
from cluster_iac.plan.power_outlets import place_cords
from cluster_iac.plan.rack_flow import (
    NO_PINS,
    NORMAL,
    SHELF,
    Case,
    CircuitFlow,
    Circuitry,
    Consumer,
    CordFlow,
    FeedFlow,
    LineFlow,
    Outage,
    Pins,
    RackFlow,
)


def solve(consumers: tuple[Consumer, ...], circuitry: Circuitry, busbar_w: float,
          every_case: bool = False, pins: Pins | None = None) -> RackFlow:
    """Plan the rack's cords and compute every line current in every case. A failed PSU
    changes only its device's cords, so from the second such case on only the circuits and
    feeds that carry them are computed again (Flow.currents); ``every_case`` computes every
    circuit in every case, the reference the tests hold that shortcut to. A pinned cord
    keeps its PDU and outlet (and so its circuit and line); the others are planned around
    them."""
    pins = pins or NO_PINS
    cords = _psu_pdus(consumers, circuitry)
    if pins.cords:
        first: dict[int, int] = {}
        for n, cord in enumerate(cords):
            first.setdefault(cord.device, n)
        for device, psu, pdu, _ in pins.cords:
            cords[first[device] + psu].pdu = pdu
    flow = Flow(consumers, circuitry, busbar_w, cords)
    sides = circuitry.pdus // circuitry.per_side
    rack_cases = [NORMAL] + ([("pdu", k) for k in range(circuitry.pdus)]
                             if circuitry.pdus > 1 else []) \
        + ([("side", s) for s in range(sides)] if circuitry.per_side > 1 and sides > 1 else [])
    case_loads = {case: flow.loads(case) for case in rack_cases}
    for i, cord in enumerate(cords):
        cord.allocated_w = case_loads[NORMAL][i]
    needed = place_cords(flow.circuitry, cords, [case_loads[c] for c in rack_cases], pins)
    cases = rack_cases + _psu_cases(consumers, cords, flow.first)
    return flow.currents(cases, case_loads, needed, every_case)


def _psu_pdus(consumers: tuple[Consumer, ...], c: Circuitry) -> list[CordFlow]:
    """PSUs round-robin over the sides (A, B, A, ... or A, B, C, ...), continuing from device
    to device so one-PSU devices alternate too; a power shelf's PSUs all go to one PDU (its
    rectifiers share one AC input group) and shelves alternate. With several PDUs a side, a
    side's cords (a shelf's as one) take its PDUs in turn, A1, A2, A1, ..."""
    cords = []
    cursor = 0
    sides = c.pdus // c.per_side
    taken = [0] * sides  # cords (shelves) each side has given out
    for d, consumer in enumerate(consumers):
        shelf = consumer.kind == SHELF
        for j in range(consumer.psus):
            side = (cursor + (0 if shelf else j)) % sides
            cords.append(CordFlow(d, j, side * c.per_side + taken[side] % c.per_side))
            if not shelf:
                taken[side] += 1
        if shelf and consumer.psus:
            taken[cursor % sides] += 1
        cursor += 1 if shelf else consumer.psus
    return cords


def _psu_cases(consumers: tuple[Consumer, ...], cords: list[CordFlow],
               first: list[int]) -> list[Case]:
    """One failed PSU per device and distinct (PDU, circuit, line) of its cords."""
    cases: list[Case] = []
    for d, consumer in enumerate(consumers):
        seen = set()
        for j in range(consumer.psus):
            cord = cords[first[d] + j]
            where = (cord.pdu, cord.circuit, cord.slot)
            if where not in seen:
                seen.add(where)
                cases.append(("psu", d, j))
    return cases


class Flow:
    """Loads per case and the currents they make."""

    def __init__(self, consumers: tuple[Consumer, ...], circuitry: Circuitry, busbar_w: float,
                 cords: list[CordFlow]) -> None:
        self.consumers = consumers
        self.circuitry = circuitry
        self.busbar_w = busbar_w
        self.cords = cords
        self.first = []
        start = 0
        for consumer in consumers:
            self.first.append(start)
            start += consumer.psus
        self.shelves = [d for d, c in enumerate(consumers) if c.kind == SHELF]
        self.outages: list[Outage] = []

    def loads(self, case: Case) -> list[float]:
        """Watts on every cord in this case; records the outages it causes."""
        failed = self._failed(case)
        loads = [0.0] * len(self.cords)
        live_of: list[list[int]] = []
        for d, consumer in enumerate(self.consumers):
            start = self.first[d]
            live_of.append([i for i in range(start, start + consumer.psus) if i not in failed])
        up = [len(live) >= c.psu_required for live, c in zip(live_of, self.consumers,
                                                             strict=True)]
        draw = [c.max_power_w for c in self.consumers]
        self._shelf_draws(case, up, draw)
        for d, consumer in enumerate(self.consumers):
            live = live_of[d]
            if not up[d] or not live:
                if consumer.kind != SHELF and consumer.psus > consumer.psu_required:
                    self._outage(case, d, len(live), consumer)
                continue
            share = draw[d] / len(live)
            for i in live:
                loads[i] = share
        return loads

    def _failed(self, case: Case) -> set[int]:
        if case[0] in ("pdu", "side"):
            dark = self.circuitry.dark
            return {i for i, cord in enumerate(self.cords) if dark(case, cord.pdu)}
        if case[0] == "psu":
            return {self.first[int(case[1])] + int(case[2])}  # type: ignore[call-overload]
        return set()

    def _shelf_draws(self, case: Case, up: list[bool], draw: list[float]) -> None:
        """Live shelves share the busbar; if they cannot carry it, the trays go down."""
        if not self.shelves:
            return
        live = [d for d in self.shelves if up[d]]
        capacity = sum(self.consumers[d].max_power_w for d in live)
        if self.busbar_w > capacity + 1e-9:
            first = self.consumers[self.shelves[0]]
            self.outages.append(Outage(case, -1, len(live), -(-int(self.busbar_w) //
                                       int(first.max_power_w)), len(self.shelves),
                                       self.busbar_w, capacity))
            live = []
        for d in self.shelves:
            up[d] = d in live
            draw[d] = self.busbar_w / len(live) if live else 0.0

    def _outage(self, case: Case, d: int, live: int, consumer: Consumer) -> None:
        capacity = live * consumer.psu_rating_w
        self.outages.append(Outage(case, d, live, consumer.psu_required, consumer.psus,
                                   consumer.max_power_w, capacity))

    def currents(self, cases: list[Case], case_loads: dict[Case, list[float]],
                 needed: dict[int, int], every_case: bool = False) -> RackFlow:
        """Every circuit's and feed's line currents in every case; each cord's maximum.

        A failed PSU's case changes the loads of its device's cords only (without power
        shelves, whose busbar share moves with any shelf). A circuit without them has its
        normal currents: its worst figures stay, and its lines' failed-PSU entry (the
        largest so far) changes only while that entry is below normal operation. So from
        the second such case on only the circuits that carry the device's cords, or whose
        lines' entry is below normal ('behind'), and the feeds of changed circuits are
        computed: the same figures and the same first case of each, in a fraction of the
        time (a rack of 20 switches has some 40 such cases)."""
        c = self.circuitry
        circuits = [_circuit_flow(k, n, self.cords, c) for k in range(c.pdus)
                    for n in range(c.circuits)]
        feeds = [FeedFlow(k) for k in range(c.pdus)]
        shortcut = not every_case and not self.shelves
        normal: list[list[float]] = []
        behind: list[bool] = []
        for case in cases:
            if shortcut and behind and case[0] == "psu":
                self._record_psu(case, case_loads[NORMAL], normal, circuits, feeds, behind)
                continue
            loads = case_loads[case] if case in case_loads else self.loads(case)
            slot_w = self._record(case, loads, circuits, feeds)
            if case == NORMAL:
                normal = slot_w
            elif case[0] == "psu":  # the first: every line has its failed-PSU entry now
                behind = [_behind(flow) for flow in circuits]
        return RackFlow(self.consumers, self.cords, circuits, feeds, self.outages, needed)

    def _record_psu(self, case: Case, normal_loads: list[float], normal: list[list[float]],
                    circuits: list[CircuitFlow], feeds: list[FeedFlow],
                    behind: list[bool]) -> None:
        """_record for a failed PSU's case (currents' shortcut): its device's cords, the
        circuits that carry them or are behind, the feeds of the changed circuits."""
        c = self.circuitry
        watts = self._device_loads(case)
        changed: set[int] = set()
        for i, w in watts.items():
            cord = self.cords[i]
            if cord.outlet:
                changed.add(cord.pdu * c.circuits + cord.circuit)
            if w > cord.maximum_w + 1e-9:
                cord.maximum_w, cord.maximum_case = w, case
        slot_w = list(normal)  # the unchanged circuits' slot powers are normal operation's
        nslots = len(c.slots)
        for k in changed:  # summed again in cord order, as _record sums them
            row = [0.0] * nslots
            for i, slot in self.on_circuit[k]:
                row[slot] += watts[i] if i in watts else normal_loads[i]
            slot_w[k] = row
        for k, flow in enumerate(circuits):
            if k in changed or behind[k]:
                _record_circuit(flow, case, slot_w[k], c)
                behind[k] = _behind(flow)
        for feed in feeds:
            start = feed.pdu * c.circuits
            if not changed.isdisjoint(range(start, start + c.circuits)):
                totals = [sum(col) for col in zip(*slot_w[start:start + c.circuits],
                                                  strict=True)]
                _record_feed(feed, case, totals, c)

    def _device_loads(self, case: Case) -> dict[int, float]:
        """Watts on the cords of a failed PSU's device (loads, for that device alone: the
        others draw as in normal operation); records the outage it causes."""
        d, failed = int(case[1]), self.first[int(case[1])] + int(case[2])  # type: ignore[call-overload]
        consumer = self.consumers[d]
        mine = range(self.first[d], self.first[d] + consumer.psus)
        live = [i for i in mine if i != failed]
        watts = dict.fromkeys(mine, 0.0)
        if len(live) >= consumer.psu_required and live:
            share = consumer.max_power_w / len(live)
            for i in live:
                watts[i] = share
        elif consumer.kind != SHELF and consumer.psus > consumer.psu_required:
            self._outage(case, d, len(live), consumer)
        return watts

    @cached_property
    def on_circuit(self) -> list[list[tuple[int, int]]]:
        """Each circuit's cords with an outlet, (cord, slot) in cord order."""
        c = self.circuitry
        found: list[list[tuple[int, int]]] = [[] for _ in range(c.pdus * c.circuits)]
        for i, cord in enumerate(self.cords):
            if cord.outlet:
                found[cord.pdu * c.circuits + cord.circuit].append((i, cord.slot))
        return found

    def _record(self, case: Case, loads: list[float], circuits: list[CircuitFlow],
                feeds: list[FeedFlow]) -> list[list[float]]:
        c = self.circuitry
        nslots = len(c.slots)
        slot_w = [[0.0] * nslots for _ in circuits]
        for cord, watts in zip(self.cords, loads, strict=True):
            if cord.outlet:
                slot_w[cord.pdu * c.circuits + cord.circuit][cord.slot] += watts
            if watts > cord.maximum_w + 1e-9:
                cord.maximum_w, cord.maximum_case = watts, case
        for flow, slots in zip(circuits, slot_w, strict=True):
            if not c.dark(case, flow.pdu):
                _record_circuit(flow, case, slots, c)
        for feed in feeds:
            if not c.dark(case, feed.pdu):
                start = feed.pdu * c.circuits
                totals = [sum(col) for col in zip(*slot_w[start:start + c.circuits],
                                                  strict=True)]
                _record_feed(feed, case, totals, c)
        return slot_w


def _behind(flow: CircuitFlow) -> bool:
    """Whether a line's failed-PSU entry (its last) is below its normal current: a case
    that leaves the circuit as in normal operation would then take the entry's place."""
    return any(line.normal_a > line.cases[-1][1] + 1e-9 for line in flow.lines)


def _circuit_flow(pdu: int, index: int, cords: list[CordFlow], c: Circuitry) -> CircuitFlow:
    mine = sorted((cord for cord in cords if cord.pdu == pdu and cord.circuit == index
                   and cord.outlet), key=lambda cord: cord.outlet)
    lines = []
    for n, line in enumerate(c.lines):
        on = [cord for cord in mine if line in electrical.slot_lines(c.slots[cord.slot])]
        lines.append(LineFlow(n, tuple(cord.outlet for cord in on),
                              tuple(cord.slot for cord in on),
                              tuple(dict.fromkeys(cord.device for cord in on))))
    return CircuitFlow(pdu, index, tuple(dict.fromkeys(cord.device for cord in mine)),
                       tuple(cord.outlet for cord in mine), lines)


def _record_circuit(flow: CircuitFlow, case: Case, slot_w: list[float], c: Circuitry) -> None:
    total = sum(slot_w)
    amps = electrical.line_currents(slot_w, c.volts, c.phases, c.power_factor)
    if case == NORMAL:
        flow.load_w = flow.worst_w = total
    elif total > flow.worst_w + 1e-9:
        flow.worst_w, flow.worst_w_case = total, case
    for line in flow.lines:
        current = amps[line.line]
        if case == NORMAL:
            line.normal_a = line.worst_a = current
            line.cases.append((case, current))
            continue
        if case[0] == "pdu":
            line.cases.append((case, current))
        elif len(line.cases) and line.cases[-1][0][0] == "psu":
            if current > line.cases[-1][1] + 1e-9:
                line.cases[-1] = (case, current)
        else:
            line.cases.append((case, current))
        if current > line.worst_a + 1e-9:
            line.worst_a, line.worst_case = current, case


def _record_feed(feed: FeedFlow, case: Case, slot_w: list[float], c: Circuitry) -> None:
    amps = electrical.line_currents(slot_w, c.volts, c.phases, c.power_factor)
    total = sum(slot_w)
    if case == NORMAL:
        feed.load_w = feed.worst_w = total
        feed.normal_a = amps
        feed.worst_a = list(amps)
        feed.worst_case = [NORMAL] * len(amps)
        return
    if total > feed.worst_w + 1e-9:
        feed.worst_w, feed.worst_w_case = total, case
    for n, current in enumerate(amps):
        if current > feed.worst_a[n] + 1e-9:
            feed.worst_a[n], feed.worst_case[n] = current, case


