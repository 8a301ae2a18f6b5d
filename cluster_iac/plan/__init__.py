"""The plan: the expanded, immutable IR every check and emitter reads."""

from cluster_iac.plan.model import (
    Node,
    NodeTypePlan,
    NicPlan,
    PartitionPlan,
    Placement,
    Plan,
    Rack,
    Row,
    Settings,
    Switch,
)

__all__ = [
    "Node", "NicPlan", "NodeTypePlan", "PartitionPlan", "Placement", "Plan", "Rack", "Row",
    "Settings", "Switch",
]
