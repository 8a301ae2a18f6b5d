"""Goodput, the effective training time ratio (ETTR): the share of time a job does useful work.

With M the job's MTTF (plan/failures.py, at one end of the published range), R the time from a
failure to the job computing again (detect + drain + restart + reload, + repair for failures the
spares cannot replace) and tau the compute time between checkpoints (the planned interval, else
Daly's optimum for the blocking time), the useful fraction is Daly's complete model (Daly 2006,
"A higher order estimate of the optimum checkpoint interval for restart dumps", section 3: wall
time T_w = M e^(R/M) (e^((tau + delta)/M) - 1) T_s / tau for solve time T_s), by checkpoint mode:

- sync (the job stops for the whole write): delta = size / store write bandwidth;
      ETTR = tau / (M e^(R/M) (e^((tau + delta)/M) - 1))
- async (the job stops for b, the copy to host memory, then the copy persists to the store in
  p = size / store write while training goes on: CheckFreq's snapshot and persist, Mohan et al.,
  FAST 2021, section 4; PyTorch DCP async_save; DeepSpeed Nebula): delta = b, and a failure
  before the persist ends restarts from the checkpoint before, so each failure loses p more on
  average: R' = R + p;
      ETTR = tau / (M e^((R + p)/M) (e^((tau + b)/M) - 1)),  with tau >= p
  (a persist must end before the next one starts, CheckFreq section 4.2; a planned interval shorter
  than p is a finding, and Daly's optimum is raised to p).

The store is Lustre (its derived bandwidth), an object store or each node's NVMe (the spec's
measured bandwidth; NVMe per node x the job's nodes, and a reload from Lustre, since a failed
node's drives are lost with it). Its first-order terms, each the share of time it costs (they add up
to about 1 - ETTR): checkpoint writes delta / (tau + delta), rework (tau + delta) / (2M) (half an
interval lost per failure), persist in flight p / M, and each part of R divided by M.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from cluster_iac.plan.checkpoint import (
    StorageFigures,
    daly_interval_s,
    storage_figures,
    young_interval_s,
)
from cluster_iac.plan.failures import JobFailures, partition_jobs
from cluster_iac.plan.model import Plan

SECONDS_A_DAY = 86_400
TERMS = ("checkpoint writes", "rework", "persist in flight", "detect", "drain", "restart",
         "reload", "repair")
# PCIe x16 line rate each way by GPU generation, GB/s (PCI-SIG: Gen4 16 GT/s, Gen5 32 GT/s,
# 128b/130b): the fastest a GPU copies its state to host memory, so the derived blocking time
# of an asynchronous checkpoint is a lower bound
HOST_COPY_GBS = {"ampere": 31.5, "hopper": 63.0, "blackwell": 63.0}
DEFAULT_HOST_COPY_GBS = 31.5


# Records without generated __eq__/__repr__ (eq=False, repr=False): see plan/model.py.
@dataclass(frozen=True, eq=False, repr=False)
class Goodput:
    """One job: its failures, recovery, checkpoints and useful share."""

    job: JobFailures
    mtbf_s: float | None  # None: no failure has a rate
    write_s: float | None  # the time training stops per checkpoint (sync: the write; async: b)
    reload_s: float | None  # reading it back
    detect_s: float
    drain_s: float
    restart_s: float
    repair_s: float  # mean repair wait per failure: uncovered share x repair_h
    young_s: float | None
    daly_s: float | None
    interval_s: float | None  # tau: the planned interval, else Daly's (at least the persist)
    planned: bool  # tau is workload.checkpoint_interval_min
    useful: float | None  # ETTR, Daly's complete model; None without a checkpoint write time
    losses: dict[str, float]  # first-order share of time each term costs
    mode: str = "sync"
    store: str = "lustre"
    persist_s: float = 0.0  # async: the drain to the store after the blocking copy

    @property
    def recovery_s(self) -> float:
        return (self.detect_s + self.drain_s + self.restart_s + (self.reload_s or 0)
                + self.repair_s)

    @property
    def persist_fits(self) -> bool:
        """An asynchronous checkpoint's persist ends within the interval."""
        return self.interval_s is None or self.persist_s <= self.interval_s


