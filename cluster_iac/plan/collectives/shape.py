"""A job's shape for the all_reduce model: NVLink domains, NICs, the fabric on its path."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import replace
from itertools import compress, repeat
from operator import attrgetter, eq

from cluster_iac.catalog.nccl_vars import parse_version
from cluster_iac.plan.collectives.algorithms import ALGORITHMS, JobShape
from cluster_iac.plan.collectives.constants import (
    EFFICIENCY,
    NETWORK_EFFICIENCY,
    NICS_PER_DOMAIN,
    OTHER_EFFICIENCY,
    PCIE_LANE_GBS,
    SINCE,
)
from cluster_iac.plan.model import Node, Plan
from cluster_iac.plan.node_types import NodeTypePlan
from cluster_iac.plan.wiring import FabricWiring

# NCCL_ALGO names (NCCL docs, env.rst) -> the model's algorithms.
_ALGO_NAMES = {"ring": "ring", "tree": "tree", "nvls": "nvls", "nvlstree": "nvls_tree",
               "collnet": "collnet", "collnetdirect": "collnet", "collnetchain": "collnet"}


def job_shape(plan: Plan, nodes: Sequence[Node],
              owners: Mapping[str, str] | None = None) -> JobShape | None:
    """The shape of a job on every GPU of ``nodes`` (None without GPUs); ``owners``:
    nvlink_owners(plan), where the caller has it (a partition's jobs share it)."""
    gpu_nodes = [n for n in nodes if plan.node_types[n.node_type].gpu_count > 0]
    if not gpu_nodes:
        return None
    # the job's node types, each once (in node order) with its nodes: a figure of a type is
    # taken once per type, not once per node (a partition has thousands of nodes)
    per_type = Counter(n.node_type for n in gpu_nodes)
    types = [plan.node_types[name] for name in per_type]
    groups = domain_groups(plan, gpu_nodes, owners)
    # the kinds of domain (their nodes' types): domains of one kind have the same GPUs and NICs
    kinds = {tuple(n.node_type for n in group) for group in groups.values()}
    intra, link = min((_intra_gbs(nt) for nt in types), key=lambda pair: pair[0])
    archs = {nt.gpu_architecture for nt in types}
    arch = archs.pop() if len(archs) == 1 else None
    technology = fabric_technology(plan)
    shape = JobShape(
        gpus=sum(plan.node_types[name].gpu_count * n for name, n in per_type.items()),
        nodes=len(gpu_nodes),
        domains=len(groups),
        domain_gpus=min(sum(plan.node_types[name].gpu_count for name in kind) for kind in kinds),
        intra_gbs=intra,
        intra_link=link,
        efficiency=EFFICIENCY.get(arch or "", OTHER_EFFICIENCY),
        nvlink_sharp=all(nt.nvlink_sharp for nt in types),
        net_line_gbs=min(_domain_nic_gbs(plan, kind) for kind in kinds),
        net_efficiency=NETWORK_EFFICIENCY.get(technology, 0.0),
        oversubscription=path_oversubscription(plan, gpu_nodes),
        technology=technology,
        enabled=frozenset(),
    )
    return _with_enabled(plan, shape, types)


def nvlink_owners(plan: Plan) -> dict[str, str]:
    """Host -> the name of the plan's NVLink domain it is in."""
    return {host: d.name for d in plan.nvlink_domains for host in d.nodes}


def domain_groups(plan: Plan, nodes: Sequence[Node],
                  owners: Mapping[str, str] | None = None) -> dict[str, list[Node]]:
    """The job's nodes by NVLink domain: the plan's domains, else one board per node (or one
    rack for rack-scale node types) when the NVLink pass has not filled them. ``owners``:
    nvlink_owners(plan), made here when not given (12,500 hosts at 100,000 GPUs)."""
    owner = nvlink_owners(plan) if owners is None else owners
    rack_scale = {name for name, nt in plan.node_types.items() if nt.nvlink_domain == "rack"}
    groups: dict[str, list[Node]] = defaultdict(list)
    for node in nodes:
        name = owner.get(node.hostname)
        if name is None:
            name = (f"rack {node.rack}" if node.node_type in rack_scale
                    else f"node {node.hostname}")
        groups[name].append(node)
    return dict(groups)


def node_domain(plan: Plan, nodes: Sequence[Node], node: Node,
                owners: Mapping[str, str] | None = None) -> tuple[Node, ...]:
    """The nodes of ``nodes`` in the NVLink domain of ``node`` (one of them), in their order:
    domain_groups' group of ``node``. Where the plan's domains hold every node, one pass over
    the host names finds them, not a group for each domain (12,500 nodes at 100,000 GPUs);
    else domain_groups itself (its names for the nodes outside the plan's domains)."""
    owner = nvlink_owners(plan) if owners is None else owners
    names = list(map(owner.get, map(attrgetter("hostname"), nodes)))
    if None in names:
        return next(tuple(g) for g in domain_groups(plan, nodes, owner).values() if node in g)
    return tuple(compress(nodes, map(eq, names, repeat(owner[node.hostname]))))


def fabric_technology(plan: Plan) -> str:
    """'infiniband' | 'roce' of the compute fabric, 'none' without one."""
    section = plan.settings.fabric.compute
    return str(section.technology) if section is not None else "none"


def path_oversubscription(plan: Plan, nodes: Sequence[Node]) -> float:
    """Oversubscription of the fabric tiers the job's traffic crosses: 1.0 when every node
    hangs off the same leaf switches (a scalable unit of a rail-optimized fabric), the leaf
    tier's ratio when the job spans leaf groups, the worst of leaf and spine when its leaves
    reach different spines (pods of a three-tier fabric)."""
    fabric, wiring = plan.fabrics.get("compute"), plan.fabric_wiring.get("compute")
    if fabric is None or wiring is None or fabric.tiers <= 1:
        return 1.0
    # each distinct row of leaves once (a rail leaf's hosts share one tuple)
    leaf_sets = set(map(frozenset, set(map(wiring.up.get, [n.hostname for n in nodes],
                                               repeat(())))))
    if len(leaf_sets) <= 1:
        return 1.0
    crossed = ["leaf"]
    leaves = sorted(frozenset().union(*leaf_sets))
    spines = dict(zip(leaves, _above(wiring, leaves), strict=True))
    spine_sets = {frozenset().union(*map(spines.__getitem__, group)) for group in leaf_sets}
    if fabric.tiers > 2 and len(spine_sets) > 1:
        crossed.append("spine")
    return max([1.0, *(fabric.oversubscription(t) for t in crossed
                       if t in fabric.tier_bandwidth_gbps)])


def scalable_unit(plan: Plan, node: Node) -> object:
    """The node's scalable unit in the compute fabric (its leaf switches when the wiring
    names none; None without a compute fabric)."""
    wiring = plan.fabric_wiring.get("compute")
    if wiring is None or node.hostname not in wiring:
        return None
    su = wiring.su.get(node.hostname)
    if su is not None:
        return su
    return frozenset(wiring.up.get(node.hostname, ()))


def _above(wiring: FabricWiring, names: Sequence[str]) -> list[frozenset[str]]:
    """The switches each name is cabled to in the tier above it (a host's leaves, a leaf's
    spines); none for a name not in the fabric."""
    up = wiring.up
    return [frozenset(up.get(name, ())) for name in names]


def _intra_gbs(nt: NodeTypePlan) -> tuple[float, str]:
    """Per-GPU bandwidth inside the domain, one direction: NVLink, else the GPU's PCIe link."""
    if nt.gpu_nvlink_gbs > 0:
        return nt.gpu_nvlink_gbs, "NVLink"
    gen = nt.pcie.gen if nt.pcie is not None else 4
    width = nt.pcie.link_width if nt.pcie is not None else 16
    return PCIE_LANE_GBS.get(gen, PCIE_LANE_GBS[4]) * width, "PCIe"


def _domain_nic_gbs(plan: Plan, node_types: Sequence[str]) -> float:
    """Line rate of the compute NICs NCCL drives in one domain (its nodes' types), GB/s: each
    NIC at the smaller of its own and the switch port's speed, at most NICS_PER_DOMAIN."""
    fabric = plan.fabrics.get("compute")
    if fabric is None and plan.settings.fabric.compute is None:
        return 0.0
    port = fabric.link_speed_gbps if fabric is not None else None
    speeds = sorted((min(nic.speed_gbps, port) if port else nic.speed_gbps
                     for name in node_types for nic in plan.node_types[name].nics_of("compute")
                     for _ in range(nic.count)), reverse=True)
    return sum(speeds[:NICS_PER_DOMAIN]) / 8


def _with_enabled(plan: Plan, shape: JobShape, types: list[NodeTypePlan]) -> JobShape:
    version = parse_version(plan.cluster.nccl_version)
    env = _nccl_env(plan, types)
    allowed = _algo_list(env.get("NCCL_ALGO"))
    enabled = set()
    for algorithm in ALGORITHMS:
        if algorithm in SINCE and version < SINCE[algorithm]:
            continue
        if algorithm in ("nvls", "nvls_tree") and env.get("NCCL_NVLS_ENABLE") == "0":
            continue
        if algorithm == "collnet" and env.get("NCCL_COLLNET_ENABLE") != "1":
            continue
        if allowed is None or algorithm in allowed:
            enabled.add(algorithm)
    return replace(shape, enabled=frozenset(enabled))


def _nccl_env(plan: Plan, types: list[NodeTypePlan]) -> dict[str, str]:
    """The NCCL variables every node type of the job agrees on."""
    names = dict.fromkeys(nt.name for nt in types)  # each type once: a job has thousands of nodes
    envs = [plan.nccl[name].env() if name in plan.nccl else {} for name in names]
    first = envs[0]
    return {k: v for k, v in first.items() if all(e.get(k) == v for e in envs[1:])}


def _algo_list(value: str | None) -> set[str] | None:
    """Algorithms NCCL_ALGO allows for all_reduce (None: all). Accepts 'Ring,Tree',
    '^NVLS' and, since NCCL 2.24, per-collective 'allreduce:ring;broadcast:tree'."""
    if value is None:
        return None
    text = value.strip()
    parts = [p.split(":", 1) for p in text.split(";")]
    chosen = next((p[1] for p in parts if len(p) == 2 and p[0].strip().lower() == "allreduce"),
                  next((p[0] for p in parts if len(p) == 1), None))
    if chosen is None:
        return None
    chosen = chosen.strip()
    exclude = chosen.startswith("^")
    names = {_ALGO_NAMES[n.strip().lower()] for n in chosen.lstrip("^").split(",")
             if n.strip().lower() in _ALGO_NAMES}
    return set(ALGORITHMS) - names if exclude else names
