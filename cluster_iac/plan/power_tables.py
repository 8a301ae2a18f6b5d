"""The power chain as flat tables: feeds, PDUs, circuits, their lines, cords, and outages.

The power pass (compile/build_power.py) plans them once; the checks, the facility tables,
report.md, cabling, NetBox and monitoring read these rows and never re-derive them. The chain
is the one NetBox models: power panel -> power feed -> PDU inlet (power port) -> outlets
(each on its inlet and feed leg) -> PSU (power port with its allocated and maximum draw).

Rows are named tuples: immutable like the rest of the plan, and made at tuple speed (a
100,000-GPU plan has some 160,000 of them). Failure cases are named the same way in every
table: 'normal'; 'PDU <pdu> down' (its feed or
the row panel on that side failed: for one rack the three are the same case, see
plan/power_flow.py); '<device> PSU<n> failed'.
"""

from __future__ import annotations

from typing import NamedTuple

from cluster_iac.base.errors import SpecPath

NORMAL = "normal"


class PowerDevice(NamedTuple):
    """A racked part of the power chain: a rack PDU (one per feed side) or a power shelf."""

    name: str
    kind: str  # 'pdu' | 'power-shelf'
    rack: str
    model: str  # PDU profile name, or the power shelf's catalog key
    side: str  # feed side of a PDU ('A', 'B', 'C'); '' for power shelves


class PowerCord(NamedTuple):
    """One PSU's cord: from a PDU outlet (on a circuit and a line) to a device's power inlet.

    The physical layer's power table: the power pass plans it once; checks and every emitter
    (facility, cabling, NetBox) read these rows and never re-derive them.
    """

    rack: str
    pdu: str  # PDU device name, e.g. 'r01-pdu-a'
    circuit: str  # breaker/circuit of that PDU, e.g. 'CB1'
    line: str  # 'L1' | 'L2' | 'L3' (wye or single phase) or 'L1-L2' ... (delta line pair)
    outlet: int  # outlet number on the PDU, 1-based
    device: str  # node, switch or power shelf the cord feeds
    psu: int  # PSU (power inlet) number on the device, 1-based
    rating_w: float  # output rating of that PSU, W
    inlet: str = ""  # the PDU's power inlet the outlet draws from (NetBox power_port)
    feed_leg: str = ""  # NetBox feed leg of the outlet: 'A' | 'B' | 'C'; '' on a line pair
    allocated_w: float = 0.0  # what the PSU draws in normal operation, W (NetBox allocated_draw)
    maximum_w: float = 0.0  # the most it draws in any single-failure case, W (maximum_draw)
    maximum_case: str = NORMAL  # the case that gives maximum_w


class PowerFeed(NamedTuple):
    """One feed: the whip from a breaker of the row's panel (one panel per row and side) to
    one PDU's inlet. Every PDU has its own feed; a panel feeds that side of every rack."""

    name: str  # 'r01-feed-a'
    panel: str  # 'a-panel-a'
    row: str
    rack: str
    side: str  # 'A' | 'B' | 'C'
    pdu: str  # the PDU it feeds
    inlet: str  # that PDU's power inlet
    wiring: str  # 'wye' | 'delta' | 'single-phase'
    voltage_v: float  # line-to-line on three-phase feeds
    phases: int
    amperage_a: float  # the panel breaker (= PDU inlet rating), A
    limit_a: float  # its continuous current (amperage x 100 % or the policy's %)
    checked: bool  # True when the spec states the inlet rating (pdu_profiles.*.inlet_a)
    lines: tuple[str, ...]  # ('L1', 'L2', 'L3') or ('L1',)
    normal_a: tuple[float, ...]  # each line's current in normal operation
    worst_a: tuple[float, ...]  # each line's current in its worst case
    worst_case: tuple[str, ...]  # that case per line
    load_w: float  # real power, normal operation
    spec_path: SpecPath


class PowerCircuit(NamedTuple):
    """A PDU branch circuit (one breaker) with its limits and its real power for people."""

    rack: str
    pdu: str
    side: str
    feed: str
    name: str  # 'CB1'
    wiring: str  # 'wye' | 'delta' | 'single-phase'
    voltage_v: float  # line-to-line on three-phase circuits
    cord_v: float  # what a cord sees: V_LL / sqrt 3 (wye), V_LL (delta), V (single phase)
    phases: int
    breaker_a: float
    rated_100_percent: bool
    power_factor: float
    continuous_percent: float  # 100 when rated_100_percent, else the policy's
    limit_a: float  # each line's continuous current: breaker_a x continuous_percent
    capacity_w: float  # real power at the full rating, balanced (kW figure for people)
    limit_w: float  # capacity_w x continuous_percent
    devices: tuple[str, ...]
    outlets: tuple[int, ...]
    load_w: float  # normal operation
    worst_w: float  # the most real power in any single-failure case
    worst_w_case: str
    spec_path: SpecPath

    @property
    def circuit(self) -> str:
        """A unique id for the circuit: '<pdu>:<name>'."""
        return f"{self.pdu}:{self.name}"

    @property
    def percent(self) -> float:
        return 100 * self.load_w / self.limit_w


class PowerLine(NamedTuple):
    """One line (phase conductor) of a circuit: the cords on it and its current in each case.

    On a wye or single-phase circuit the outlets are those wired to this line; on a delta
    circuit, those on the two line pairs that draw through it (``slots`` says which).
    """

    rack: str
    pdu: str
    circuit: str  # 'CB1'
    line: str  # 'L1' | 'L2' | 'L3'
    limit_a: float
    outlets: tuple[int, ...]
    slots: tuple[str, ...]  # line or line pair of each outlet
    devices: tuple[str, ...]
    normal_a: float
    cases: tuple[tuple[str, float], ...]  # (case, amps): normal, each partner PDU down, the
    # worst single PSU failure for this line
    worst_a: float
    worst_case: str
    psus: tuple[str, ...] = ()  # 'device:PSUn' on each outlet, in ``outlets`` order

    @property
    def percent(self) -> float:
        return 100 * self.worst_a / self.limit_a


class PduLoad(NamedTuple):
    """A rack PDU's worst case: its real power (for people) and its worst line (the verdict)."""

    rack: str
    pdu: str
    side: str
    layout: str
    feed: str
    load_w: float  # normal operation
    worst_w: float  # the most real power in any single-failure case
    worst_w_case: str
    limit_w: float  # sum of its circuits' continuous limits
    circuit: str  # the circuit of the worst line ('CB1')
    line: str
    worst_a: float
    limit_a: float
    worst_case: str

    @property
    def percent(self) -> float:
        return 100 * self.worst_a / self.limit_a


class PowerOutage(NamedTuple):
    """A device that goes down in a single-failure case although it has spare PSUs (too few
    stay live), or a busbar whose live power shelves cannot carry its trays."""

    rack: str
    device: str
    kind: str  # 'node' | 'switch' | 'power-shelf' | 'busbar'
    case: str
    live_psus: int  # PSUs (or shelves for a busbar) still fed
    required: int  # PSUs (shelves) it needs
    psus: int  # PSUs (shelves) it has
    draw_w: float  # what it must draw (the busbar's trays for a busbar)
    capacity_w: float  # what the live PSUs (shelves) can deliver
