"""Facts of delivered hardware that the plan cannot know until delivery and the lock keeps
once accepted (``cluster-iac reconcile --accept``): chassis serial numbers and InfiniBand
GUIDs. (MACs are the boot plan's: plan/boot.py BootPlan.macs.) The emitters write from them:
NetBox's devices.csv its serial column, OpenSM's partitions.conf and root-guids."""

from __future__ import annotations

from dataclasses import dataclass, field

NODE = "node"  # the port word of a device's node GUID (a switch's), as the lock writes it


@dataclass(frozen=True)
class Facts:
    """serials: device -> its serial number; guids: (device, port) -> GUID, the port a host
    adapter's port name ('ib0') for its port GUID or NODE for a switch's node GUID."""

    serials: dict[str, str] = field(default_factory=dict)
    guids: dict[tuple[str, str], int] = field(default_factory=dict)
