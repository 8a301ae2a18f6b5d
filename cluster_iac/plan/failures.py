"""Interruptions of a training job from the failure rates of the parts it runs on.

Each component class has a rate per unit (catalog/failure_rates.yaml: events / (units x hours)
of a published fleet, or the spec's reliability.failure_rates). A job's interruptions per day
are sum over classes of rate x the units the job spans x 24 h; failures of independent parts
add up (a synchronous job stops when any of them fails), so the job's MTBF is 1 / that sum.
The units are counted per partition from the plan, by node type, never node by node:
GPUs, nodes, compute-fabric NIC ports (nic, link), the job's share of the compute fabric's
switches and NVLink trays, the PDUs of its racks and the liquid loops that cool them.

What one failure takes out of the job (its blast radius, in nodes): one node, or the node's
whole NVLink domain when the domain is a rack (an NVL72 job loses the rack); a leaf switch
takes out the hosts under it; a PDU its rack when the rack has no redundant feed; a CDU the
racks on its loop. Hot spares replace what a failure takes out; a failure whose blast radius
is larger than the spares waits for repair.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from cluster_iac.catalog.snapshot import builtin_file
from cluster_iac.plan.cooling import loop_figures
from cluster_iac.plan.model import Node, PartitionPlan, Plan

HOURS_A_DAY = 24
MILLION = 1e6
CLASSES = ("gpu", "hbm", "host", "psu", "nic", "link", "switch", "pdu", "cdu", "software")
NODE_LEVEL = frozenset({"gpu", "hbm", "host", "psu", "nic", "link", "software"})


# Records without generated __eq__/__repr__ (eq=False, repr=False): see plan/model.py.
@dataclass(frozen=True, eq=False, repr=False)
class ClassRate:
    """One component class's failure rate and where it comes from."""

    key: str
    name: str
    unit: str  # 'gpu' | 'node' | 'nic' | 'link' | 'switch' | 'pdu' | 'cdu'
    per_million_h: float | None  # failures per unit per 10^6 h; None: no figure
    source: str
    overridden: bool  # the spec's reliability.failure_rates gave it
    events: int | None = None  # the published fleet's count (None where the spec gave it)
    units: int | None = None
    hours: float | None = None


@dataclass(frozen=True, eq=False, repr=False)
class ClassTerm:
    """One class in one job: units, interruptions a day, what a failure takes out."""

    rate: ClassRate
    units: int
    per_day: float
    blast_nodes: int  # nodes of the job one failure takes out (0: none, the job restarts)
    covered: bool  # the hot spares replace them


@dataclass(frozen=True, eq=False, repr=False)
class JobFailures:
    """The largest job of one partition: its size, its spares and its interruptions."""

    partition: str
    nodes: int
    gpus: int
    spares: int
    spares_given: bool  # reliability.hot_spare_nodes names the partition
    terms: tuple[ClassTerm, ...]
    partition_gpus: int = 0  # the job's and the spares' GPUs

    @property
    def per_day(self) -> float:
        return sum(t.per_day for t in self.terms)

    @property
    def mtbf_h(self) -> float | None:
        return HOURS_A_DAY / self.per_day if self.per_day else None

    @property
    def uncovered_per_day(self) -> float:
        """Interruptions a day whose blast radius the spares do not cover."""
        return sum(t.per_day for t in self.terms if not t.covered)


@lru_cache(maxsize=1)
def _builtin() -> dict[str, dict[str, Any]]:
    data: dict[str, dict[str, Any]] = builtin_file("failure_rates.yaml")
    return data


def class_rates(plan: Plan) -> tuple[ClassRate, ...]:
    """Every class's rate: the spec's override, else the built-in figure, events / (units x
    hours) of the fleet it was counted on (None: no figure)."""
    overrides = plan.settings.reliability.failure_rates
    rates = []
    for key in CLASSES:
        entry = _builtin()[key]
        name, unit = entry["name"], entry["unit"]
        if key in overrides:
            rates.append(ClassRate(key, name, unit, overrides[key],
                                   f"the spec (reliability.failure_rates.{key})", True))
            continue
        events = entry.get("events")
        if events is None:
            rates.append(ClassRate(key, name, unit, None, entry["source"], False))
            continue
        units, hours = entry["units"], entry["hours"]
        rates.append(ClassRate(key, name, unit, MILLION * events / (units * hours),
                               entry["source"], False, events, units, hours))
    return tuple(rates)


