"""Interruptions of a training job from the failure rates of the parts it runs on.

Each component class has a rate per unit: the reference table's (catalog/failure_rates.yaml
classes:, events / (units x hours)) x the scale of the published fleets at one end of their
range (plan/fleets.py: lowest, expected, highest; the expected scale by the node type's GPU
generation), or the spec's measured figure (reliability.failure_rates, or
workload.gpu_mtbf_hours for the whole of a GPU with its share of host and network), which is
used at every end. A job's interruptions per day are

    lambda(job) = lambda_job + sum over hardware classes of rate x scale x units x 24 h

where lambda_job, the software class, is counted once per job whatever its size: the size-
independent sources (the job's own software, launch, dependencies, collective timeouts) that
make small jobs fail more often per node than a series of parts predicts (Kokolis et al., HPCA
2025, section IV: MTTF of 1,024-GPU jobs 7.9 h where the per-node rate alone gives 29 h).
Failures of independent parts add up (a synchronous job stops when any of them fails), so the
job's MTTF is 1 / lambda. The units are counted per partition from the plan, by node type, never
node by node: GPUs, nodes, compute-fabric NIC ports (nic, link), the job's share of the compute
fabric's switches and NVLink trays, the PDUs of its racks and the liquid loops that cool them.

What one failure takes out of the job (its blast radius, in nodes): one node, or the node's
whole NVLink domain when the domain is a rack (an NVL72 job loses the rack); a leaf switch
takes out the hosts under it; a PDU its rack when the rack has no redundant feed; a CDU the
racks on its loop; a software failure no node (the job restarts). Hot spares replace what a
failure takes out; a failure whose blast radius is larger than the spares waits for repair.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, replace
from weakref import WeakKeyDictionary

from cluster_iac.plan.cooling import loop_figures
from cluster_iac.plan.fleets import ENDS, classes, per_job_days, scales
from cluster_iac.plan.model import Node, PartitionPlan, Plan

HOURS_A_DAY = 24
MILLION = 1e6
CLASSES = ("gpu", "hbm", "host", "psu", "nic", "link", "switch", "pdu", "cdu", "software")
NODE_LEVEL = frozenset({"gpu", "hbm", "host", "psu", "nic", "link"})


# Records without generated __eq__/__repr__ (eq=False, repr=False): see plan/model.py.
@dataclass(frozen=True, eq=False, repr=False)
class ClassRate:
    """One component class's failure rate and where it comes from."""

    key: str
    name: str
    unit: str  # 'gpu' | 'node' | 'nic' | 'link' | 'switch' | 'pdu' | 'cdu' | 'job'
    per_million_h: float | None  # the reference's failures per unit per 10^6 h; None: no figure
    source: str
    overridden: bool  # the spec gave it (measured): used as is at every end
    events: int | None = None  # the reference fleet's count (None where the spec gave it)
    units: int | None = None
    hours: float | None = None
    ends: tuple[float, ...] = ()  # the per-unit rate at each end (lowest, expected, highest)


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
    """One job of a partition: its size, its spares and its interruptions at one end."""

    partition: str
    nodes: int
    gpus: int
    spares: int
    spares_given: bool  # reliability.hot_spare_nodes names the partition
    terms: tuple[ClassTerm, ...]
    partition_gpus: int = 0  # the job's and the spares' GPUs
    end: str = "expected"  # of the published range (plan/fleets.py)

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


def _measured(plan: Plan) -> dict[str, tuple[float, str]]:
    """The spec's measured rates by class: reliability.failure_rates, and workload.gpu_mtbf_hours
    as the whole of a GPU's rate (the other classes then 0 unless failure_rates gives them)."""
    given = {k: (v, f"the spec (reliability.failure_rates.{k}, measured)")
             for k, v in plan.settings.reliability.failure_rates.items()}
    work = plan.settings.workload
    if "gpu_mtbf_hours" in work.model_fields_set:
        whole = (MILLION / work.gpu_mtbf_hours,
                 f"the spec (workload.gpu_mtbf_hours {work.gpu_mtbf_hours:g}, measured, per GPU)")
        for key in CLASSES:
            given.setdefault(key, whole if key == "gpu" else (0.0, whole[1]))
    return given


