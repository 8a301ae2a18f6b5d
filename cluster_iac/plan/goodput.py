"""Goodput: the expected share of time the largest job of each partition does useful work.

With M the job's MTBF (plan/failures.py), delta the checkpoint write time and the reload
time from the derived Lustre bandwidths (plan/checkpoint.py), R the time from a failure to
the job computing again (detect + drain + restart + reload, + repair for failures the spares
cannot replace) and tau the compute time between checkpoints (the planned interval, else
Daly's optimum), the useful fraction is Daly's complete model (Daly 2006, "A higher order
estimate of the optimum checkpoint interval for restart dumps", section 3: wall time
T_w = M e^(R/M) (e^((tau + delta)/M) - 1) T_s / tau for solve time T_s):

    goodput = tau / (M e^(R/M) (e^((tau + delta)/M) - 1))

Its first-order terms, each the share of time it costs (they add up to about 1 - goodput):
checkpoint writes delta / (tau + delta), rework (tau + delta) / (2M) (half an interval lost
per failure), and each part of R divided by M.
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
TERMS = ("checkpoint writes", "rework", "detect", "drain", "restart", "reload", "repair")


# Records without generated __eq__/__repr__ (eq=False, repr=False): see plan/model.py.
@dataclass(frozen=True, eq=False, repr=False)
class Goodput:
    """One partition's largest job: its failures, recovery, checkpoints and useful share."""

    job: JobFailures
    mtbf_s: float | None  # None: no failure has a rate
    write_s: float | None  # one checkpoint's write (None: no checkpoint size or no Lustre)
    reload_s: float | None  # reading it back
    detect_s: float
    drain_s: float
    restart_s: float
    repair_s: float  # mean repair wait per failure: uncovered share x repair_h
    young_s: float | None
    daly_s: float | None
    interval_s: float | None  # tau: the planned interval, else Daly's
    planned: bool  # tau is workload.checkpoint_interval_min
    useful: float | None  # Daly's complete model; None without a checkpoint write time
    losses: dict[str, float]  # first-order share of time each term costs

    @property
    def recovery_s(self) -> float:
        return (self.detect_s + self.drain_s + self.restart_s + (self.reload_s or 0)
                + self.repair_s)


def useful_fraction(tau: float, delta: float, recovery: float, mtbf: float) -> float:
    """Daly's complete model: tau / (M e^(R/M) (e^((tau + delta)/M) - 1))."""
    return tau / (mtbf * math.exp(recovery / mtbf) * math.expm1((tau + delta) / mtbf))


def goodputs(plan: Plan) -> list[Goodput]:
    """The goodput of each partition's largest job, in partition order."""
    fig = storage_figures(plan)
    return [job_goodput(plan, job, fig) for job in partition_jobs(plan)]


def job_goodput(plan: Plan, job: JobFailures, fig: StorageFigures | None = None) -> Goodput:
    """Goodput of one job (see the module docstring)."""
    rel = plan.settings.reliability
    fig = fig or storage_figures(plan)
    read = fig.read_gbs
    reload_s = fig.checkpoint_size_gb / read if read and fig.checkpoint_size_gb else None
    mtbf = SECONDS_A_DAY / job.per_day if job.per_day else None
    repair = 0.0
    if rel.repair_h is not None and job.per_day:
        repair = rel.repair_h * 3600 * job.uncovered_per_day / job.per_day
    young = daly = tau = useful = None
    planned = fig.interval_min is not None
    losses: dict[str, float] = {}
    if fig.write_s is not None and mtbf is not None:
        young = young_interval_s(fig.write_s, mtbf)
        daly = daly_interval_s(fig.write_s, mtbf)
        tau = fig.interval_min * 60 if fig.interval_min is not None else daly
        recovery = rel.detect_s + rel.drain_s + rel.restart_s + (reload_s or 0) + repair
        useful = useful_fraction(tau, fig.write_s, recovery, mtbf)
        losses = {"checkpoint writes": fig.write_s / (tau + fig.write_s),
                  "rework": (tau + fig.write_s) / (2 * mtbf), "detect": rel.detect_s / mtbf,
                  "drain": rel.drain_s / mtbf, "restart": rel.restart_s / mtbf,
                  "reload": (reload_s or 0) / mtbf, "repair": repair / mtbf}
    return Goodput(job=job, mtbf_s=mtbf, write_s=fig.write_s, reload_s=reload_s,
                   detect_s=rel.detect_s, drain_s=rel.drain_s, restart_s=rel.restart_s,
                   repair_s=repair,
                   young_s=young, daly_s=daly, interval_s=tau, planned=planned, useful=useful,
                   losses=losses)
