"""topology.conf: the switch hierarchy (topology/tree) or the NVLink blocks (topology/block).

The tree is the hierarchy a scheduler should see, not every cable. Slurm wants a tree in
which each node hangs under one lowest-level switch and each switch under one parent, so:

- a plain fabric's leaf holds whole nodes: the leaves are the first level, under the spines;
- a rail-optimized fabric spreads each node over its scalable unit's rail leaves, so the
  first level that holds whole nodes is the scalable unit (``<prefix>-su<N>``), as the issue
  and NVIDIA's SuperPOD guidance have it; jobs inside one SU stay one hop from each other;
- every leaf reaches every spine of its pod, so a pod's spines act as one switch
  (``<prefix>-pod<N>``, or ``<prefix>-spines`` in a two-tier fabric), and the core tier as
  the root (``<prefix>-core``).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from cluster_iac.emit.base import render_template
from cluster_iac.hostlist import fold
from cluster_iac.plan import Plan

# topology/block arrived in Slurm 23.11 (slurm.schedmd.com/topology.html, "Block").
BLOCK_SINCE = (23, 11)


def plugin(plan: Plan) -> str | None:
    """The TopologyPlugin slurm.conf names, or None."""
    choice = plan.settings.slurm.topology
    has_fabric = "compute" in plan.fabrics
    if choice == "none":
        return None
    if choice == "block" or (choice == "auto" and _block_capable(plan) and _rack_domains(plan)):
        return "topology/block"
    if choice == "tree" or (choice == "auto" and has_fabric):
        return "topology/tree" if has_fabric else None
    return None


def render(plan: Plan) -> dict[str, str]:
    chosen = plugin(plan)
    if chosen is None:
        return {}
    if chosen == "topology/block":
        comments, lines = _block(plan)
    else:
        comments, lines = _tree(plan)
    text = render_template("slurm/topology.conf.j2", cluster=plan.cluster.name, plugin=chosen,
                           comments=comments, lines=lines)
    return {"slurm/topology.conf": text}


def tree_levels(plan: Plan) -> list[tuple[str, str, list[str]]]:
    """(switch, 'Nodes'|'Switches', children) from the lowest level up; tests compare the
    graph with this and with what slurmctld reports."""
    graph = plan.graphs["compute"]
    fabric = plan.fabrics["compute"]
    slurm_nodes = {n.hostname for n in plan.compute_nodes}
    prefix = _prefix(graph)
    # first-level switch -> its nodes (a plain or single-switch fabric: each leaf's own)
    if fabric.design == "rail-optimized":
        groups = _rail_groups(graph, slurm_nodes, prefix)
    else:
        groups = {leaf: sorted(h for h in graph.neighbors(leaf) if h in slurm_nodes)
                  for leaf, d in graph.nodes(data=True) if d.get("tier") == "leaf"}
    groups = {name: hosts for name, hosts in groups.items() if hosts}
    levels: list[tuple[str, str, list[str]]] = [(n, "Nodes", h) for n, h in groups.items()]
    firsts = list(groups)
    if fabric.tiers == 2:
        levels.append((f"{prefix}-spines", "Switches", firsts))
    elif fabric.tiers == 3:
        pods = _pods(graph, groups, prefix)
        levels += [(pod, "Switches", members) for pod, members in pods.items()]
        levels.append((f"{prefix}-core", "Switches", list(pods)))
    return levels


def _rail_groups(graph: Any, slurm_nodes: set[str],
                 prefix: str) -> dict[str, list[str]]:
    """First-level switch -> its nodes: the nodes cabled to the same rail leaves. Usually a
    whole SU (``<prefix>-su<N>``); an SU wider than one leaf's downlinks (GB200: 36 nodes, two
    leaves per rail) splits into ``<prefix>-su<N>-<k>``, whose nodes reach each other in one hop."""
    by_leaves: dict[tuple[int, frozenset[str]], list[str]] = defaultdict(list)
    for host, data in graph.nodes(data=True):
        if data.get("kind") == "node" and host in slurm_nodes:
            leaves = frozenset(n for n in graph.neighbors(host)
                               if graph.nodes[n].get("tier") == "leaf")
            by_leaves[(data["su"], leaves)].append(host)
    by_su: dict[int, list[list[str]]] = defaultdict(list)
    for (su, _leaves), hosts in by_leaves.items():
        by_su[su].append(sorted(hosts))
    groups: dict[str, list[str]] = {}
    for su in sorted(by_su):
        parts = sorted(by_su[su])
        for k, hosts in enumerate(parts, start=1):
            groups[f"{prefix}-su{su}" if len(parts) == 1 else f"{prefix}-su{su}-{k}"] = hosts
    return groups


def _pods(graph: Any, groups: dict[str, list[str]], prefix: str) -> dict[str, list[str]]:
    """Pod switch -> first-level switches under it: a first-level switch belongs to the pod
    whose spines its leaves reach (every leaf of a pod reaches the same spines)."""
    spine_sets: dict[frozenset[str], list[str]] = {}
    for first, hosts in groups.items():
        leaf = first if graph.has_node(first) else next(
            n for n in graph.neighbors(hosts[0]) if graph.nodes[n].get("tier") == "leaf")
        spines = frozenset(n for n in graph.neighbors(leaf)
                           if graph.nodes[n].get("tier") == "spine")
        spine_sets.setdefault(spines, []).append(first)
    return {f"{prefix}-pod{i}": members
            for i, members in enumerate(spine_sets.values(), start=1)}


def _tree(plan: Plan) -> tuple[list[str], list[str]]:
    fabric = plan.fabrics["compute"]
    comments = [f"{fabric.design} {fabric.technology} fabric, {fabric.tiers} tier(s), "
                f"{fabric.scalable_units} scalable unit(s) of {fabric.scalable_unit_nodes} nodes"]
    if fabric.design == "rail-optimized":
        comments.append("first level: scalable units (rail leaves of one SU act as one switch)")
    if fabric.tiers >= 2:
        comments.append("upper levels: the spines of a pod act as one switch, and so does the core"
                        if fabric.tiers == 3 else "upper level: the spines act as one switch")
    if _rack_domains(plan):
        comments.append(f"Slurm {plan.cluster.slurm_version} has no topology/block (23.11+): "
                        "NVLink racks are not scheduled as blocks")
    lines = [f"SwitchName={name} {kind}={fold(children)}"
             for name, kind, children in tree_levels(plan)]
    return comments, lines


def _block(plan: Plan) -> tuple[list[str], list[str]]:
    domains = [d for d in plan.nvlink_domains if d.kind == "rack"]
    slurm_nodes = {n.hostname for n in plan.compute_nodes}
    comments = ["one block per rack-scale NVLink domain"]
    lines = [f"BlockName={d.name} Nodes={fold([h for h in d.nodes if h in slurm_nodes])}"
             for d in domains]
    return comments, lines


def _rack_domains(plan: Plan) -> bool:
    return any(d.kind == "rack" for d in plan.nvlink_domains)


def _block_capable(plan: Plan) -> bool:
    major, minor = (int(part) for part in plan.cluster.slurm_version.split(".")[:2])
    return (major, minor) >= BLOCK_SINCE


def _prefix(graph: Any) -> str:
    leaf = next(n for n, d in graph.nodes(data=True) if d.get("tier") == "leaf")
    return str(leaf).split("-leaf", 1)[0]


