"""Slurm partitions -> their node lists."""

from __future__ import annotations

from dataclasses import replace

from cluster_iac.plan import PartitionPlan, Plan
from cluster_iac.spec import ClusterSpec


def expand_partitions(spec: ClusterSpec, plan: Plan) -> Plan:
    """Each partition with the hostnames of its node groups."""
    by_group: dict[str, list[str]] = {}
    for node in plan.nodes:
        by_group.setdefault(node.group, []).append(node.hostname)
    partitions = tuple(
        PartitionPlan(
            name=part.name,
            nodes=tuple(h for g in part.node_groups for h in by_group.get(g, [])),
            default=part.default or len(spec.slurm.partitions) == 1,
            max_time=part.max_time, priority_tier=part.priority_tier,
            exclusive=part.exclusive, spec_path=("slurm", "partitions", i),
        )
        for i, part in enumerate(spec.slurm.partitions)
    )
    return replace(plan, partitions=partitions)
