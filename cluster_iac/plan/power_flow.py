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
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple

from cluster_iac.plan import electrical

Case = tuple[object, ...]  # ('normal',) | ('pdu', k) | ('psu', device, psu)
NORMAL: Case = ("normal",)
SHELF = "power-shelf"


class Consumer(NamedTuple):
    """A device with PSUs, as the solver sees it: no name, so identical racks share a plan
    (a named tuple: a rack's devices are a key of the power pass, hashed at C speed)."""

    kind: str  # 'node' | 'switch' | 'power-shelf'
    max_power_w: float  # a shelf's: its capacity (what it draws comes from its busbar)
    psus: int
    psu_rating_w: float
    psu_required: int


# Records without generated __eq__/__repr__ (eq=False, repr=False): see plan/model.py.
@dataclass(frozen=True, eq=False, repr=False)
class Circuitry:
    """What the solver needs of a PDU profile."""

    pdus: int
    circuits: int
    outlets: int
    banked: bool
    volts: float
    phases: int
    power_factor: float

    @property
    def slots(self) -> tuple[str, ...]:
        return electrical.cord_slots(self.volts, self.phases)

    @property
    def lines(self) -> tuple[str, ...]:
        return electrical.circuit_lines(self.phases)


@dataclass(eq=False, repr=False)
class CordFlow:
    device: int
    psu: int  # 0-based
    pdu: int
    circuit: int = -1
    slot: int = -1
    outlet: int = 0  # 0: no free outlet (the PDU is short of outlets)
    allocated_w: float = 0.0
    maximum_w: float = 0.0
    maximum_case: Case = NORMAL


@dataclass(eq=False, repr=False)
class LineFlow:
    line: int
    outlets: tuple[int, ...]
    slots: tuple[int, ...]
    devices: tuple[int, ...]
    normal_a: float = 0.0
    cases: list[tuple[Case, float]] = field(default_factory=list)
    worst_a: float = 0.0
    worst_case: Case = NORMAL


@dataclass(eq=False, repr=False)
class CircuitFlow:
    pdu: int
    index: int
    devices: tuple[int, ...] = ()
    outlets: tuple[int, ...] = ()
    lines: list[LineFlow] = field(default_factory=list)
    load_w: float = 0.0
    worst_w: float = 0.0
    worst_w_case: Case = NORMAL


@dataclass(eq=False, repr=False)
class FeedFlow:
    pdu: int
    load_w: float = 0.0
    worst_w: float = 0.0
    worst_w_case: Case = NORMAL
    normal_a: tuple[float, ...] = ()
    worst_a: list[float] = field(default_factory=list)
    worst_case: list[Case] = field(default_factory=list)


@dataclass(frozen=True, eq=False, repr=False)
class Outage:
    case: Case
    device: int  # -1: the busbar
    live: int
    required: int
    total: int
    draw_w: float
    capacity_w: float


@dataclass(eq=False, repr=False)
class RackFlow:
    consumers: tuple[Consumer, ...]
    cords: list[CordFlow]
    circuits: list[CircuitFlow]
    feeds: list[FeedFlow]
    outages: list[Outage]
    outlets_needed: dict[int, int]  # PDU -> cords it got (more than its outlets: an error)


class Pins(NamedTuple):
    """Outlets the lock holds in one rack (cluster_iac/lock/), by position, so identical
    racks with identical pins still share one solution: (device, PSU, PDU, outlet) of each
    pinned cord (device by its place in the rack's order, PSU and PDU from 0), and (PDU,
    outlet) of each outlet kept empty for a retired device."""

    cords: tuple[tuple[int, int, int, int], ...] = ()
    reserved: tuple[tuple[int, int], ...] = ()


NO_PINS = Pins()


