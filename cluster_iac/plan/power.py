"""Power-chain names, power shelves, and readers of the power tables the power pass stored.

The tables (plan.power_feeds, power_devices, power_circuits, power_lines, power_cords,
power_pdus, power_outages, rack_loads_w; see plan/power_tables.py) are computed once by
compile/build_power.py; checks, the PDU tables, report.md and the inventories read them here.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from itertools import repeat
from typing import Any

from cluster_iac.plan.model import Plan
from cluster_iac.plan.power_tables import PduLoad, PowerCircuit

# PDU sides of each layout: 'single' has one PDU, 'ab' two (2N), 'three' three (DGX racks).
SIDES = {"single": ("A",), "ab": ("A", "B"), "three": ("A", "B", "C")}
# The NVL72 power shelf feeds trays that have no PSUs of their own (catalog power_shelves).
DEFAULT_SHELF = "nvl72-33kw"
BUSBAR_TIERS = ("nvswitch-tray",)
# Each PDU has one power inlet (NetBox: the PDU's power port that the feed connects to).
INLET = "inlet"

# Readers of the stored rows, under the names the checks and emitters have used.
CircuitLoad = PowerCircuit


# Names of a rack's PDU and feed, and of a row's panel, on one side: '<rack>-pdu-a'.
PDU_NAME, FEED_NAME, PANEL_NAME = "{}-pdu-{}", "{}-feed-{}", "{}-panel-{}"


def pdu_name(rack: str, side: str) -> str:
    """A PDU's name from its label ('a', or 'a1' with several PDUs a side)."""
    return PDU_NAME.format(rack, side.lower())


def pdu_sides(profile: Any) -> tuple[str, ...]:
    """The side of each PDU of a profile, in PDU order: ('A', 'B') with one PDU a side,
    ('A', 'A', 'B', 'B') with two (pdus_per_side)."""
    return tuple(side for side in SIDES[profile.layout] for _ in range(profile.pdus_per_side))


def pdu_labels(profile: Any) -> tuple[str, ...]:
    """Each PDU's label in PDU order: 'a', 'b' with one PDU a side (the names as before),
    'a1', 'a2', 'b1', 'b2' with two."""
    n = profile.pdus_per_side
    return tuple(side.lower() + (str(i + 1) if n > 1 else "")
                 for side in SIDES[profile.layout] for i in range(n))


def pdu_place(rack: str, pdu: str) -> str:
    """Where a PDU hangs in its rack as its labels print it ('A', or 'A1' with several PDUs
    a side): its label, what pdu_name added to the rack's name."""
    return pdu[len(PDU_NAME.format(rack, "")):].upper()


def shares_its_panel(pdu: str) -> bool:
    """Whether a PDU is one of several on its side of the rack (its label, pdu_labels, then
    ends in its number): its panel down is then a case of its own, not the same as it down."""
    return pdu[-1:].isdigit()


def rack_pdus(plan: Any) -> dict[str, list[str]]:
    """Rack -> its PDUs' names in PDU order (side A's, then B's, C's), from its profile's
    layout and PDUs a side: what the placement, addressing, management and power passes
    each need of every rack."""
    suffixes = {name: tuple(PDU_NAME.format("", label) for label in pdu_labels(profile))
                for name, profile in plan.settings.power.pdu_profiles.items()}
    # a suffix added to the rack's name: a 100,000-GPU cluster names its 11,000 PDUs three
    # times before the fork
    return {rack.name: list(map(rack.name.__add__, suffixes[rack.pdu_profile]))
            for rack in plan.racks}


def feed_name(rack: str, side: str) -> str:
    return FEED_NAME.format(rack, side.lower())


def panel_name(row: str, side: str) -> str:
    """The row's power panel (remote power panel) on one side: it feeds that side's PDUs."""
    return PANEL_NAME.format(row, side.lower())


def side_names(form: str, owners: Iterable[str], side: str) -> list[str]:
    """pdu_name, feed_name or panel_name (by its form) of each rack or row, on one side."""
    return list(map(form.format, owners, repeat(side.lower())))


def inlet_name(pdu: str) -> str:
    return INLET


def busbar_fed(plan: Plan) -> dict[str, list[tuple[str, int]]]:
    """Rack -> (device, max draw W) of trays with no PSUs, fed from the rack's busbar."""
    fed: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for node in plan.nodes:
        nt = plan.node_types[node.node_type]
        if nt.psu_count == 0:
            fed[node.rack].append((node.hostname, nt.max_power_w))
    for sw in plan.switches:
        if sw.psu_count == 0 or (sw.tier in BUSBAR_TIERS and sw.rack in fed):
            fed[sw.rack].append((sw.name, sw.max_power_w))
    return dict(fed)


def shelf_count(load_w: float, capacity_w: int, layout: str) -> int:
    """Shelves a busbar load needs: N+N split over the feeds for 'ab' (NVIDIA's NVL72 racks
    carry eight 33 kW shelves for ~132 kW), any two of three for 'three', N+1 for 'single'."""
    n = max(1, math.ceil(load_w / capacity_w))
    if layout == "ab":
        return 2 * n
    if layout == "three":
        return 3 * max(1, math.ceil(load_w / (2 * capacity_w)))
    return n + 1


def power_shelves(plan: Plan, fed: dict[str, list[tuple[str, int]]] | None = None,
                  ) -> dict[str, list[str]]:
    """Rack -> names of its power shelves (empty for racks without busbar-fed trays), from
    ``fed`` when the caller has the racks' busbar_fed already."""
    racks = {r.name: r for r in plan.racks}
    capacity = plan.catalog.power_shelves[DEFAULT_SHELF].capacity_w
    result: dict[str, list[str]] = {}
    for rack, trays in (busbar_fed(plan) if fed is None else fed).items():
        layout = plan.settings.power.pdu_profiles[racks[rack].pdu_profile].layout
        count = shelf_count(sum(w for _, w in trays), capacity, layout)
        result[rack] = [f"{rack}-ps{k + 1}" for k in range(count)]
    return result


def circuit_loads(plan: Plan) -> list[PowerCircuit]:
    """Every circuit of every PDU, by rack, PDU and circuit (plan.power_circuits)."""
    return list(plan.power_circuits)


def pdu_loads(plan: Plan) -> list[PduLoad]:
    """Every PDU with its normal and worst case, by rack and side (plan.power_pdus)."""
    return list(plan.power_pdus)


def rack_loads_w(plan: Plan) -> dict[str, float]:
    """Rack -> sum of its devices' maximum draw (nodes, switches, busbar trays; shelves pass
    power through and add nothing). Equals the sum of its PDUs' normal loads."""
    return plan.rack_loads_w
