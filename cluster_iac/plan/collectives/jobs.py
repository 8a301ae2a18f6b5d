"""Predicted all_reduce busbw per partition and job size: which jobs, and what NCCL picks."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import compress, repeat
from operator import attrgetter, eq

from cluster_iac.plan.collectives.algorithms import (
    Estimate,
    JobShape,
    estimates,
    nccl_choice,
)
from cluster_iac.plan.collectives.shape import (
    job_shape,
    node_domain,
    nvlink_owners,
    scalable_unit,
)
from cluster_iac.plan.model import Node, PartitionPlan, Plan

_SIZE = re.compile(r"^([1-9][0-9]*)([KMG]?)$")
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
NAMED_JOBS = ("node", "nvlink_domain", "scalable_unit", "partition")
Jobs = list[tuple[str, tuple[Node, ...]]]  # (job, its nodes): a named job or a size's label


# Records without generated __eq__/__repr__ (eq=False, repr=False): see plan/model.py.
@dataclass(frozen=True, eq=False, repr=False)
class JobPrediction:
    """The busbw of one all_reduce over one job's GPUs, per algorithm and as NCCL picks."""

    partition: str
    job: str  # 'node' | 'nvlink_domain' | 'scalable_unit' | 'partition' | '<n> GPUs'
    shape: JobShape
    size_bytes: int
    estimates: tuple[Estimate, ...]
    chosen: Estimate | None  # None for a one-GPU job or without a fabric between domains
    node_types: tuple[str, ...] = ()  # the job's GPU node types, in node order

    @property
    def busbw_gbs(self) -> float:
        return self.chosen.busbw_gbs if self.chosen is not None else 0.0

    @property
    def missing(self) -> str:
        """Why there is no prediction ('' when there is one)."""
        if self.chosen is not None:
            return ""
        if self.shape.gpus < 2:
            return "one GPU"
        if self.shape.domains > 1 and self.shape.net_line_gbs == 0:
            return "no compute fabric"
        return "no algorithm NCCL may run"

    def of(self, algorithm: str) -> Estimate | None:
        return next((e for e in self.estimates if e.algorithm == algorithm), None)


def message_bytes(size: int | str) -> int:
    """nccl-tests' size syntax: 8G = 8 x 2**30 bytes (its parsesize reads K, M, G as 1024s)."""
    if isinstance(size, int):
        return size
    match = _SIZE.match(size)
    if match is None:
        raise ValueError(f"not a message size: {size!r}")
    return int(match.group(1)) * _UNITS[match.group(2)]


def size_text(size_bytes: int) -> str:
    """8589934592 -> '8 GiB' (the largest binary unit that divides it), else bytes."""
    for unit, factor in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size_bytes % factor == 0:
            return f"{size_bytes // factor} {unit}"
    return f"{size_bytes} B"


def predict(plan: Plan, nodes: Sequence[Node], partition: str = "", job: str = "",
            size_bytes: int | None = None,
            owners: Mapping[str, str] | None = None) -> JobPrediction | None:
    """The prediction for one job on every GPU of ``nodes`` (None without GPUs); ``owners``
    as job_shape takes it."""
    mig = {name for name, nt in plan.node_types.items() if nt.mig}
    if mig and any(n.node_type in mig for n in nodes):
        # MIG instances have no NVLink and no GPU peer-to-peer (NVIDIA MIG user guide,
        # "Application Considerations"): the model's rings over NVLink do not apply
        return None
    shape = job_shape(plan, nodes, owners)
    if shape is None:
        return None
    size = size_bytes if size_bytes is not None else message_bytes(
        plan.settings.policy.allreduce_message_size)
    found = estimates(shape, size)
    types = tuple(dict.fromkeys(n.node_type for n in nodes
                                if plan.node_types[n.node_type].gpu_count > 0))
    return JobPrediction(partition, job, shape, size, found, nccl_choice(found), types)


def partition_predictions(plan: Plan, partition: PartitionPlan,
                          candidates: Jobs | None = None) -> list[JobPrediction]:
    """One prediction per job size of a partition, smallest first, duplicates dropped.
    ``candidates``: the partition's asked_jobs, where the caller has them already."""
    out = []
    owners = nvlink_owners(plan)  # each job's NVLink domains from one table
    for job, nodes in partition_jobs(plan, partition, owners, candidates):
        prediction = predict(plan, nodes, partition.name, job, owners=owners)
        if prediction is not None:
            out.append(prediction)
    return out


def predictions(plan: Plan) -> list[JobPrediction]:
    """Every partition's job sizes, in spec order."""
    return [p for part in plan.partitions for p in partition_predictions(plan, part)]


