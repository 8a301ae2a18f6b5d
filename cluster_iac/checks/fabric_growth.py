"""Fabric growth checks: a fabric sized for exactly the scalable units it has (one more unit
adds spines and re-patches leaf-spine cables), and service hosts on the compute fabric that
push the GPU servers into a scalable unit of their own.

Both re-size the fabric with the builder's own rules (plan/fattree.py size_fat_tree) for
other hosts, and compare: the figures are the builder's, not estimates of them.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from cluster_iac.base.errors import Diagnostic, Severity
from cluster_iac.base.hostlist import fold
from cluster_iac.checks.fabric_cost import FabricHosts, fabric_hosts
from cluster_iac.checks.registry import check
from cluster_iac.plan import FabricPlan, Plan
from cluster_iac.plan.fattree import FabricSizeError, FatTree, parse_ratio, size_fat_tree


def _models(plan: Plan, config: Any) -> tuple[Any, Any, Any]:
    """Catalog entries of the leaf, spine and core tiers (as compile/build_fabric.py picks)."""
    spine = getattr(config, "spine_switch", None) or config.leaf_switch
    core = getattr(config, "core_switch", None) or spine
    switches = plan.catalog.switches
    return switches[config.leaf_switch], switches[spine], switches[core]


def _size(plan: Plan, config: Any, fabric: FabricPlan, hosts: int, most: int, ports: int,
          planned: int | None) -> FatTree | None:
    """The fabric the builder sizes for these hosts; None when it cannot be built."""
    leaf, spine, core = _models(plan, config)
    tiers = getattr(config, "tiers", "auto")
    try:
        return size_fat_tree(hosts, most, leaf.ports, spine.ports, core.ports,
                             parse_ratio(config.oversubscription),
                             getattr(config, "design", "plain"),
                             su_nodes=getattr(config, "scalable_unit_nodes", None),
                             tiers=None if tiers == "auto" else int(tiers),
                             planned_sus=planned, node_ports=ports, legs=fabric.breakout_legs)
    except FabricSizeError:
        return None


def _as_built(plan: Plan, network: str, fabric: FabricPlan) -> tuple[Any, FabricHosts,
                                                                      FatTree] | None:
    """(config, hosts, tree) of a leaf-spine fabric whose sizing this module can repeat:
    None for a single switch, or where re-sizing its hosts does not give the built fabric
    (a lock's reserved places), so that no finding rests on another fabric than the one
    built."""
    config = getattr(plan.settings.fabric, network, None)
    if config is None or fabric.tiers < 2:
        return None
    hosts = fabric_hosts(plan, network)
    tree = _size(plan, config, fabric, hosts.hosts, hosts.most, hosts.ports,
                 getattr(config, "planned_scalable_units", None))
    if tree is None or (tree.leaves, tree.spines, tree.cores) != (
            fabric.switch_counts.get("leaf", 0), fabric.switch_counts.get("spine", 0),
            fabric.switch_counts.get("core", 0)):
        return None
    return config, hosts, tree


def moved_cables(old: FatTree, new: FatTree) -> tuple[int, int]:
    """(leaf-spine, spine-core) cables of ``old`` that end on another switch in ``new``.

    Switches keep their place in their tier (spine j is the same box in both); each leaf
    reaches spines ``pod * spines_per_pod ...`` with ``leaf_spine_links`` each, and spine j
    reaches core group ``j % spines_per_pod`` with ``spine_core_links`` each
    (compile/fabric_cables.py wire_uplinks). A cable stays where its lower switch keeps the
    upper one, up to the links it keeps there; every other one is unplugged and re-patched.
    """
    def kept(lower: int, span_old: tuple[int, int, int], span_new: tuple[int, int, int]) -> int:
        (first_o, count_o, links_o), (first_n, count_n, links_n) = span_old, span_new
        both = max(0, min(first_o + count_o, first_n + count_n) - max(first_o, first_n))
        return both * min(links_o, links_n)

    def leaf_span(tree: FatTree, leaf: int) -> tuple[int, int, int]:
        pod = leaf // (tree.sus_per_pod * tree.leaves_per_su)
        return pod * tree.spines_per_pod, tree.spines_per_pod, tree.leaf_spine_links

    def spine_span(tree: FatTree, spine: int) -> tuple[int, int, int]:
        group = spine % tree.spines_per_pod
        return group * tree.cores_per_group, tree.cores_per_group, tree.spine_core_links

    leaf_spine = old.leaf_spine_cables - sum(
        kept(i, leaf_span(old, i), leaf_span(new, i)) for i in range(old.leaves))
    spine_core = 0
    if old.tiers == 3 and new.tiers == 3:
        spine_core = old.spine_core_cables - sum(
            kept(j, spine_span(old, j), spine_span(new, j)) for j in range(old.spines))
    elif old.tiers == 3:
        spine_core = old.spine_core_cables
    return leaf_spine, spine_core


@check("fabric.growth_headroom")
def growth_headroom(plan: Plan) -> Iterator[Diagnostic]:
    """A warning (FABRIC-GROWTH) for a leaf-spine fabric whose upper tiers have no room for
    one more scalable unit: growing by one re-sizes the spines (or cores) and re-patches
    cables that are in service, where planned_scalable_units would have sized them for the
    growth at the start and an added unit would only add its leaves and their cables."""
    for network, fabric in sorted(plan.fabrics.items()):
        built = _as_built(plan, network, fabric)
        if built is None:
            continue
        config, hosts, tree = built
        planned = getattr(config, "planned_scalable_units", None)
        if planned is not None and planned > tree.sus:
            continue
        # one more scalable unit of the largest hosts; the storage fabric grows with the
        # compute nodes, so by a compute scalable unit when that is larger (a storage
        # fabric's own unit is one leaf's hosts)
        more = max(tree.su_nodes, _compute_unit(plan) if network == "storage" else 0)
        grown = _size(plan, config, fabric, hosts.hosts + more, hosts.most,
                      hosts.ports + more * hosts.most, None)
        if grown is None:
            continue
        leaf_spine, spine_core = moved_cables(tree, grown)
        if leaf_spine + spine_core == 0:
            continue
        yield _growth_finding(plan, network, fabric, tree, grown, leaf_spine, spine_core,
                              math.ceil((hosts.hosts + more) / more) if more != tree.su_nodes
                              else 0)


def _compute_unit(plan: Plan) -> int:
    """Nodes of one compute scalable unit (0 without one)."""
    config = plan.settings.fabric.compute
    return (getattr(config, "scalable_unit_nodes", None) or 0) if config is not None else 0


def _growth_finding(plan: Plan, network: str, fabric: FabricPlan, tree: FatTree,
                    grown: FatTree, leaf_spine: int, spine_core: int,
                    units: int = 0) -> Diagnostic:
    """FABRIC-GROWTH; ``units``: where the step is a compute scalable unit on a storage
    fabric, the units of that size the grown fabric fills (0: the fabric's own units)."""
    config = getattr(plan.settings.fabric, network)
    _, spine, _ = _models(plan, config)
    model = getattr(config, "spine_switch", None) or config.leaf_switch
    free = tree.spines * spine.ports - tree.leaf_spine_cables - tree.spine_core_cables
    need = tree.leaves_per_su * tree.leaf_up
    cores = f" and {grown.cores} cores (now {tree.cores})" if grown.cores != tree.cores else ""
    moves = f"{leaf_spine} of its {tree.leaf_spine_cables} leaf-spine cables"
    if spine_core:
        moves += f" and {spine_core} of its {tree.spine_core_cables} spine-core cables"
    first = "before the first render writes the lock, " if not plan.lock.exists else ""
    goal = tree.sus + 1
    unit = f"one more scalable unit of {tree.su_nodes} nodes"
    growing = f"growing from {tree.sus} to {goal} units"
    plan_it = f"fabric.{network}.planned_scalable_units: N (the units the cluster will grow to, " \
              f"{goal} or more)"
    if units:  # a storage fabric, by a compute scalable unit of ``more`` hosts
        more = grown.leaves - tree.leaves
        need = more * tree.leaf_up
        unit = f"one more compute scalable unit ({more} storage leaves)"
        growing = "growing by it"
        size = _compute_unit(plan)
        plan_it = f"fabric.{network}.scalable_unit_nodes: {size} and planned_scalable_units: " \
                  f"N (the units of {size} hosts it will grow to, {units} or more)"
        leaves = f"{more} more leaves"
    else:
        leaves = f"the unit's {tree.leaves_per_su} leaves"
    return Diagnostic(
        "FABRIC-GROWTH",
        f"{network} fabric has no room on its spines for {unit}: its {tree.spines} spines "
        f"({model}, {spine.ports} ports) have {free} free port(s), where {leaves} need "
        f"{need} uplinks spread evenly over them; {growing} takes "
        f"{grown.spines} spines{cores} and moves {moves} to other switches",
        fabric.spec_path, Severity.WARNING,
        hint=f"{first}plan the growth: {plan_it} sizes the spines for N now, and each "
             f"unit added adds its leaves and their cables and moves none; or ignore "
             f"FABRIC-GROWTH in policy.levels if the fabric will not grow",
        details={"measured": leaf_spine + spine_core, "limit": 0, "unit": "cables"})


@check("fabric.service_hosts_unit")
def service_hosts_unit(plan: Plan) -> Iterator[Diagnostic]:
    """A warning (FABRIC-SERVICE-SU) for a compute fabric of scalable units where hosts that
    are not compute nodes (login, storage, management servers with compute-fabric ports)
    take places of a unit, so that the GPU servers spill into one more unit: its leaves,
    their uplinks and any spines it adds are built for them. Their cost is the difference
    between the fabric built and the one the compute nodes alone would have."""
    fabric = plan.fabrics.get("compute")
    if fabric is None:
        return
    built = _as_built(plan, "compute", fabric)
    if built is None:
        return
    config, hosts, tree = built
    compute = {n.hostname for n in plan.compute_nodes}
    wiring = plan.fabric_wiring["compute"]
    hosts_on = list(wiring.hosts())
    service = sorted(h for h in hosts_on if h not in compute)
    if not service:
        return
    # a host's ports: its switches above, times its cables to each
    ports = {h: len(wiring.up[h]) * wiring.uplinks[h][1] for h in hosts_on}
    gpus = [h for h in hosts_on if h in compute]
    if not gpus:
        return
    alone = _size(plan, config, fabric, len(gpus), max(ports[h] for h in gpus),
                  sum(ports[h] for h in gpus), getattr(config, "planned_scalable_units", None))
    if alone is None or math.ceil(len(gpus) / tree.su_nodes) >= tree.sus:
        return
    leaves = tree.leaves - alone.leaves
    uppers = (tree.spines + tree.cores) - (alone.spines + alone.cores)
    cables = (tree.leaf_spine_cables + tree.spine_core_cables) - (
        alone.leaf_spine_cables + alone.spine_core_cables)
    if leaves <= 0:
        return
    yield Diagnostic(
        "FABRIC-SERVICE-SU",
        f"compute fabric: {len(service)} host(s) that are not compute nodes "
        f"({fold(service)}) take places of its scalable units of {tree.su_nodes}, so its "
        f"{len(gpus)} compute nodes fill {tree.sus} units where they alone fill "
        f"{alone.sus}: {leaves} more leaves, {uppers} more spine/core switches and {cables} "
        f"more switch-to-switch cables", (*fabric.spec_path, "scalable_unit_nodes")
        if getattr(config, "scalable_unit_nodes", None) else fabric.spec_path,
        Severity.WARNING,
        hint="give the service hosts no compute NICs (nics: of their node type; they reach "
             "the GPU nodes over the storage or management network), or put them on the "
             "storage fabric",
        details={"measured": tree.leaves, "limit": alone.leaves, "unit": "leaves"})
