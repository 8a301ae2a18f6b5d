"""MTTF and goodput of every job size report.md shows: one node, one NVLink domain, one scalable
unit, each size of policy.allreduce_job_sizes (whole nodes in partition order, the real GPU count
printed: 4,100 GPUs asked on 8-GPU nodes is 513 nodes, 4,104 GPUs) and the whole partition; each at
the three ends of the published failure rates (plan/fleets.py). A size no partition holds is kept
as such, for a located finding (checks/goodput.py), never dropped."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from cluster_iac.plan.checkpoint import storage_figures
from cluster_iac.plan.collectives.jobs import NAMED_JOBS, Jobs, first_gpus, job_nodes, size_label
from cluster_iac.plan.failures import JobFailures, RateContext, job_failures
from cluster_iac.plan.fleets import ENDS
from cluster_iac.plan.goodput import Goodput, job_goodput
from cluster_iac.plan.model import Node, PartitionPlan, Plan

LABELS = {"partition": "the whole partition", "node": "one node",
          "nvlink_domain": "one NVLink domain", "scalable_unit": "one scalable unit"}


# Records without generated __eq__/__repr__ (eq=False, repr=False): see plan/model.py.
@dataclass(frozen=True, eq=False, repr=False)
class SizedJob:
    """One job size of one partition: what was asked, what it holds, its failures and goodput."""

    partition: str
    job: str  # 'node' | 'nvlink_domain' | 'scalable_unit' | 'partition' | 'gpus'
    asked: int | None  # the GPUs policy.allreduce_job_sizes asked for (None: a named job)
    index: int | None  # its place in policy.allreduce_job_sizes
    nodes: int
    gpus: int  # what the whole nodes hold (0: the partition holds fewer than asked)
    available: int  # the partition's GPUs
    failures: dict[str, JobFailures]  # by end
    goodput: dict[str, Goodput]  # by end

    @property
    def label(self) -> str:
        if self.asked is None:
            return LABELS[self.job]
        return size_label(self.asked, self.gpus, self.available)




def partition_sizes(plan: Plan, partition: PartitionPlan, contexts: dict[str, RateContext],
                    candidates: Jobs | None = None) -> list[SizedJob]:
    """The distinct jobs of one partition, smallest first; oversized asks last.
    ``candidates``: the partition's asked_jobs (plan/collectives/jobs.py), where the caller
    has them already (report.md's busbw table): their named jobs are taken, not found again."""
    if candidates is None:
        named = job_nodes(plan, partition, [])
    else:
        named = [(job, nodes) for job, nodes in candidates if job in NAMED_JOBS]
    if not named:
        return []
    everything = dict(named)["partition"]
    available = sum(plan.node_types[n.node_type].gpu_count for n in everything)
    fig = storage_figures(plan)
    found: dict[tuple[str, ...], SizedJob] = {}
    too_big: list[SizedJob] = []
    asks: list[tuple[str, int | None, int | None, tuple[Node, ...]]]
    asks = [(job, None, None, nodes) for job, nodes in named]
    asks += [("gpus", gpus, i, first_gpus(plan, everything, gpus))
             for i, gpus in enumerate(plan.settings.policy.allreduce_job_sizes)]
    for job, asked, index, nodes in asks:
        if not nodes:
            if asked is not None:
                too_big.append(SizedJob(partition.name, job, asked, index, 0, 0, available, {},
                                        {}))
            continue
        key = tuple(n.hostname for n in nodes)
        if key in found and job != "partition":
            continue
        failures = {end: job_failures(plan, partition.name, list(nodes), end, contexts[end])
                    for end in ENDS}
        found[key] = SizedJob(partition.name, job, asked, index, len(nodes),
                              sum(plan.node_types[n.node_type].gpu_count for n in nodes),
                              available, failures,
                              {end: job_goodput(plan, f, fig) for end, f in failures.items()})
    return sorted(found.values(), key=lambda s: s.gpus) + too_big


def sized_jobs(plan: Plan,
               candidates: Mapping[str, Jobs] | None = None) -> dict[str, list[SizedJob]]:
    """Each partition's job sizes, by partition name in spec order. ``candidates``: each
    partition's asked_jobs by name, where the caller has them already."""
    contexts = {end: RateContext(plan, end) for end in ENDS}
    given = candidates or {}
    return {p.name: partition_sizes(plan, p, contexts, given.get(p.name))
            for p in plan.partitions}
