"""The plan: the expanded, immutable IR every check and emitter reads."""

from cluster_iac.plan.model import (
    FabricPlan,
    NicPlan,
    Node,
    NodeTypePlan,
    NvlinkDomain,
    PartitionPlan,
    Placement,
    Plan,
    PowerCord,
    PowerDevice,
    Rack,
    Row,
    Settings,
    Switch,
)

__all__ = [
    "FabricPlan",
    "NvlinkDomain",
    "Node", "NicPlan", "NodeTypePlan", "PartitionPlan", "Placement", "Plan", "PowerCord",
    "PowerDevice", "Rack", "Row",
    "Settings", "Switch",
]
