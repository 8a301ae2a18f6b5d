"""The workload the cluster must carry, and the validator's policy."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from cluster_iac.spec.base import PositiveFloat, SpecModel


class Workload(SpecModel):
    """What training jobs ask of the cluster."""

    read_gbs_per_gpu: PositiveFloat | None = None
    """Sustained dataset read bandwidth each GPU needs, GB/s."""
    checkpoint_size_gb: PositiveFloat | None = None
    """Size of one full checkpoint of the job, GB."""
    checkpoint_interval_min: PositiveFloat | None = None
    """Planned checkpoint interval, minutes."""
    gpu_mtbf_hours: PositiveFloat = 50_000
    """Mean time between failures of one GPU (with its share of host and network), hours.
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
    air_cooled_rack_kw: PositiveFloat = 40
    """Heat an air-cooled rack can shed, kW (hot/cold-aisle containment tops out around 30-50)."""
    max_oversubscription: str = Field(default="1:1", pattern=r"^\d+(\.\d+)?:\d+(\.\d+)?$")
    """Largest leaf oversubscription accepted on the compute fabric."""
    min_allreduce_busbw_gbs: PositiveFloat | None = None
    """Smallest acceptable predicted NCCL all_reduce bus bandwidth, GB/s."""
    max_checkpoint_overhead: float = Field(default=0.1, gt=0, lt=1)
    """Largest share of time spent writing checkpoints (write time / interval)."""
    levels: dict[str, Level] = {}
    """Per-check level override by check code, e.g. {'COOLING-AIR': 'warning'}."""
