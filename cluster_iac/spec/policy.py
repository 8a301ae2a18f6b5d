"""The workload the cluster must carry, and the validator's policy."""

# Annotations as written, not strings: see cluster_iac/spec/__init__.py.

import re
from typing import Annotated, Literal

from pydantic import BeforeValidator, Field

from cluster_iac.spec.base import SpecModel, fail
from cluster_iac.spec.limits import BandwidthGbs, JobGpus, RackKw, StorageTb, at_most, up_to
from cluster_iac.spec.strings import CheckCode, Ratio

MINUTES_A_YEAR = 525_600
MAX_MTBF_HOURS = 100_000_000
"""11,000 years a GPU: published MTBFs of GPUs and servers are 10^4-10^6 hours."""
MAX_MESSAGE_BYTES = 1 << 46
"""64 TiB, the most memory a GPU may have (spec/limits.py MAX_MEMORY_GIB): no collective's
message is larger than the buffer that holds it."""

_SHIFT = {"K": 10, "M": 20, "G": 30}
JOBS = ("node", "nvlink_domain", "scalable_unit", "partition")


def _message_size(value: object) -> object:
    if isinstance(value, bool) or not (
            (isinstance(value, int) and value > 0)
            or (isinstance(value, str) and re.fullmatch(r"[1-9][0-9]{0,12}[KMG]", value))):
        raise ValueError("not a message size: give bytes (8589934592) or a count with K, M or "
                         "G, as nccl-tests' -e takes it (8G)")
    size = value if isinstance(value, int) else int(value[:-1]) << _SHIFT[value[-1]]
    if size > MAX_MESSAGE_BYTES:
        fail("limit", f"a message of {size:,} bytes is more than the limit of "
             f"{MAX_MESSAGE_BYTES:,} (64 TiB)", "no GPU holds a larger buffer")
    return value


def _job_size(value: object) -> object:
    if isinstance(value, bool) or not ((isinstance(value, int) and value > 0) or value in JOBS):
        raise ValueError(f"not a job: give one of {', '.join(JOBS)}, or a number of GPUs")
    return value


MessageSize = Annotated[Annotated[int, up_to(MAX_MESSAGE_BYTES)]
                        | Annotated[str, Field(pattern=r"^[1-9][0-9]{0,12}[KMG]$")],
                        BeforeValidator(_message_size)]
"""A message size as nccl-tests' -b/-e read it: bytes, or a count with K, M or G (powers of
1024), e.g. 8G = 8589934592 bytes."""

JobSize = Annotated[Literal["node", "nvlink_domain", "scalable_unit", "partition"] | JobGpus,
                    BeforeValidator(_job_size)]
"""A job: one node, one NVLink domain, one scalable unit (the nodes under one set of leaf
switches), the whole partition, or a number of GPUs (whole nodes, in partition order)."""


class Workload(SpecModel):
    """What training jobs ask of the cluster."""

    read_gbs_per_gpu: BandwidthGbs | None = None
    """Sustained dataset read bandwidth each GPU needs, GB/s."""
    checkpoint_size_gb: StorageTb | None = None
    """Size of one full checkpoint of the job, GB."""
    checkpoint_interval_min: Annotated[float, up_to(MINUTES_A_YEAR),
                                       at_most(MINUTES_A_YEAR, "minutes")] | None = None
    """Planned checkpoint interval, minutes (at most a year)."""
    checkpoint_mode: Literal["sync", "async"] = "sync"
    """'sync': training stops for the whole write to the store. 'async': training stops only
    while each GPU copies its state to host memory (checkpoint_blocking_s), then the copy drains
    to the store while training goes on, and must finish within the interval (CheckFreq's
    snapshot and persist, Mohan et al., FAST 2021; PyTorch DCP async_save; DeepSpeed Nebula)."""
    checkpoint_store: Literal["lustre", "object", "nvme"] = "lustre"
    """Where checkpoints are written: 'lustre' (storage.lustre, its derived bandwidth), 'object'
    (an object store: checkpoint_store_write_gbs and _read_gbs, aggregate), or 'nvme' (each
    node's local drives: checkpoint_store_write_gbs per node x the job's nodes; a failed node's
    drives are lost with it, so the reload reads Lustre)."""
    checkpoint_store_write_gbs: BandwidthGbs | None = None
    """Write bandwidth of an object or NVMe checkpoint store, GB/s (aggregate for 'object', per
    node for 'nvme'): measured, as no store outside the spec has a derived figure."""
    checkpoint_store_read_gbs: BandwidthGbs | None = None
    """Read bandwidth of an object checkpoint store, GB/s, aggregate (default: its write)."""
    checkpoint_blocking_s: Annotated[float, up_to(31_536_000, gt=None, ge=0),
                                     at_most(31_536_000, "seconds")] | None = None
    """'async': measured time training stops to copy its state to host memory, s. The derived
    figure is each GPU's share of the checkpoint at its PCIe x16 line rate (Gen4 31.5 GB/s for
    Ampere, Gen5 63 GB/s for Hopper and Blackwell, each way: PCI-SIG), a lower bound: a
    measured figure may only raise it."""
    gpu_mtbf_hours: Annotated[float, up_to(MAX_MTBF_HOURS),
                              at_most(MAX_MTBF_HOURS, "hours")] = 50_000
    """Mean time between failures of one GPU (with its share of host and network), hours.
    Only where the spec sets it does the checkpoint interval (report.md, 'Storage') use it;
    otherwise the cluster's MTBF comes from the failure rates of its parts (reliability).
    Default from Llama 3 405B training: 419 interruptions in 54 days on 16,384 H100 GPUs
    (Meta, 'The Llama 3 Herd of Models', 2024) -> ~3.1 h for the cluster, ~50,000 h per GPU."""


