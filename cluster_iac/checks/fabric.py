"""Fabric checks: switch radix, oversubscription, rail alignment, connectivity, predicted busbw."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from fractions import Fraction
from functools import cache
from typing import TYPE_CHECKING

from cluster_iac.base.errors import Diagnostic, Severity
from cluster_iac.base.runs import runs
from cluster_iac.checks.registry import check
from cluster_iac.plan import Plan
from cluster_iac.plan.fattree import parse_ratio
from cluster_iac.plan.switching import FABRIC_MTU

if TYPE_CHECKING:  # plan/collectives loads only for a busbw policy (tests/test_startup.py)
    from cluster_iac.plan.collectives import JobPrediction

NETWORK_GRAPHS = ("compute", "storage", "management", "bmc")
_LEG = re.compile(r"(p\d+)s\d+")  # a breakout leg of a fabric switch port: cage, leg


def ratio_text(value: float) -> str:
    """2.0 -> '2:1', 1.5 -> '1.5:1' (the way the spec writes it)."""
    return f"{value:.3g}:1"


@check("fabric.radix")
def radix(plan: Plan) -> Iterator[Diagnostic]:
    """No switch has more cables of its network than ports (plan.links against the catalog;
    a fabric switch's management port is cabled to another network and not counted)."""
    links = plan.links
    used: dict[str, Counter[str]] = {}  # network -> device -> its cables in that network
    for start, stop in runs(links.network):  # the builders append a network's cables together
        ends = used.setdefault(links.network[start], Counter())
        ends.update(links.a_device[start:stop])
        ends.update(links.b_device[start:stop])
    over = [(sw, used[sw.network][sw.name] if sw.network in used else 0)
            for sw in plan.switches if sw.network in NETWORK_GRAPHS]
    # only the switches over their radix sorted (by network, then name)
    over = sorted(((sw, n) for sw, n in over if n > sw.ports),
                  key=lambda found: (found[0].network, found[0].name))
    cages = _split_cages(plan, {sw.name: sw.network for sw, _ in over}) if over else {}
    for sw, n in over:
        n = cages.get(sw.name, n)
        if n <= sw.ports:
            continue
        yield Diagnostic(
            "FABRIC-RADIX",
            f"{sw.network} {sw.tier} switch {sw.name} ({sw.model}) has {n} cables but "
            f"{sw.ports} ports; over by {n - sw.ports}", sw.spec_path,
            details={"measured": n, "limit": sw.ports, "unit": "ports"})


def _split_cages(plan: Plan, names: dict[str, str]) -> dict[str, int]:
    """Ports in use on switches with split ports (port breakout: 'p5s1' and 'p5s2' are the
    two legs of cage p5, one port of the catalog's radix): each cable end's port with its
    leg stripped, counted once. Only for the switches over their radix by cable count (a
    split leaf has twice as many host cables as cages), so a fabric without breakout never
    pays for it."""
    links = plan.links
    ports: dict[str, set[str]] = {}
    split = False
    ends = ((links.a_device, links.a_port), (links.b_device, links.b_port))
    for devices, names_of in ends:
        for network, device, port in zip(links.network, devices, names_of, strict=True):
            if names.get(device) == network:
                cage = _cage(port)
                split = split or cage != port
                ports.setdefault(device, set()).add(cage)
    return {name: len(used) for name, used in ports.items()} if split else {}


@cache  # a few hundred names (p1-p64 and their legs, swp1-swp48) on 100,000s of cable ends
def _cage(port: str) -> str:
    """A fabric switch port's cage: 'p5s2' (a breakout leg, compile/build_fabric.py) -> 'p5';
    any other name ('p5', a management switch's 'swp5') is its own."""
    match = _LEG.fullmatch(port)
    return match[1] if match else port


@check("fabric.oversubscription")
def oversubscription(plan: Plan) -> Iterator[Diagnostic]:
    """Each tier of the compute fabric within policy.max_oversubscription (1:1 by default)."""
    fabric = plan.fabrics.get("compute")
    if fabric is None:
        return
    allowed = parse_ratio(plan.settings.policy.max_oversubscription)
    for tier in sorted(fabric.tier_bandwidth_gbps):
        down, up = fabric.tier_bandwidth_gbps[tier]
        ratio = fabric.oversubscription(tier)
        if Fraction(ratio).limit_denominator(1000) > allowed:
            yield Diagnostic(
                "FABRIC-OVERSUBSCRIPTION",
                f"compute fabric {tier} tier is {ratio_text(ratio)} oversubscribed ({down} Gb/s "
                f"down, {up} Gb/s up per {tier}); the policy allows "
                f"{plan.settings.policy.max_oversubscription} (policy.max_oversubscription), "
                f"which needs {float(down / allowed - up):g} Gb/s more uplink per {tier}",
                (*fabric.spec_path, "oversubscription"),
                details={"measured": round(ratio, 3), "limit": float(allowed), "unit": "ratio"})


@check("fabric.rail_alignment")
def rail_alignment(plan: Plan) -> Iterator[Diagnostic]:
    """Rail-optimized: NIC i (0-based) of every node lands on rail leaf i+1 of its own SU."""
    fabric = plan.fabrics.get("compute")
    wiring = plan.fabric_wiring.get("compute")
    if fabric is None or wiring is None or fabric.design != "rail-optimized":
        return
    wrong: list[str] = []
    rails, sus, up = wiring.rail, wiring.su, wiring.up
    in_order = tuple(range(1, max(map(len, up.values()), default=0) + 1))  # NIC i: rail i+1
    # leaves -> their one SU when they are rails 1, 2, ... in order, else None: judged once
    # per set of leaves (a rail leaf's hosts share one), not once per host
    unit_of: dict[tuple[str, ...], int | None] = {}
    for node in wiring.hosts():
        leaves = up[node]
        su = sus.get(node)
        if leaves not in unit_of:
            units = set(map(sus.get, leaves))
            unit_of[leaves] = units.pop() if len(units) == 1 and tuple(
                map(rails.get, leaves)) == in_order[:len(leaves)] else None
        # a host's whole NIC row at once; the cable by cable loop only for a wrong one
        if su is not None and unit_of[leaves] == su:
            continue
        for nic, leaf in enumerate(leaves):
            if rails.get(leaf) != nic + 1 or sus.get(leaf) != su:
                wrong.append(f"{node} NIC {nic} on {leaf} "
                             f"(rail {rails.get(leaf)}, SU {sus.get(leaf)})")
    if wrong:
        wrong.sort()
        more = f" and {len(wrong) - 1} more" if len(wrong) > 1 else ""
        yield Diagnostic(
            "FABRIC-RAIL",
            f"rail-optimized compute fabric: {wrong[0]}{more}; NIC i of every node must "
            f"reach rail leaf i+1 of its own scalable unit", (*fabric.spec_path, "design"),
            details={"measured": len(wrong), "limit": 0, "unit": "cables"})


def _gpu_nodes(plan: Plan) -> list[str]:
    return [n.hostname for n in plan.compute_nodes
            if plan.node_types[n.node_type].gpu_count > 0]


@check("fabric.connectivity")
def connectivity(plan: Plan) -> Iterator[Diagnostic]:
    """Every GPU node reaches every other: one connected component of the compute fabric
    (NVLink domains reach each other only through it)."""
    hosts = _gpu_nodes(plan)
    wanted = set(hosts)
    domains = {d.name for d in plan.nvlink_domains if not wanted.isdisjoint(d.nodes)}
    wiring = plan.fabric_wiring.get("compute")
    if len(hosts) < 2 or len(domains) == 1:
        return
    if wiring is None or plan.fabrics.get("compute") is None:
        yield Diagnostic(
            "FABRIC-NONE",
            f"{len(hosts)} GPU nodes have no compute fabric: jobs spanning nodes fall back to "
            f"TCP over the management network", ("fabric",), Severity.INFO,
            hint="declare fabric.compute (technology, leaf_switch) for multi-node jobs",
            decided_by=_groups_of(plan, hosts))
        return
    cabled = wanted.intersection(wiring.tier)
    missing = sorted(wanted.difference(cabled))
    reached = wiring.reach(next(h for h in hosts if h in cabled)) if cabled else set()
    cut_off = sorted(cabled.difference(reached))
    for label, names in (("is not cabled to", missing), ("cannot reach the rest of", cut_off)):
        if names:
            more = f" and {len(names) - 1} more" if len(names) > 1 else ""
            yield Diagnostic(
                "FABRIC-CONNECTIVITY",
                f"GPU node {names[0]}{more} {label} the compute fabric; "
                f"{len(hosts) - len(names)} of {len(hosts)} GPU nodes are connected",
                ("fabric", "compute"), details={"measured": len(names), "limit": 0,
                                                "unit": "nodes"})


@check("fabric.sharp")
def sharp(plan: Plan) -> Iterator[Diagnostic]:
    """SHARP needs InfiniBand: the reductions run in Quantum switches, RoCE has none."""
    section = plan.settings.fabric.compute
    if section is not None and section.sharp and section.technology != "infiniband":
        yield Diagnostic(
            "FABRIC-SHARP",
            f"fabric.compute.sharp needs InfiniBand: SHARP reduces in NVIDIA Quantum "
            f"InfiniBand switches, and a {section.technology} fabric has no in-network "
            f"reduction for NCCL's CollNet", ("fabric", "compute", "sharp"),
            hint="drop sharp, or build the compute fabric on InfiniBand")


@check("fabric.mtu")
def mtu(plan: Plan) -> Iterator[Diagnostic]:
    """The host MTU of an Ethernet fabric (fabric.<network>.underlay.host_mtu) against the
    largest frame its switch ports carry (plan/switching.py FABRIC_MTU): a host that sends
    larger frames than a leaf port takes loses them (RoCE path MTU discovery does not fall
    back). Every host port of the fabric has that MTU (compile/plan_switches.py), so a
    fabric with a host cabled to it is judged by the setting, not port by port (its ports
    are the writers' alone: compile.EMIT_ONLY)."""
    worst: dict[str, int] = {}
    for fabric in {c.fabric for c in plan.switch_configs.values()}:
        wiring = plan.fabric_wiring.get(fabric)
        if wiring is not None and next(wiring.hosts(), None) is not None:
            worst[fabric] = getattr(plan.settings.fabric, fabric).underlay.host_mtu
    for fabric, host_mtu in sorted(worst.items()):
        if host_mtu > FABRIC_MTU:
            yield Diagnostic(
                "FABRIC-MTU", f"fabric.{fabric}.underlay.host_mtu is {host_mtu} bytes, larger "
                f"than the {FABRIC_MTU} bytes a switch port carries: frames above "
                f"{FABRIC_MTU} are dropped at the leaf", ("fabric", fabric, "underlay",
                                                            "host_mtu"),
                hint=f"set host_mtu to {FABRIC_MTU} or less (9000 is the usual RoCE host MTU)",
                details={"measured": host_mtu, "limit": FABRIC_MTU, "unit": "bytes"})


@check("fabric.allreduce_busbw")
def allreduce_busbw(plan: Plan) -> Iterator[Diagnostic]:
    """Predicted NCCL all_reduce busbw of the job policy.min_allreduce_busbw_job names (the
    whole partition by default), in each partition, against the policy's minimum."""
    minimum = plan.settings.policy.min_allreduce_busbw_gbs
    if minimum is None:
        return
    # The busbw model loads only for a policy that asks for a figure: 1.5 % of the
    # instructions of a validate that does not (tests/test_startup.py keeps it so)
    from cluster_iac.plan.collectives import policy_job, size_text

    for partition in plan.partitions:
        p = policy_job(plan, partition)
        if p is None or p.shape.gpus < 2 or p.busbw_gbs >= minimum:
            continue
        yield Diagnostic(
            "FABRIC-BUSBW",
            f"partition {p.partition}: predicted all_reduce busbw of {_job_text(p)} is "
            f"{p.busbw_gbs:.1f} GB/s at {size_text(p.size_bytes)}, "
            f"{100 * p.busbw_gbs / minimum:.0f}% of the policy's {minimum:g} GB/s "
            f"(policy.min_allreduce_busbw_gbs), short by {minimum - p.busbw_gbs:.1f} GB/s; "
            f"{bounds_text(p)}", _busbw_path(plan, p),
            decided_by=(("slurm", "partitions"),),
            details={"measured": round(p.busbw_gbs, 2), "limit": minimum, "unit": "GB/s"})


def _job_text(p: JobPrediction) -> str:
    """'the whole partition (1016 GPUs)', 'one node (8 GPUs)', '64 GPUs'."""
    names = {"partition": "the whole partition", "node": "one node",
             "nvlink_domain": "one NVLink domain", "scalable_unit": "one scalable unit"}
    return f"{names[p.job]} ({p.shape.gpus} GPUs)" if p.job in names else p.job


def bounds_text(p: JobPrediction) -> str:
    """What NCCL would run and what limits it, e.g. 'NCCL would run NVLS-tree, limited by
    the network: 8 NICs per NVLink domain, 400.0 GB/s line rate x 0.96 (infiniband) / 2:1'."""
    s = p.shape
    if p.chosen is None and p.missing == "no compute fabric":
        return (f"no algorithm reaches across {s.domains} NVLink domains without a compute "
                f"fabric (NCCL falls back to TCP sockets, not modelled)")
    if p.chosen is None:
        return ("no algorithm NCCL may run reaches these GPUs (NCCL_ALGO, NCCL_NVLS_ENABLE or "
                "NCCL_COLLNET_ENABLE in the NCCL environment leave none; NCCL would fail)")
    text = f"NCCL would run {p.chosen.label}, limited by "
    if p.chosen.limit != "network":
        return text + f"{p.chosen.limit} ({s.intra_gbs:g} GB/s per GPU)"
    return text + (f"the network: {s.net_line_gbs:.1f} GB/s of NICs per NVLink domain x "
                   f"{s.net_efficiency:g} ({s.technology}), {ratio_text(s.oversubscription)} "
                   f"oversubscribed on the job's path")


def _groups_of(plan: Plan, hosts: list[str]) -> tuple[tuple[str | int, ...], ...]:
    """The spec paths of the node groups these hosts belong to, in spec order."""
    wanted = set(hosts)
    return tuple(dict.fromkeys(n.spec_path[:2] for n in plan.nodes if n.hostname in wanted))


def _busbw_path(plan: Plan, p: JobPrediction) -> tuple[str | int, ...]:
    """Cite what limits the prediction: the fabric's oversubscription, the NICs of the job's
    node type (too few or too slow), the fabric (none), or the partition (NVLink)."""
    if p.chosen is None and p.missing == "no compute fabric":
        return ("fabric",)
    if p.chosen is None:
        return ("nccl",)
    if p.chosen.limit == "network" and p.shape.oversubscription > 1:
        return ("fabric", "compute", "oversubscription")
    if p.chosen.limit == "network":
        return (*plan.node_types[p.node_types[0]].spec_path, "nics")
    part = next(x for x in plan.partitions if x.name == p.partition)
    return part.spec_path


@check("fabric.overbuilt")
def overbuilt(plan: Plan) -> Iterator[Diagnostic]:
    """An info finding for a fabric built with switch tiers although all its hosts' ports fit
    one of its leaf switches: that one switch is the cheaper fabric (no spines, no leaf-spine
    cables, no optics for them). The builder picks it by itself ('tiers: auto' without
    scalable units); a spec that forces tiers or scalable units gets the finding, one that
    plans scalable units to grow into does not."""
    for network, fabric in sorted(plan.fabrics.items()):
        config = getattr(plan.settings.fabric, network, None)
        if fabric.tiers < 2 or config is None or \
                getattr(config, "planned_scalable_units", None) is not None:
            continue
        leaf = next(s for s in plan.switches if s.network == network and s.tier == "leaf")
        ports = fabric.link_counts.get("node-leaf", 0)
        if ports > leaf.ports:
            continue
        forced = [key for key, default in (("tiers", "auto"), ("scalable_unit_nodes", None))
                  if getattr(config, key, default) != default]
        because = f" (fabric.{network}.{' and '.join(forced)} asks for it)" if forced else ""
        uppers = sum(n for tier, n in fabric.switch_counts.items() if tier != "leaf")
        cables = sum(n for tier, n in fabric.link_counts.items() if tier != "node-leaf")
        yield Diagnostic(
            "FABRIC-OVERBUILT",
            f"{network} fabric: its {ports} host ports fit one {leaf.model} ({leaf.ports} "
            f"ports), but it is built as {fabric.switch_counts['leaf']} leaves and {uppers} "
            f"upper-tier switches with {cables} switch-to-switch cables{because}; one "
            f"{leaf.model} is non-blocking with {leaf.ports - ports} spare ports",
            (*fabric.spec_path, forced[0]) if forced else fabric.spec_path, Severity.INFO,
            hint=f"remove {' and '.join(forced)} to build the single switch" if forced
            else None,
            details={"measured": fabric.switch_counts["leaf"] + uppers, "limit": 1,
                     "unit": "switches"})
