"""Rows, racks, power distribution and cooling."""

# Annotations as written, not strings: see cluster_iac/spec/__init__.py.

from typing import Literal

from pydantic import Field

from cluster_iac.spec.base import SpecModel
from cluster_iac.spec.limits import (
    CduCount,
    CircuitCount,
    CurrentA,
    FacilityKw,
    FlowLpm,
    OutletCount,
    PumpCount,
    RackKw,
    VoltageV,
    WeightKg,
)
from cluster_iac.spec.strings import HostlistExpr, Name


class RackGroup(SpecModel):
    """Racks that share a height, limits, cooling and PDU profile."""

    names: HostlistExpr
    """Rack names as a hostlist, e.g. 'a[01-08]'."""
    height_u: int = Field(default=42, ge=1, le=60)
    """Usable rack units (racks are at most about 58U; EIA-310 racks are 42-52U)."""
    max_power_kw: RackKw | None = None
    """Power the facility can deliver to one rack, kW."""
    max_weight_kg: WeightKg | None = None
    """Static load rating of the rack (or floor tile), kg."""
    cooling: Literal["air", "liquid"] = "air"
    """How heat leaves the rack: room air, or a liquid loop (rear-door or direct-to-chip).
    Platforms cooled by liquid only (GB200 NVL72 trays) need a liquid rack."""
    liquid_capacity_kw: RackKw | None = None
    """Heat the rack's own liquid connection (manifold, rear door) can remove, kW (liquid
    racks); the loop that feeds it is checked from cooling.loops."""
    in_rack_cdu: bool = False
    """The rack carries its own CDU (a rack-mounted coolant distribution unit with its own heat
    exchanger to room air or facility water), so its heat reaches the facility without a
    cooling.loops entry; its capacity is then liquid_capacity_kw. Without it, a liquid rack
    must be on one of the declared loops."""
    pdu: Name
    """PDU profile (power.pdu_profiles) that feeds these racks."""


class Row(SpecModel):
    """A row of racks."""

    name: Name
    """Row name."""
    racks: list[RackGroup] = Field(min_length=1)
    """Racks in the row, in floor order."""
    max_power_kw: FacilityKw | None = None
    """Power budget of the row (its busway or power panel), kW."""


class PduProfile(SpecModel):
    """How one rack is fed: PDUs, their circuits and breakers."""

    layout: Literal["single", "ab", "three"] = "ab"
    """'single': one PDU set, no redundancy; 'ab': A and B feeds (2N), either alone carries the
    rack; 'three': three PDUs per rack as in NVIDIA's DGX racks, any two carry the rack."""
    pdus_per_side: int = Field(default=1, ge=1, le=4)
    """PDUs on each side (feed) of the layout: 2 gives A1, A2, B1, B2 for 'ab', the usual way
    to feed a 40-60 kW rack. The rack's cords on a side are split over its PDUs (a device's
    PSUs alternate between them); each PDU has its own feed from the side's row panel, so one
    PDU down and the side's panel down (all its PDUs) are both single failures. PDUs are
    named <rack>-pdu-a1, -a2, ... (with 1, <rack>-pdu-a as before)."""
    circuits: CircuitCount = 1
    """Branch circuits (each with its own breaker) per PDU."""
    voltage_v: VoltageV = 415
    """Circuit voltage: line-to-line for three-phase, line-to-neutral for single-phase. The
    default is the IEC 60038 240/415 V system (3P+N+E, IEC 60309): cords at 415 / sqrt 3 =
    239.6 V; 380-415 V PDUs are wye, 208 V (North America) delta with cords line to line."""
    phases: Literal[1, 3] = 3
    """1 or 3 phases."""
    breaker_a: CurrentA = 32
    """Breaker rating of each circuit in amperes: each line (pole) is judged against it, in
    normal operation and every single failure."""
    rated_100_percent: bool = False
    """True when breaker and assembly are listed for 100 % continuous load
    (else 80 %, NEC 210.20(A))."""
    power_factor: float = Field(default=0.95, gt=0, le=1)
    """Power factor of the load: I = P / (V x PF). The default 0.95 is the floor the 80 PLUS
    program sets for 230 V internal redundant (server) PSUs at Platinum and Titanium; a
    measured higher PF (active PFC reaches 0.99) lowers the currents."""
    outlets: OutletCount = 24
    """Outlets per PDU, shared equally by its circuits (the first circuits take the remainder)."""
    outlet_wiring: Literal["alternating", "banked"] = "alternating"
    """How a circuit's outlets are wired to its lines (line pairs on a 208 V delta PDU):
    'alternating' cycles L1, L2, L3, L1, ... outlet by outlet, as most current three-phase rack
    PDUs do; 'banked' gives each line a consecutive group of the circuit's outlets. The power
    pass picks each cord's line, so this decides which outlet numbers it gets."""
    outlet_type: Literal["iec-60320-c13", "iec-60320-c19"] | None = None
    """The receptacle of every outlet (NetBox's PowerOutletTypeChoices slug): C13 (10 A) or
    C19 (16 A), as the PDU model has them. None (the default): NetBox's 'other', since the
    profile does not say it (the NetBox device type needs a type on each outlet)."""
    inlet_a: CurrentA | None = None
    """Rating of the PDU's inlet and of the panel breaker on its feed, A. When given, each line
    of the feed is checked in every case like a circuit (POWER-FEED); when not, the feed is
    taken as sized for all its circuits (breaker_a x circuits) and not checked on its own."""