def class_rates(plan: Plan, generation: str | None = None) -> tuple[ClassRate, ...]:
    """Every class's rate: the spec's measured one, else the reference figure, events / (units x
    hours) of the fleet it was counted on (None: no figure), with its rate at each end of the
    published range for ``generation`` (the cluster's first GPU generation when None)."""
    measured = _measured(plan)
    spread = scales(generation if generation is not None else cluster_generation(plan))
    jobs = per_job_days()
    rates = []
    for key in CLASSES:
        entry = classes()[key]
        name, unit = entry["name"], entry["unit"]
        if key in measured:
            value, source = measured[key]
            rates.append(ClassRate(key, name, unit, value, source, True,
                                   ends=(value,) * len(ENDS)))
            continue
        events = entry.get("events")
        if events is None:
            rates.append(ClassRate(key, name, unit, None, entry["source"], False))
            continue
        units, hours = entry["units"], entry["hours"]
        rate = MILLION * events / (units * hours)
        if key == "software":
            ends = tuple(jobs[e] / HOURS_A_DAY * MILLION for e in ENDS)
        else:
            ends = tuple(rate * spread[e] for e in ENDS)
        rates.append(ClassRate(key, name, unit, rate, entry["source"], False, events, units,
                               hours, ends))
    return tuple(rates)


def cluster_generation(plan: Plan) -> str | None:
    return next((plan.node_types[n.node_type].gpu_architecture for n in plan.compute_nodes
                 if plan.node_types[n.node_type].gpu_architecture), None)


_JOBS: WeakKeyDictionary[Plan, dict[str, tuple[JobFailures, ...]]] = WeakKeyDictionary()
"""partition_jobs' answers by plan and end: report.md asks for the same ones up to ten times
(the goodput table at each end, the checkpoint figures of each partition), each a count of
the cluster's 12,500 nodes and 11,000 switches at 100,000 GPUs. A plan is never changed."""


def partition_jobs(plan: Plan, end: str = "expected") -> list[JobFailures]:
    """The largest job of each partition with compute nodes, in partition order (found once
    per plan and end: plain_partition_jobs, the tests' oracle, finds them each time)."""
    known = _JOBS.setdefault(plan, {})
    if end not in known:
        known[end] = tuple(plain_partition_jobs(plan, end))
    return list(known[end])


def plain_partition_jobs(plan: Plan, end: str = "expected") -> list[JobFailures]:
    """partition_jobs, found anew."""
    ctx = RateContext(plan, end)
    by_name = {n.hostname: n for n in ctx.nodes}
    jobs = []
    for partition in plan.partitions:
        nodes = [by_name[h] for h in partition.nodes if h in by_name]
        if nodes:
            jobs.append(_job(ctx, partition, nodes))
    return jobs


def cluster_job(plan: Plan, end: str = "expected") -> JobFailures | None:
    """Every compute node as one job, no spares: the cluster's own failure rate."""
    ctx = RateContext(plan, end)
    if not ctx.nodes:
        return None
    return _terms(ctx, "cluster", list(ctx.nodes), spares=0, spares_given=True)


def job_failures(plan: Plan, name: str, nodes: list[Node], end: str = "expected",
                 ctx: RateContext | None = None) -> JobFailures:
    """One job of ``nodes``, no spares, at one end of the range."""
    return _terms(ctx or RateContext(plan, end), name, nodes, spares=0, spares_given=True)


class RateContext:
    """What every job of one plan shares, counted once: the rates, the compute nodes, the
    fabric's switches and NIC ports (by node type, not node by node), each node type's scale."""

    def __init__(self, plan: Plan, end: str = "expected"):
        self.plan = plan
        self.end = end
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
        # each node type's hardware scale over the cluster's (its own GPU generation)
        base = scales(cluster_generation(plan))[end]
        self.type_scale = {t: scales(plan.node_types[t].gpu_architecture)[end] / base
                           for t in types} if base else dict.fromkeys(types, 1.0)

    def rate(self, rate: ClassRate) -> float:
        """The per-unit rate at this context's end (0 where there is no figure)."""
        return rate.ends[ENDS.index(self.end)] if rate.ends else 0.0