def useful_fraction(tau: float, delta: float, recovery: float, mtbf: float) -> float:
    """Daly's complete model: tau / (M e^(R/M) (e^((tau + delta)/M) - 1))."""
    return tau / (mtbf * math.exp(recovery / mtbf) * math.expm1((tau + delta) / mtbf))


def goodputs(plan: Plan, end: str = "expected") -> list[Goodput]:
    """The goodput of each partition's largest job, in partition order, at one end."""
    fig = storage_figures(plan)
    return [job_goodput(plan, job, fig) for job in partition_jobs(plan, end)]


def store_bandwidths(plan: Plan, job: JobFailures,
                     fig: StorageFigures) -> tuple[float | None, float | None]:
    """(write, read) GB/s of the checkpoint store for one job (None: not known)."""
    work = plan.settings.workload
    if work.checkpoint_store == "object":
        write = work.checkpoint_store_write_gbs
        return write, work.checkpoint_store_read_gbs or write
    if work.checkpoint_store == "nvme":
        per_node = work.checkpoint_store_write_gbs
        return (per_node * job.nodes if per_node else None), fig.read_gbs
    return fig.write_gbs, fig.read_gbs


def blocking_s(plan: Plan, job: JobFailures) -> float | None:
    """An asynchronous checkpoint's blocking copy: each GPU's share at its PCIe line rate, or
    the spec's measured figure where that is longer."""
    size = plan.settings.workload.checkpoint_size_gb
    if not size or not job.gpus:
        return None
    archs = {nt.gpu_architecture for nt in plan.node_types.values() if nt.gpu_count}
    rate = min((HOST_COPY_GBS.get(a or "", DEFAULT_HOST_COPY_GBS) for a in archs),
               default=DEFAULT_HOST_COPY_GBS)
    derived = size / job.gpus / rate
    given = plan.settings.workload.checkpoint_blocking_s
    return max(derived, given) if given is not None else derived


def job_goodput(plan: Plan, job: JobFailures, fig: StorageFigures | None = None) -> Goodput:
    """Goodput of one job (see the module docstring)."""
    rel = plan.settings.reliability
    work = plan.settings.workload
    fig = fig or storage_figures(plan)
    write, read = store_bandwidths(plan, job, fig)
    size = work.checkpoint_size_gb
    reload_s = size / read if read and size else None
    full_s = size / write if write and size else None
    if work.checkpoint_mode == "async":
        stop_s, persist = (blocking_s(plan, job), full_s or 0.0) if full_s else (None, 0.0)
    else:
        stop_s, persist = full_s, 0.0
    mtbf = SECONDS_A_DAY / job.per_day if job.per_day else None
    repair = 0.0
    if rel.repair_h is not None and job.per_day:
        repair = rel.repair_h * 3600 * job.uncovered_per_day / job.per_day
    young = daly = tau = useful = None
    planned = fig.interval_min is not None
    losses: dict[str, float] = {}
    if stop_s is not None and mtbf is not None:
        young = young_interval_s(stop_s, mtbf)
        daly = max(daly_interval_s(stop_s, mtbf), persist)
        tau = fig.interval_min * 60 if fig.interval_min is not None else daly
        recovery = rel.detect_s + rel.drain_s + rel.restart_s + (reload_s or 0) + repair
        useful = useful_fraction(tau, stop_s, recovery + persist, mtbf)
        losses = {"checkpoint writes": stop_s / (tau + stop_s),
                  "rework": (tau + stop_s) / (2 * mtbf), "persist in flight": persist / mtbf,
                  "detect": rel.detect_s / mtbf, "drain": rel.drain_s / mtbf,
                  "restart": rel.restart_s / mtbf, "reload": (reload_s or 0) / mtbf,
                  "repair": repair / mtbf}
    return Goodput(job=job, mtbf_s=mtbf, write_s=stop_s, reload_s=reload_s,
                   detect_s=rel.detect_s, drain_s=rel.drain_s, restart_s=rel.restart_s,
                   repair_s=repair, young_s=young, daly_s=daly, interval_s=tau, planned=planned,
                   useful=useful, losses=losses, mode=work.checkpoint_mode,
                   store=work.checkpoint_store, persist_s=persist)