Level = Literal["error", "warning", "info", "ignore"]


class Policy(SpecModel):
    """Thresholds the validator enforces; every one has a documented default."""

    breaker_continuous_percent: float = Field(default=80, gt=0, le=100)
    """Continuous load allowed on a breaker not rated for 100 % (NEC 210.20(A): 80 %)."""
    max_phase_imbalance: float = Field(default=0.2, ge=0, le=1)
    """Largest allowed (max |I_phase - I_avg|) / I_avg on a three-phase PDU."""
    phase_imbalance_min_load_percent: float = Field(default=50, ge=0, le=100)
    """PDUs loaded below this share of their derated limit are not checked for phase
    imbalance: every line of a lightly loaded PDU has headroom."""
    air_cooled_rack_kw: RackKw = 40
    """Heat an air-cooled rack can shed, kW (hot/cold-aisle containment tops out around 30-50)."""
    max_oversubscription: Ratio = "1:1"
    """Largest leaf oversubscription accepted on the compute fabric."""
    min_allreduce_busbw_gbs: BandwidthGbs | None = None
    """Smallest acceptable predicted NCCL all_reduce bus bandwidth (nccl-tests' busbw), GB/s,
    for the job that min_allreduce_busbw_job names in each partition."""
    min_allreduce_busbw_job: JobSize = "partition"
    """The job whose predicted busbw must meet min_allreduce_busbw_gbs: 'node',
    'nvlink_domain', 'scalable_unit', 'partition' (default), or a number of GPUs."""
    allreduce_message_size: MessageSize = "8G"
    """all_reduce message size the busbw is predicted at. Default 8G, the top of the usual
    `all_reduce_perf -b 8 -e 8G` sweep, where published results quote the large-message
    plateau (nccl-tests issues, CoreWeave's and Azure's result tables)."""
    allreduce_job_sizes: list[JobGpus] = Field(default=[], max_length=64)
    """Further job sizes, in GPUs, to predict for each partition (busbw, MTTF and goodput);
    report.md always shows one node, one NVLink domain and one scalable unit (where they
    differ) and the partition. A size is rounded up to whole nodes, and the report says so; a
    size larger than a partition is a warning there (GOODPUT-JOB-SIZE)."""
    max_checkpoint_overhead: float = Field(default=0.1, gt=0, lt=1)
    """Largest share of time spent writing checkpoints (write time / interval)."""
    min_goodput: float | None = Field(default=None, gt=0, lt=1)
    """Smallest expected share of time the largest job of each partition spends on useful work,
    after failures, restarts, checkpoint writes and lost work (report.md, 'Goodput')."""
    goodput_failure_rates: Literal["lowest", "expected", "highest"] = "highest"
    """Which end of the published fleets' failure rates min_goodput judges against (report.md,
    'Goodput', prints all three): default 'highest', the pessimistic end."""
    levels: dict[CheckCode, Level] = {}
    """Per-check level override by check code, e.g. {'COOLING-AIR': 'warning'}."""