def _job(ctx: RateContext, partition: PartitionPlan, nodes: list[Node]) -> JobFailures:
    plan = ctx.plan
    given = plan.settings.reliability.hot_spare_nodes.get(partition.name)
    spares = given if given is not None else _node_blast(plan, Counter(n.node_type for n in nodes))
    spares = min(spares, len(nodes) - 1)
    job = _terms(ctx, partition.name, nodes[:len(nodes) - spares], spares, given is not None)
    spare_gpus = sum(plan.node_types[n.node_type].gpu_count for n in nodes[len(nodes) - spares:])
    return replace(job, partition_gpus=job.gpus + spare_gpus)


def _terms(ctx: RateContext, name: str, nodes: list[Node], spares: int,
           spares_given: bool) -> JobFailures:
    plan = ctx.plan
    types = Counter(n.node_type for n in nodes)
    units = _units(ctx, nodes, types)
    weights = _hardware_weights(ctx, types)
    blasts = _blasts(ctx, nodes, types)
    terms = []
    for rate in ctx.rates:
        count = units[rate.key]
        weight = weights.get(rate.key, 1.0) if not rate.overridden else 1.0
        per_day = ctx.rate(rate) / MILLION * count * weight * HOURS_A_DAY
        if rate.key == "pdu" and per_day and not _pdu_interrupts(plan, nodes):
            per_day = 0.0  # every rack of the job survives one PDU down (A/B or three-PDU)
        blast = blasts[rate.key]
        terms.append(ClassTerm(rate, count, per_day, blast, blast <= spares))
    gpus = sum(plan.node_types[t].gpu_count * n for t, n in types.items())
    return JobFailures(name, len(nodes), gpus, spares, spares_given, tuple(terms), end=ctx.end)


def _hardware_weights(ctx: RateContext, types: Counter[str]) -> dict[str, float]:
    """Each hardware class's units weighted by their node types' scale over the cluster's (1
    where every node is of one GPU generation)."""
    plan = ctx.plan
    if len(set(ctx.type_scale.values())) <= 1:
        return {}
    out: dict[str, float] = {}
    for key, per_type in (("gpu", lambda t: plan.node_types[t].gpu_count),
                          ("host", lambda t: 1), ("nic", lambda t: _nics(plan, t))):
        total = sum(per_type(t) * n for t, n in types.items())
        weighted = sum(per_type(t) * n * ctx.type_scale[t] for t, n in types.items())
        out[key] = weighted / total if total else 1.0
    out["hbm"], out["psu"], out["link"] = out["gpu"], out["host"], out["nic"]
    return out


def _nics(plan: Plan, node_type: str) -> int:
    return sum(n.count for n in plan.node_types[node_type].nics if n.role == "compute")


def _units(ctx: RateContext, nodes: list[Node], types: Counter[str]) -> dict[str, int]:
    """How many units of each class the job spans: its GPUs, nodes and compute NIC ports, its
    share of the compute fabric's switches (by NIC ports) and of the NVLink switch trays (by
    GPUs), rounded up; the PDUs of its racks and the loops that cool them."""
    plan = ctx.plan
    gpus = sum(plan.node_types[t].gpu_count * n for t, n in types.items())
    nics = sum(_nics(plan, t) * n for t, n in types.items())
    switches = math.ceil(ctx.switches["compute"] * nics / ctx.all_nics) if ctx.all_nics else 0
    if ctx.all_gpus:
        switches += math.ceil(ctx.switches["nvlink"] * gpus / ctx.all_gpus)
    units = {"gpu": gpus, "hbm": gpus, "software": 1, "host": len(nodes), "psu": len(nodes),
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


def _blasts(ctx: RateContext, nodes: list[Node], types: Counter[str]) -> dict[str, int]:
    """Nodes of the job one failure of each class takes out (PDU and CDU: 0 unless rated)."""
    plan = ctx.plan
    blasts = dict.fromkeys(NODE_LEVEL, min(_node_blast(plan, types), len(nodes)))
    blasts["switch"] = min(_leaf_hosts(plan, types), len(nodes))
    blasts["pdu"] = blasts["cdu"] = blasts["software"] = 0
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
