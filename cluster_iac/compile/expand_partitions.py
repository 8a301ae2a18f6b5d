"""Slurm partitions -> their node lists: the nodes of their whole node groups, then those a
hostlist names or a count takes from a group."""

from __future__ import annotations

from dataclasses import replace

from cluster_iac.base.errors import CompileError, Diagnostic, SpecPath
from cluster_iac.base.hostlist import expand
from cluster_iac.compile.check_references import not_compute, unknown
from cluster_iac.plan import Node, PartitionPlan, Plan
from cluster_iac.spec import ClusterSpec
from cluster_iac.spec.limits import MAX_NAMES
from cluster_iac.spec.slurm import GroupNodes, Partition, partition_picks


def expand_partitions(spec: ClusterSpec, plan: Plan) -> Plan:
    """Each partition with its hostnames; a hostlist naming a node no group makes, or one
    that runs no jobs, is a located error."""
    by_group: dict[str, list[str]] = {}
    for node in plan.nodes:
        by_group.setdefault(node.group, []).append(node.hostname)
    by_name = {node.hostname: node for node in plan.nodes}
    problems: list[Diagnostic] = []
    partitions = []
    for i, part in enumerate(spec.slurm.partitions):
        path: SpecPath = ("slurm", "partitions", i)
        nodes = [h for g in part.node_groups for h in by_group.get(g, [])]
        nodes += _picked(part, path, by_group, by_name, problems)
        partitions.append(PartitionPlan(
            name=part.name, nodes=tuple(nodes),
            default=part.default or len(spec.slurm.partitions) == 1,
            max_time=part.max_time, priority_tier=part.priority_tier,
            exclusive=part.exclusive, spec_path=path,
        ))
    if problems:
        raise CompileError(problems)
    return replace(plan, partitions=tuple(partitions))


def _picked(part: Partition, path: SpecPath, by_group: dict[str, list[str]],
            by_name: dict[str, Node], problems: list[Diagnostic]) -> list[str]:
    """The hostnames of the partition's nodes entries, in the order written; a hostlist's in
    the cluster's order of nodes."""
    out: list[str] = []
    order = {name: index for index, name in enumerate(by_name)}
    for pick, where in partition_picks(part):
        if isinstance(pick, GroupNodes):
            out += by_group.get(pick.group, [])[:pick.count]
            continue
        names = set(expand(pick, limit=MAX_NAMES))
        missing = sorted(names - by_name.keys())
        if missing:  # the first, with the closest name a group makes; and how many more
            found = unknown("node", missing[0], by_name, (*path, *where))
            more = f" (and {len(missing) - 1:,} more no node group makes)" if missing[1:] else ""
            problems.append(replace(found, message=found.message + more))
        for name in sorted(names & by_name.keys()):
            node = by_name[name]
            if node.role != "compute":
                problems.append(not_compute(part.name, f"node '{name}'", node.role,
                                            (*path, *where)))
                break
        out += sorted(names & by_name.keys(), key=order.__getitem__)
    return out