class Power(SpecModel):
    """Power distribution."""

    pdu_profiles: dict[Name, PduProfile]
    """PDU profiles by name; racks refer to one."""
    facility_capacity_kw: FacilityKw | None = None
    """Total facility power available to the cluster (IT load x PUE), kW."""
    pue: float = Field(default=1.3, ge=1.0, le=3.0)
    """Power usage effectiveness used to turn IT load into facility load."""


class Pumps(SpecModel):
    """A loop's pumps (in its CDU) and their redundancy."""

    count: PumpCount = 2
    """Pumps installed."""
    required: PumpCount = 1
    """Pumps that deliver the loop's design flow; with ``count`` one more than this the loop
    is N+1 and keeps its flow with one pump down (a pump delivers flow / required)."""


class LiquidLoop(SpecModel):
    """A liquid cooling loop: a CDU's secondary loop to the cold plates or rear doors of its
    racks. The heat it carries is flow x density x c_p x (return - supply)."""

    name: Name
    """Loop name (the CDU's)."""
    racks: HostlistExpr
    """Racks the loop cools, as a hostlist; each must be a liquid rack."""
    coolant: Name = "water"
    """Catalog coolant (catalog.coolants): 'water' or 'pg25'."""
    flow_lpm: FlowLpm
    """Design flow of the loop with its required pumps running, litres per minute."""
    supply_c: float = Field(ge=0, le=80)
    """Coolant temperature into the racks, degrees C."""
    return_c: float = Field(ge=0, le=90)
    """Coolant temperature out of the racks at full heat, degrees C (above supply_c)."""
    cdu_capacity_kw: FacilityKw | None = None
    """Heat the CDU's heat exchanger moves to the facility water at these temperatures, kW
    (each CDU's, when ``cdus`` is more than one)."""
    cdus: CduCount = 1
    """CDUs serving the loop in parallel. With one, the CDU (its heat exchanger, controls and
    valves, whatever its pumps) is a single point of failure of every rack on the loop
    (SPOF-CDU); with more, the loop exchanges cdus x cdu_capacity_kw and keeps cooling with
    one down when the others carry its heat."""
    pumps: Pumps = Pumps()
    """The loop's pumps."""


class Cooling(SpecModel):
    """Facility cooling."""

    heat_rejection_kw: FacilityKw | None = None
    """Heat the facility (chillers, dry coolers) can reject, kW."""
    loops: list[LiquidLoop] = []
    """Liquid loops (CDUs) and the racks each cools."""
