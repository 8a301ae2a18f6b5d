"""Node groups -> one Node per host, with its hostname and rack."""

from __future__ import annotations

import math
import re
from dataclasses import replace

from cluster_iac.base.errors import CompileError, Diagnostic
from cluster_iac.base.hostlist import expand
from cluster_iac.plan import Node, Plan
from cluster_iac.plan.kept import Lock
from cluster_iac.spec import ClusterSpec
from cluster_iac.spec.nodes import NodeGroup
from cluster_iac.spec.strings import hostname_problem


def hostname(pattern: str, index: int) -> str:
    """'dgx-###' with index 7 -> 'dgx-007' (the index may outgrow the padding)."""
    head, width, tail = _split(pattern)
    return head + str(index).zfill(width) + tail


def _split(pattern: str) -> tuple[str, int, str]:
    """'dgx-###' -> ('dgx-', 3, ''): the text around the run of '#' and its width."""
    run = re.search(r"#+", pattern)
    assert run is not None  # the spec's pattern guarantees one run of '#'
    return pattern[: run.start()], len(run.group()), pattern[run.end():]


def expand_nodes(spec: ClusterSpec, plan: Plan) -> Plan:
    """Every node of every group, in spec order; duplicate hostnames are errors."""
    nodes: list[Node] = []
    problems: list[Diagnostic] = []
    for i, group in enumerate(spec.node_groups):
        last = hostname(group.hostname, group.first_index + group.count - 1)
        problem = hostname_problem(last)
        if problem is not None:  # the index outgrew the pattern's padding
            problems.append(Diagnostic(
                "SPEC-HOSTNAME", f"node group '{group.name}': its last host name "
                f"'{last[:60]}' {problem}", ("node_groups", i, "hostname"),
                hint="shorten the pattern or give the index fewer digits"))
            continue
        racks = expand(group.racks)
        per_rack = group.per_rack or math.ceil(group.count / len(racks))
        if per_rack * len(racks) < group.count:
            problems.append(Diagnostic(
                "SPEC-RACK-CAPACITY",
                f"node group '{group.name}' has {group.count} nodes but {len(racks)} rack(s) x "
                f"{per_rack} per rack hold only {per_rack * len(racks)}",
                ("node_groups", i, "per_rack")))
            continue
        made = _group_nodes(group, i, racks, per_rack)
        if plan.lock.exists:
            made, found = _locked_racks(plan.lock, made, group, racks, per_rack)
            problems += found
        nodes += made
    seen: dict[str, Node] = {}
    for node in nodes:
        if node.hostname in seen:
            problems.append(Diagnostic(
                "SPEC-DUPLICATE-HOST",
                f"hostname '{node.hostname}' of group '{node.group}' is also in group "
                f"'{seen[node.hostname].group}'", (*node.spec_path, "hostname")))
        seen.setdefault(node.hostname, node)
    if problems:
        raise CompileError(problems)
    return replace(plan, nodes=tuple(nodes))


def _locked_racks(lock: Lock, nodes: list[Node], group: NodeGroup, racks: list[str],
                  per_rack: int) -> tuple[list[Node], list[Diagnostic]]:
    """The group's nodes with the racks the lock records; each other node in the first of
    the group's racks with room (at most ``per_rack``), which without a lock is the rack its
    index gives, so a node added moves none that is racked."""
    problems: list[Diagnostic] = []
    room = dict.fromkeys(racks, per_rack)
    rack_of: dict[str, str] = {}
    for node in nodes:
        entry = lock.get("place", "", node.hostname)
        if entry is None:
            continue
        rack = entry.value[0]
        if rack not in room:
            problems.append(lock.error(
                entry, "LOCK-CONFLICT", f"{node.hostname} is locked in rack {rack}, which "
                f"node group '{group.name}' no longer lists (racks: {group.racks})",
                hint=lock.way_out(node.hostname), column=len(f"place {node.hostname} ") + 1,
                cause=(*node.spec_path, "racks")))
            continue
        rack_of[node.hostname] = rack
        room[rack] -= 1
    placed = []
    free = 0  # racks before this one are full; room only falls, so it only moves on
    for node in nodes:
        rack = rack_of.get(node.hostname)
        if rack is None:
            while free < len(racks) and room[racks[free]] <= 0:
                free += 1
            rack = racks[free] if free < len(racks) else node.rack
            room[rack] -= 1
        placed.append(node if rack == node.rack else replace(node, rack=rack))
    return placed, problems


def _group_nodes(group: NodeGroup, i: int, racks: list[str], per_rack: int) -> list[Node]:
    head, width, tail = _split(group.hostname)  # once per group, not per host
    name, role, node_type, path = group.name, group.role, group.node_type, ("node_groups", i)
    first = group.first_index
    # Node(hostname, group, role, node_type, rack, index, spec_path), by position: 12,500
    # nodes at 100,000 GPUs, made before the emitter worker forks
    return [Node(head + str(first + k).zfill(width) + tail, name, role, node_type,
                 racks[k // per_rack], k, path)
            for k in range(group.count)]