def partition_jobs(plan: Plan) -> list[JobFailures]:
    """The largest job of each partition with compute nodes, in partition order."""
    ctx = _Context(plan)
    by_name = {n.hostname: n for n in ctx.nodes}
    jobs = []
    for partition in plan.partitions:
        nodes = [by_name[h] for h in partition.nodes if h in by_name]
        if nodes:
            jobs.append(_job(ctx, partition, nodes))
    return jobs


def cluster_job(plan: Plan) -> JobFailures | None:
    """Every compute node as one job, no spares: the cluster's own failure rate."""
    ctx = _Context(plan)
    if not ctx.nodes:
        return None
    return _terms(ctx, "cluster", list(ctx.nodes), spares=0, spares_given=True)


def sized_jobs(plan: Plan) -> dict[str, list[tuple[str, JobFailures]]]:
    """Each partition's jobs of the sizes report.md predicts busbw for (one node, one NVLink
    domain, one scalable unit, policy.allreduce_job_sizes, the whole partition), no spares."""
    # report.md's only: the busbw model stays off validate's path (tests/test_startup.py)
    from cluster_iac.plan.collectives.jobs import partition_jobs as busbw_jobs

    ctx = _Context(plan)
    return {p.name: [(label, _terms(ctx, label, list(nodes), spares=0, spares_given=True))
                     for label, nodes in busbw_jobs(plan, p) if nodes]
            for p in plan.partitions}


class _Context:
    """What every job of one plan shares, counted once: the rates, the compute nodes, the
    fabric's switches and NIC ports (by node type, not node by node)."""

    def __init__(self, plan: Plan):
        self.plan = plan
        self.rates = class_rates(plan)
        self.nodes = plan.compute_nodes
        self.switches = Counter(s.network for s in plan.switches
                                if s.network in ("compute", "nvlink"))
        types = Counter(n.node_type for n in self.nodes)
        self.all_nics = sum(_nics(plan, t) * n for t, n in types.items())
        self.all_gpus = sum(plan.node_types[t].gpu_count * n for t, n in types.items())
        # PDUs and CDUs have no built-in rate: their racks are looked at only when given one
        self.racked = any(r.per_million_h for r in self.rates if r.key in ("pdu", "cdu"))
        self.loops = _loops(plan) if self.racked else []


def _job(ctx: _Context, partition: PartitionPlan, nodes: list[Node]) -> JobFailures:
    plan = ctx.plan
    given = plan.settings.reliability.hot_spare_nodes.get(partition.name)
    spares = given if given is not None else _node_blast(plan, Counter(n.node_type for n in nodes))
    spares = min(spares, len(nodes) - 1)
    job = _terms(ctx, partition.name, nodes[:len(nodes) - spares], spares, given is not None)
    spare_gpus = sum(plan.node_types[n.node_type].gpu_count for n in nodes[len(nodes) - spares:])
    return replace(job, partition_gpus=job.gpus + spare_gpus)


def _terms(ctx: _Context, name: str, nodes: list[Node], spares: int,
           spares_given: bool) -> JobFailures:
    plan = ctx.plan
    types = Counter(n.node_type for n in nodes)
    units = _units(ctx, nodes, types)
    blasts = _blasts(ctx, nodes, types)
    terms = []
    for rate in ctx.rates:
        count = units[rate.key]
        per_day = (rate.per_million_h or 0) / MILLION * count * HOURS_A_DAY
        if rate.key == "pdu" and per_day and not _pdu_interrupts(plan, nodes):
            per_day = 0.0  # every rack of the job survives one PDU down (A/B or three-PDU)
        blast = blasts[rate.key]
        terms.append(ClassTerm(rate, count, per_day, blast, blast <= spares))
    gpus = sum(plan.node_types[t].gpu_count * n for t, n in types.items())
    return JobFailures(name, len(nodes), gpus, spares, spares_given, tuple(terms))


