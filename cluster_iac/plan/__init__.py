"""The plan: the expanded, immutable IR every check and emitter reads."""

from cluster_iac.plan.model import (
    Node,
    NodeTypePlan,
    NicPlan,
    PartitionPlan,
    Plan,
    Rack,
    Row,
)

__all__ = ["Node", "NicPlan", "NodeTypePlan", "PartitionPlan", "Plan", "Rack", "Row"]