def solve(consumers: tuple[Consumer, ...], circuitry: Circuitry, busbar_w: float,
          every_case: bool = False, pins: Pins | None = None) -> RackFlow:
    """Plan the rack's cords and compute every line current in every case. A failed PSU
    changes only its device's cords, so from the second such case on only the circuits and
    feeds that carry them are computed again (_Flow.currents); ``every_case`` computes every
    circuit in every case, the reference the tests hold that shortcut to. A pinned cord
    keeps its PDU and outlet (and so its circuit and line); the others are planned around
    them."""
    pins = pins or NO_PINS
    cords = _psu_pdus(consumers, circuitry.pdus)
    if pins.cords:
        first: dict[int, int] = {}
        for n, cord in enumerate(cords):
            first.setdefault(cord.device, n)
        for device, psu, pdu, _ in pins.cords:
            cords[first[device] + psu].pdu = pdu
    flow = _Flow(consumers, circuitry, busbar_w, cords)
    rack_cases = [NORMAL] + ([("pdu", k) for k in range(circuitry.pdus)]
                             if circuitry.pdus > 1 else [])
    case_loads = {case: flow.loads(case) for case in rack_cases}
    for i, cord in enumerate(cords):
        cord.allocated_w = case_loads[NORMAL][i]
    needed = _place_cords(flow, cords, [case_loads[c] for c in rack_cases], pins)
    cases = rack_cases + _psu_cases(consumers, cords, flow.first)
    return flow.currents(cases, case_loads, needed, every_case)


def _psu_pdus(consumers: tuple[Consumer, ...], pdus: int) -> list[CordFlow]:
    """PSUs round-robin over the PDUs (A, B, A, ... or A, B, C, ...), continuing from device to
    device so one-PSU devices alternate too; a power shelf's PSUs all go to one PDU (its
    rectifiers share one AC input group) and shelves alternate."""
    cords = []
    cursor = 0
    for d, consumer in enumerate(consumers):
        shelf = consumer.kind == SHELF
        for j in range(consumer.psus):
            cords.append(CordFlow(d, j, (cursor + (0 if shelf else j)) % pdus))
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


class _Flow:
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
        if case[0] == "pdu":
            return {i for i, cord in enumerate(self.cords) if cord.pdu == case[1]}
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
            if case[0] != "pdu" or case[1] != flow.pdu:
                _record_circuit(flow, case, slots, c)
        for feed in feeds:
            if case[0] != "pdu" or case[1] != feed.pdu:
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


def _place_cords(flow: _Flow, cords: list[CordFlow], case_loads: list[list[float]],
                 pins: Pins | None = None) -> dict[int, int]:
    """Each device's cords on one PDU to that PDU's least-loaded circuit with free outlets,
    then each cord to the line (line pair) of that circuit whose worst case stays lowest, then
    to the lowest free outlet wired to that line. Devices in rack order, so a device added
    to a rack leaves the cords before it where they are. Pinned cords take their own outlets
    first, and reserved outlets are given to none."""
    c = flow.circuitry
    free = [_outlet_bank(c, n) for _ in range(c.pdus) for n in range(c.circuits)]
    assigned_w = [0.0] * len(free)
    slot_cases = [[[0.0] * len(case_loads) for _ in c.slots] for _ in free]
    pdu_cases = [[[0.0] * len(case_loads) for _ in c.slots] for _ in range(c.pdus)]
    used = dict.fromkeys(range(c.pdus), 0)
    pinned = _take_pinned(c, cords, free, pins or NO_PINS)
    groups: dict[tuple[int, int], list[int]] = {}
    for i, cord in enumerate(cords):
        if i in pinned:
            circuit = pdu_circuit = cord.pdu * c.circuits + cord.circuit
            used[cord.pdu] += 1
            vector = [loads[i] for loads in case_loads]
            for k, watts in enumerate(vector):
                slot_cases[pdu_circuit][cord.slot][k] += watts
                pdu_cases[cord.pdu][cord.slot][k] += watts
            assigned_w[circuit] += cord.allocated_w
            continue
        groups.setdefault((cord.device, cord.pdu), []).append(i)
    for (_, pdu), members in groups.items():
        used[pdu] += len(members)
        circuit = -1
        for i in members:
            cord = cords[i]
            if circuit < 0 or not _free_count(free[circuit]):
                circuit = _pick_circuit(pdu, c.circuits, free, assigned_w, len(members))
            if circuit < 0:
                continue  # the PDU is out of outlets: SPEC-PDU-OUTLETS
            vector = [loads[i] for loads in case_loads]
            slot = _pick_slot(slot_cases[circuit], pdu_cases[pdu], free[circuit], vector)
            for k, watts in enumerate(vector):
                slot_cases[circuit][slot][k] += watts
                pdu_cases[pdu][slot][k] += watts
            assigned_w[circuit] += cord.allocated_w
            cord.circuit, cord.slot = circuit - pdu * c.circuits, slot
            cord.outlet = free[circuit][slot].popleft()
    return used