def _nics(plan: Plan, node_type: str) -> int:
    return sum(n.count for n in plan.node_types[node_type].nics if n.role == "compute")


def _units(ctx: _Context, nodes: list[Node], types: Counter[str]) -> dict[str, int]:
    """How many units of each class the job spans: its GPUs, nodes and compute NIC ports, its
    share of the compute fabric's switches (by NIC ports) and of the NVLink switch trays (by
    GPUs), rounded up; the PDUs of its racks and the loops that cool them."""
    plan = ctx.plan
    gpus = sum(plan.node_types[t].gpu_count * n for t, n in types.items())
    nics = sum(_nics(plan, t) * n for t, n in types.items())
    switches = math.ceil(ctx.switches["compute"] * nics / ctx.all_nics) if ctx.all_nics else 0
    if ctx.all_gpus:
        switches += math.ceil(ctx.switches["nvlink"] * gpus / ctx.all_gpus)
    units = {"gpu": gpus, "hbm": gpus, "software": gpus, "host": len(nodes), "psu": len(nodes),
             "nic": nics, "link": nics, "switch": switches, "pdu": 0, "cdu": 0}
    if ctx.racked:
        racks = {n.rack for n in nodes}
        units["pdu"] = sum(1 for d in plan.power_devices if d.kind == "pdu" and d.rack in racks)
        units["cdu"] = sum(1 for loop in ctx.loops if racks.intersection(loop))
    return units


def _loops(plan: Plan) -> list[set[str]]:
    if not plan.settings.cooling.loops:
        return []
    return [set(fig.racks) for fig in loop_figures(plan)]


def _node_blast(plan: Plan, types: Counter[str]) -> int:
    """Nodes one node-level failure takes out: the NVLink domain's trays of a rack domain."""
    rack_types = {t for t in types if plan.node_types[t].nvlink_domain == "rack"}
    if not rack_types:
        return 1
    return max((len(d.nodes) for d in plan.nvlink_domains if d.kind == "rack"), default=1)


def _blasts(ctx: _Context, nodes: list[Node], types: Counter[str]) -> dict[str, int]:
    """Nodes of the job one failure of each class takes out (PDU and CDU: 0 unless rated)."""
    plan = ctx.plan
    blasts = dict.fromkeys(NODE_LEVEL, min(_node_blast(plan, types), len(nodes)))
    blasts["switch"] = min(_leaf_hosts(plan, types), len(nodes))
    blasts["pdu"] = blasts["cdu"] = 0
    if ctx.racked:
        per_rack = Counter(n.rack for n in nodes)
        blasts["pdu"] = max(per_rack.values())
        blasts["cdu"] = max((sum(per_rack[r] for r in loop) for loop in ctx.loops), default=0)
    return blasts


def _leaf_hosts(plan: Plan, types: Counter[str]) -> int:
    """Hosts under one leaf switch of the compute fabric: a rail-optimized leaf carries one rail
    of every node of its scalable unit; a plain leaf its ports' worth of whole nodes."""
    fabric = plan.fabrics.get("compute")
    if fabric is None or not fabric.switch_counts.get("leaf"):
        return 0
    if fabric.design == "rail-optimized":
        return fabric.scalable_unit_nodes
    links = fabric.link_counts.get("node-leaf", 0) / fabric.switch_counts["leaf"]
    nics = max((_nics(plan, t) for t in types), default=1) or 1
    return math.ceil(links / nics)


def _pdu_interrupts(plan: Plan, nodes: list[Node]) -> bool:
    """Whether one PDU down stops a node of the job: its rack's PDUs are not redundant."""
    profiles = plan.settings.power.pdu_profiles
    racks = {r.name: r.pdu_profile for r in plan.racks}
    return any(profiles[racks[rack]].layout == "single" for rack in {n.rack for n in nodes})
