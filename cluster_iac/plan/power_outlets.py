"""Cords on outlets: each device's cords on one PDU to that PDU's least-loaded circuit, each
cord to the line whose worst case stays lowest and to the lowest free outlet wired to it
(the lock's pinned cords first); and how a PDU profile's outlets are wired to its circuits
and lines (outlet_lines, NetBox's feed legs). plan/power_flow.py calls place_cords."""

from __future__ import annotations

from collections import deque

from cluster_iac.plan import electrical
from cluster_iac.plan.rack_flow import NO_PINS, Circuitry, CordFlow, Pins


def place_cords(c: Circuitry, cords: list[CordFlow], case_loads: list[list[float]],
                pins: Pins | None = None) -> dict[int, int]:
    """Each device's cords on one PDU to that PDU's least-loaded circuit with free outlets,
    then each cord to the line (line pair) of that circuit whose worst case stays lowest, then
    to the lowest free outlet wired to that line. Devices in rack order, so a device added
    to a rack leaves the cords before it where they are. Pinned cords take their own outlets
    first, and reserved outlets are given to none."""
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

