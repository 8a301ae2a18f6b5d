"""The slots of racks that arrive integrated: a rack of rack-scale trays (GB200/GB300 NVL72)
puts its compute trays, NVLink switch trays and power shelves where its maker builds them.

The layout is data, the platform's ``rack_layout`` in the catalog (catalog/platforms.yaml,
with its source): runs of slots from the rack's lowest unit up. Each run's devices take its
slots in name order from the bottom: the rack's trays (spec order) the compute-tray slots,
its NVLink switch trays (nvsw1...) theirs, and its power shelves are split over the
power-shelf runs as the stacking did before (the first half in the lower run). A slot with
no device (a rack of fewer trays, or fewer shelves) stays empty: the rack is delivered so.
Devices a run has no slot for are left to the ordinary stacking (compile/place_devices.py).
"""

from __future__ import annotations

from typing import NamedTuple

from cluster_iac.plan import Plan
from cluster_iac.plan.model import Switch


class Slot(NamedTuple):
    """One slot of a rack's layout: its lowest unit, height, and the device it holds."""

    unit: int
    height_u: int
    device: str | None


def rack_slots(plan: Plan, shelves: dict[str, list[str]], shelf_u: int,
               switches: list[Switch]) -> dict[str, list[Slot]]:
    """Rack -> its slots from the bottom, for each rack whose first rack-scale tray's
    platform has a layout (racks without one are absent)."""
    trays: dict[str, list[str]] = {}
    kinds: dict[str, str] = {}  # rack -> node type of its first rack-scale tray
    for node in plan.nodes:
        node_type = plan.node_types[node.node_type]
        if node_type.nvlink_domain == "rack":
            trays.setdefault(node.rack, []).append(node.hostname)
            kinds.setdefault(node.rack, node.node_type)
    result: dict[str, list[Slot]] = {}
    for rack, type_name in kinds.items():
        node_type = plan.node_types[type_name]
        layout = plan.catalog.platforms[node_type.platform].rack_layout
        if not layout:
            continue
        nvlink = [s for s in switches if s.rack == rack and s.tier == "nvswitch-tray"]
        runs = [run for run in layout if run.part == "power-shelf"]
        names = shelves.get(rack, [])
        split = [names[k * len(names) // len(runs):(k + 1) * len(names) // len(runs)]
                 for k in range(len(runs))]
        queues = {"compute-tray": list(trays[rack]), "nvlink-switch-tray":
                  [s.name for s in nvlink]}
        heights = {"compute-tray": node_type.height_u, "power-shelf": shelf_u,
                   "nvlink-switch-tray": nvlink[0].height_u if nvlink else 1}
        slots, unit, shelf_run = [], 1, 0
        for run in layout:
            queue = queues.get(run.part)
            if queue is None:  # a power-shelf run: its share of the shelves
                queue, shelf_run = list(split[shelf_run]), shelf_run + 1
            height = heights[run.part]
            for _ in range(run.count):
                slots.append(Slot(unit, height, queue.pop(0) if queue else None))
                unit += height
        result[rack] = slots
    return result