def _take_pinned(c: Circuitry, cords: list[CordFlow], free: list[list[deque[int]]],
                 pins: Pins) -> set[int]:
    """Pinned cords on their outlets (circuit and line from the outlet's wiring), those
    outlets and the reserved ones taken out of ``free``; the pinned cords' indexes. An
    outlet the profile does not have is left to the caller (build_power reports it)."""
    if not pins.cords and not pins.reserved:
        return set()
    where: dict[int, tuple[int, int]] = {}  # outlet -> (circuit, slot), the same on each PDU
    for n in range(c.circuits):
        for s, outlets in enumerate(free[n]):
            where.update(dict.fromkeys(outlets, (n, s)))
    first: dict[int, int] = {}
    for i, cord in enumerate(cords):
        first.setdefault(cord.device, i)
    taken: set[tuple[int, int]] = set(pins.reserved)
    pinned = set()
    for device, psu, pdu, outlet in pins.cords:
        if outlet not in where:
            continue
        i = first[device] + psu
        cord = cords[i]
        cord.circuit, cord.slot = where[outlet]
        cord.outlet = outlet
        taken.add((pdu, outlet))
        pinned.add(i)
    for pdu, outlet in taken:
        if outlet in where:
            n, s = where[outlet]
            bank = free[pdu * c.circuits + n][s]
            if outlet in bank:
                bank.remove(outlet)
    return pinned


def _pick_circuit(pdu: int, circuits: int, free: list[list[deque[int]]],
                  assigned_w: list[float], need: int) -> int:
    own = range(pdu * circuits, (pdu + 1) * circuits)
    for enough in (need, 1):
        fits = [n for n in own if _free_count(free[n]) >= enough]
        if fits:
            return min(fits, key=lambda n: (assigned_w[n], n))
    return -1


def _pick_slot(slot_cases: list[list[float]], pdu_cases: list[list[float]],
               free: list[deque[int]], vector: list[float]) -> int:
    """The line (pair) whose worst case stays lowest with this cord: on the circuit (its
    breaker), then on the whole PDU (its feed); then the lowest normal load, then the first."""
    def key(s: int) -> tuple[float, ...]:
        after = [w + v for w, v in zip(slot_cases[s], vector, strict=True)]
        whole = [w + v for w, v in zip(pdu_cases[s], vector, strict=True)]
        return (round(max(after), 6), round(max(whole), 6), round(after[0], 6),
                round(whole[0], 6), s)

    return min((s for s in range(len(free)) if free[s]), key=key)


def _free_count(bank: list[deque[int]]) -> int:
    return sum(len(outlets) for outlets in bank)


def _outlet_bank(c: Circuitry, n: int) -> list[deque[int]]:
    """Circuit n's outlets by the slot they are wired to: the PDU's outlets split equally over
    its circuits in order (the first circuits take the remainder), each bank's outlets
    alternating over the slots, or in consecutive groups per slot when banked."""
    base, extra = divmod(c.outlets, c.circuits)
    start = 1 + n * base + min(n, extra)
    size = base + (1 if n < extra else 0)
    slots = len(c.slots)
    bank: list[deque[int]] = [deque() for _ in range(slots)]
    group, spare = divmod(size, slots)
    bounds = [g * group + min(g, spare) for g in range(slots + 1)]
    for p in range(size):
        s = p % slots if not c.banked else max(g for g in range(slots) if bounds[g] <= p)
        bank[s].append(start + p)
    return bank


def outlet_lines(outlets: int, circuits: int, volts: float, phases: int,
                 banked: bool) -> list[tuple[int, str]]:
    """Every outlet of a PDU profile with the feed leg of the line it is wired to ('A', 'B',
    'C'; '' on a delta line pair), as the solver banks them: NetBox's outlet feed_leg."""
    c = Circuitry(1, circuits, outlets, banked, volts, phases, 1.0)
    found = [(outlet, electrical.FEED_LEG.get(c.slots[s], ""))
             for n in range(circuits) for s, bank in enumerate(_outlet_bank(c, n))
             for outlet in bank]
    return sorted(found)
