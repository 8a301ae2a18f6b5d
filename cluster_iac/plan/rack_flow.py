"""The records of one rack's power flow: what the solver (plan/power_flow.py) is given (the
devices as consumers, the PDU profile's circuitry, the outlets the lock pins) and what it
returns (each cord's PDU, circuit, line and outlet; each line's, circuit's and feed's
currents by case; the outages), which the power pass (compile/build_power.py) names per rack
and plan/power_rows.py turns into the plan's tables."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from cluster_iac.plan import electrical

Case = tuple[object, ...]  # ('normal',) | ('pdu', k) | ('side', s) | ('psu', device, psu)
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
    """What the solver needs of a PDU profile: ``pdus`` in all, ``per_side`` of them on each
    side (PDU k is on side k // per_side)."""

    pdus: int
    circuits: int
    outlets: int
    banked: bool
    volts: float
    phases: int
    power_factor: float
    per_side: int = 1

    def dark(self, case: Case, pdu: int) -> bool:
        """Whether PDU ``pdu`` is down in ``case`` (its own, or its side's panel)."""
        if case[0] == "pdu":
            return case[1] == pdu
        return case[0] == "side" and case[1] == pdu // self.per_side

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

