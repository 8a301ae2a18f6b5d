"""The plan: the expanded, immutable IR every check and emitter reads."""

from cluster_iac.plan.model import (
    FabricPlan,
    Node,
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
from cluster_iac.plan.node_types import NicPlan, NodeTypePlan

__all__ = [
    "FabricPlan",
    "NvlinkDomain",
    "Node", "NicPlan", "NodeTypePlan", "PartitionPlan", "Placement", "Plan", "PowerCord",
    "PowerDevice", "Rack", "Row",
    "Settings", "Switch",
]
