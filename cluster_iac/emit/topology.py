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

from cluster_iac.base.hostlist import fold
from cluster_iac.emit.base import GENERATED_BY, render_template
from cluster_iac.emit.slurm_conf import comment, conf_line
from cluster_iac.formats.yaml import ruamel_yaml_text
from cluster_iac.plan import Plan
from cluster_iac.plan.slurm import BLOCK_TOPOLOGY, DEFAULT_TOPOLOGY
from cluster_iac.plan.wiring import FabricWiring


def plugin(plan: Plan) -> str | None:
    """The TopologyPlugin slurm.conf names (None: no topology.conf, or topology.yaml)."""
    return {"tree": "topology/tree", "block": "topology/block"}.get(plan.slurm.topology)


def render(plan: Plan) -> dict[str, str]:
    kind = plan.slurm.topology
    if kind == "per-partition":
        return {"slurm/topology.yaml": topology_yaml(plan)}
    if kind == "none":
        return {}
    comments, lines = _block(plan) if kind == "block" else _tree(plan)
    text = render_template("slurm/topology.conf.j2", cluster=plan.cluster.name,
                           plugin=plugin(plan), comments=[comment(c) for c in comments],
                           lines=lines)
    return {"slurm/topology.conf": text}


def tree_levels(plan: Plan) -> list[tuple[str, str, list[str]]]:
    """(switch, 'Nodes'|'Switches', children) from the lowest level up; tests compare the
    wiring with this and with what slurmctld reports."""
    wiring = plan.fabric_wiring["compute"]
    fabric = plan.fabrics["compute"]
    slurm_nodes = {n.hostname for n in plan.compute_nodes}
    prefix = _prefix(wiring)
    # first-level switch -> its nodes (a plain or single-switch fabric: each leaf's own)
    if fabric.design == "rail-optimized":
        groups = _rail_groups(wiring, slurm_nodes, prefix)
    else:
        groups = {leaf: [] for leaf, tier in wiring.tier.items() if tier == "leaf"}
        for host in wiring.hosts():
            if host in slurm_nodes:
                for leaf in wiring.up[host]:
                    groups[leaf].append(host)
        groups = {leaf: sorted(hosts) for leaf, hosts in groups.items()}
    groups = {name: hosts for name, hosts in groups.items() if hosts}
    levels: list[tuple[str, str, list[str]]] = [(n, "Nodes", h) for n, h in groups.items()]
    firsts = list(groups)
    if fabric.tiers == 2:
        levels.append((f"{prefix}-spines", "Switches", firsts))
    elif fabric.tiers == 3:
        pods = _pods(wiring, groups, prefix)
        levels += [(pod, "Switches", members) for pod, members in pods.items()]
        levels.append((f"{prefix}-core", "Switches", list(pods)))
    return levels


def _rail_groups(wiring: FabricWiring, slurm_nodes: set[str],
                 prefix: str) -> dict[str, list[str]]:
    """First-level switch -> its nodes: the nodes cabled to the same rail leaves. Usually a
    whole SU (``<prefix>-su<N>``); an SU wider than one leaf's downlinks (GB200: 36 nodes, two
    leaves per rail) splits into ``<prefix>-su<N>-<k>``, whose nodes reach each other in one hop."""
    by_leaves: dict[tuple[int, frozenset[str]], list[str]] = defaultdict(list)
    for host in wiring.hosts():  # a host's switches above it are its leaves
        if host in slurm_nodes:
            by_leaves[(wiring.su[host], frozenset(wiring.up[host]))].append(host)
    by_su: dict[int, list[list[str]]] = defaultdict(list)
    for (su, _leaves), hosts in by_leaves.items():
        by_su[su].append(sorted(hosts))
    groups: dict[str, list[str]] = {}
    for su in sorted(by_su):
        parts = sorted(by_su[su])
        for k, hosts in enumerate(parts, start=1):
            groups[f"{prefix}-su{su}" if len(parts) == 1 else f"{prefix}-su{su}-{k}"] = hosts
    return groups


def _pods(wiring: FabricWiring, groups: dict[str, list[str]],
          prefix: str) -> dict[str, list[str]]:
    """Pod switch -> first-level switches under it: a first-level switch belongs to the pod
    whose spines its leaves reach (every leaf of a pod reaches the same spines)."""
    spine_sets: dict[frozenset[str], list[str]] = {}
    for first, hosts in groups.items():
        leaf = first if first in wiring else wiring.up[hosts[0]][0]
        spine_sets.setdefault(frozenset(wiring.up.get(leaf, ())), []).append(first)
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
        comments.append(_why_no_blocks(plan))
    lines = [conf_line([("SwitchName", name), (kind, fold(children))])
             for name, kind, children in tree_levels(plan)]
    return comments, lines


def _why_no_blocks(plan: Plan) -> str:
    release = plan.slurm.release
    if not release.topology_block:
        return (f"Slurm {release.version} has no topology/block (23.11+): "
                "NVLink racks are not scheduled as blocks")
    return (f"some compute nodes are in no NVLink rack and Slurm {release.version} has one "
            "topology for all partitions (25.05+ gives each its own): NVLink racks are not "
            "scheduled as blocks")


def _block(plan: Plan) -> tuple[list[str], list[str]]:
    slurm = plan.slurm
    comments = ["one block per rack-scale NVLink domain"]
    lines = [conf_line([("BlockName", b.name), ("Nodes", fold(b.nodes))]) for b in slurm.blocks]
    if slurm.release.block_sizes:
        comments.append("BlockSizes: the smallest block's node count, which every block has")
        lines.append(conf_line([("BlockSizes", slurm.block_size)]))
    else:
        comments.append(f"Slurm {slurm.release.version} takes the base block size from the "
                        "first block: the smallest comes first")
    return comments, lines


def topology_yaml(plan: Plan) -> str:
    """topology.yaml (Slurm 25.05+): the NVLink racks as a block topology for the partitions
    made of them, the fabric's tree (or flat) as the cluster default for the rest."""
    default: dict[str, Any] = {"topology": DEFAULT_TOPOLOGY, "cluster_default": True}
    if "compute" in plan.fabrics:
        default["tree"] = {"switches": [
            {"switch": name, "nodes" if kind == "Nodes" else "children": fold(children)}
            for name, kind, children in tree_levels(plan)]}
    else:
        default["flat"] = True
    block = {"topology": BLOCK_TOPOLOGY, "cluster_default": False, "block": {
        "block_sizes": [plan.slurm.block_size],
        "blocks": [{"block": b.name, "nodes": fold(b.nodes)} for b in plan.slurm.blocks]}}
    return _document([default, block], header=[
        f"topology.yaml for cluster {plan.cluster.name}: one topology per partition",
        GENERATED_BY,
        f"partitions on '{BLOCK_TOPOLOGY}' (NVLink racks as topology/block): "
        + ", ".join(sorted(plan.slurm.partition_topology)),
        f"every other partition uses '{DEFAULT_TOPOLOGY}'"])


def _document(data: object, header: list[str]) -> str:
    """topology.yaml's text: '# ' comment lines, the start marker '---', then the data in
    ruamel.yaml's layout, which this file has always had (a value cannot break the syntax;
    the mappings keep their order: 'topology' must come first)."""
    return "".join(comment(line) + "\n" for line in header) + "---\n" + ruamel_yaml_text(data)


def _rack_domains(plan: Plan) -> bool:
    return any(d.kind == "rack" for d in plan.nvlink_domains)


def _prefix(wiring: FabricWiring) -> str:
    leaf = next(n for n, tier in wiring.tier.items() if tier == "leaf")
    return leaf.split("-leaf", 1)[0]


