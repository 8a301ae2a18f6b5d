"""Predicted NCCL all_reduce bus bandwidth (nccl-tests' busbw) from an alpha-beta model."""

from __future__ import annotations

from cluster_iac.plan.collectives.algorithms import (
    ALGORITHMS,
    LABELS,
    Estimate,
    JobShape,
    estimates,
    nccl_choice,
)
from cluster_iac.plan.collectives.jobs import (
    JobPrediction,
    asked_jobs,
    message_bytes,
    oversized,
    partition_jobs,
    partition_predictions,
    policy_job,
    predict,
    predictions,
    size_text,
)
from cluster_iac.plan.collectives.shape import job_shape

__all__ = [
    "ALGORITHMS", "LABELS", "Estimate", "JobPrediction", "JobShape", "asked_jobs", "estimates",
    "job_shape", "message_bytes", "nccl_choice", "oversized", "partition_jobs",
    "partition_predictions", "policy_job", "predict", "predictions", "size_text",
]