def policy_job(plan: Plan, partition: PartitionPlan) -> JobPrediction | None:
    """The prediction of the job policy.min_allreduce_busbw_job names in a partition (the
    whole partition where it holds less: a partition without a fabric has no SU)."""
    wanted = plan.settings.policy.min_allreduce_busbw_job
    owners = nvlink_owners(plan)
    jobs = job_nodes(plan, partition, [wanted] if isinstance(wanted, int) else [], owners)
    named = dict(jobs)
    # an asked size is the one job whose label is not one of the named jobs
    asked = next((label for label, _ in jobs if label not in NAMED_JOBS), "")
    job = wanted if isinstance(wanted, str) else asked
    if not named.get(job):
        job = "partition"
    return predict(plan, named.get(job, ()), partition.name, job, owners=owners)


def oversized(candidates: Jobs) -> list[str]:
    """The labels of the policy.allreduce_job_sizes a partition cannot hold, from its
    asked_jobs (shown as such, never dropped; checks/goodput.py makes each a located warning)."""
    return [job for job, nodes in candidates if job not in NAMED_JOBS and not nodes]


def asked_jobs(plan: Plan, partition: PartitionPlan,
               owners: Mapping[str, str] | None = None) -> Jobs:
    """job_nodes with the sizes policy.allreduce_job_sizes asks for."""
    return job_nodes(plan, partition, plan.settings.policy.allreduce_job_sizes, owners)


def partition_jobs(plan: Plan, partition: PartitionPlan,
                   owners: Mapping[str, str] | None = None,
                   candidates: Jobs | None = None) -> Jobs:
    """The distinct jobs of a partition, smallest first: a job with the same nodes as a
    smaller one is dropped, except the partition, which takes its place. ``candidates``: the
    partition's asked_jobs, made here when not given."""
    if candidates is None:
        candidates = asked_jobs(plan, partition, owners)
    out: dict[tuple[str, ...], str] = {}
    members: dict[tuple[str, ...], tuple[Node, ...]] = {}
    for job, nodes in sorted(candidates, key=lambda c: _gpu_total(plan, c[1])):
        key = tuple(n.hostname for n in nodes)
        if nodes and (key not in out or job == "partition"):
            out[key] = job
            members[key] = nodes
    return [(job, members[key]) for key, job in out.items()]


def job_nodes(plan: Plan, partition: PartitionPlan, extra_gpus: Sequence[int],
              owners: Mapping[str, str] | None = None) -> Jobs:
    """(job, nodes) of one node, one NVLink domain, one scalable unit (the first node's),
    ``extra_gpus`` sizes and the whole partition."""
    hosts = {n.hostname: n for n in plan.nodes}
    nodes = tuple(hosts[h] for h in partition.nodes if h in hosts
                  and plan.node_types[hosts[h].node_type].gpu_count > 0)
    if not nodes:
        return []
    first = nodes[0]
    domain = node_domain(plan, nodes, first, owners)
    unit = _same_unit(plan, nodes, scalable_unit(plan, first))
    jobs = [("node", (first,)), ("nvlink_domain", domain), ("scalable_unit", unit)]
    available = _gpu_total(plan, nodes)
    for gpus in extra_gpus:
        taken = first_gpus(plan, nodes, gpus)
        jobs.append((size_label(gpus, _gpu_total(plan, taken), available), taken))
    return [*jobs, ("partition", nodes)]


def _same_unit(plan: Plan, nodes: Sequence[Node], su: object) -> tuple[Node, ...]:
    """The nodes whose scalable unit is ``su`` (none for None). A numbered unit is looked up
    in the wiring's table for all nodes at once: scalable_unit's rule, without a call per
    node (12,500 of them at 100,000 GPUs)."""
    if su is None:
        return ()
    wiring = plan.fabric_wiring["compute"]
    if not isinstance(su, int):  # leaves for a unit: node by node
        return tuple(n for n in nodes if scalable_unit(plan, n) == su)
    numbered = map(wiring.su.get, map(attrgetter("hostname"), nodes))
    return tuple(compress(nodes, map(eq, numbered, repeat(su))))


def size_label(asked: int, gpus: int, available: int) -> str:
    """The label of a job size asked in GPUs: what whole nodes hold, and what was asked where
    that differs ('4,104 GPUs (4,100 asked, rounded up to whole nodes)'); an ask above the
    partition's ``available`` GPUs says so (``gpus`` 0)."""
    if not gpus:
        return f"{asked:,} GPUs (more than the partition's {available:,})"
    if gpus == asked:
        return f"{gpus:,} GPUs"
    return f"{gpus:,} GPUs ({asked:,} asked, rounded up to whole nodes)"


def _gpu_total(plan: Plan, nodes: Sequence[Node]) -> int:
    return sum(plan.node_types[n.node_type].gpu_count for n in nodes)


def first_gpus(plan: Plan, nodes: Sequence[Node], gpus: int) -> tuple[Node, ...]:
    """Whole nodes in partition order until they hold ``gpus`` GPUs (none when the partition
    holds fewer)."""
    out: list[Node] = []
    total = 0
    for node in nodes:
        if total >= gpus:
            break
        out.append(node)
        total += plan.node_types[node.node_type].gpu_count
    return tuple(out) if total >= gpus else ()
