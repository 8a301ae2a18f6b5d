"""Storage figures: read bandwidth per GPU, checkpoint write time and the optimal interval.

Optimal checkpoint interval, with delta the time to write one checkpoint synchronously to Lustre and
M the MTTF of the largest job (of the partition with the most GPUs: the partition less its hot
spares, at the expected failure rates, plan/failures.py; the same figure Goodput prints for that
job, one MTTF per scope):
- Young (1974), "A first order approximation to the optimum checkpoint interval":
  T = sqrt(2 delta M).
- Daly (2006), "A higher order estimate of the optimum checkpoint interval for restart dumps":
  T = sqrt(2 delta M) x (1 + sqrt(delta / (2M)) / 3 + delta / (18 M)) - delta for delta < 2M,
  else T = M.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from cluster_iac.plan.failures import JobFailures, partition_jobs
from cluster_iac.plan.model import Plan


# Records without generated __eq__/__repr__ (eq=False, repr=False): see plan/model.py.
@dataclass(frozen=True, eq=False, repr=False)
class StorageFigures:
    """What the workload asks of Lustre, and what it gets (None where the spec is silent)."""

    gpus: int
    read_gbs: float | None  # aggregate Lustre read: the derived bound or a smaller measured one
    read_gbs_per_gpu: float | None  # what each GPU gets when all read at once
    need_gbs_per_gpu: float | None  # workload.read_gbs_per_gpu
    write_gbs: float | None  # aggregate write, likewise
    checkpoint_size_gb: float | None
    write_s: float | None  # one checkpoint's write time
    interval_min: float | None  # planned interval
    overhead: float | None  # write time / interval
    job_mtbf_h: float  # the largest job's MTTF (h), as Goodput prints it
    job_gpus: int
    job_partition: str
    young_min: float | None
    daly_min: float | None


def young_interval_s(delta_s: float, mtbf_s: float) -> float:
    """Young's first-order optimum: sqrt(2 delta M)."""
    return math.sqrt(2 * delta_s * mtbf_s)


def daly_interval_s(delta_s: float, mtbf_s: float) -> float:
    """Daly's higher-order optimum (valid for delta < 2M; M itself beyond)."""
    if delta_s >= 2 * mtbf_s:
        return mtbf_s
    ratio = delta_s / (2 * mtbf_s)
    return math.sqrt(2 * delta_s * mtbf_s) * (1 + math.sqrt(ratio) / 3 + ratio / 9) - delta_s


def largest_job(plan: Plan) -> JobFailures | None:
    """The largest job of the partition with the most GPUs (the first of equals), expected rates."""
    jobs = partition_jobs(plan)
    return max(jobs, key=lambda j: j.gpus) if jobs else None


def storage_figures(plan: Plan) -> StorageFigures:
    """The figures report.md prints and the storage checks compare."""
    hardware = plan.lustre.hardware if plan.lustre is not None else None
    work = plan.settings.workload
    gpus = plan.gpu_count
    job = largest_job(plan)
    mtbf_h = job.mtbf_h if job is not None and job.mtbf_h else math.inf
    # The derived bounds, narrowed by the spec's measured figures (plan/lustre_bandwidth.py)
    read = hardware.read.effective if hardware else None
    write = hardware.write.effective if hardware else None
    write_s = work.checkpoint_size_gb / write if write and work.checkpoint_size_gb else None
    young = daly = overhead = None
    if write_s is not None and math.isfinite(mtbf_h):
        young = young_interval_s(write_s, mtbf_h * 3600) / 60
        daly = daly_interval_s(write_s, mtbf_h * 3600) / 60
        if work.checkpoint_interval_min:
            overhead = write_s / (work.checkpoint_interval_min * 60)
    return StorageFigures(
        gpus=gpus, read_gbs=read, read_gbs_per_gpu=read / gpus if read and gpus else None,
        need_gbs_per_gpu=work.read_gbs_per_gpu, write_gbs=write,
        checkpoint_size_gb=work.checkpoint_size_gb, write_s=write_s,
        interval_min=work.checkpoint_interval_min, overhead=overhead, job_mtbf_h=mtbf_h,
        job_gpus=job.gpus if job else 0, job_partition=job.partition if job else "-",
        young_min=young, daly_min=daly)
