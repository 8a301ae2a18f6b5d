"""NCCL settings the spec adds to the generated environment."""

# Annotations as written, not strings: see cluster_iac/spec/__init__.py.

from pydantic import Field

from cluster_iac.spec.base import SpecModel
from cluster_iac.spec.strings import EnvName, Name, Text

NcclValue = Text | int
"""An environment value: NCCL reads every one as text (integers through strtoll)."""


class Nccl(SpecModel):
    """Extra NCCL environment, checked against the variables the targeted NCCL reads."""

    env: dict[EnvName, NcclValue] = {}
    """Variables for every GPU node type, e.g. ``{NCCL_IB_QPS_PER_CONNECTION: 2}``; they
    replace generated values of the same name."""
    node_types: dict[Name, dict[EnvName, NcclValue]] = {}
    """Per node type variables, applied after ``env``."""
    traffic_class: int | None = Field(default=None, ge=0, le=255)
    """RoCE only: the IP traffic class byte (DSCP << 2 | ECN) of the fabric's lossless RDMA
    queue, written as NCCL_IB_TC (default 106: DSCP 26, ECN-capable)."""
