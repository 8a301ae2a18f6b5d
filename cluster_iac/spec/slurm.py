"""Slurm: partitions and scheduler settings."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from cluster_iac.spec.base import Name, SpecModel


class Partition(SpecModel):
    """A Slurm partition."""

    name: Name
    """Partition name."""
    node_groups: list[Name] = Field(min_length=1)
    """Node groups whose nodes are in the partition."""
    default: bool = False
    """The default partition (exactly one may be)."""
    max_time: str = Field(default="INFINITE", pattern=r"^(INFINITE|UNLIMITED|[0-9:-]+)$")
    """Time limit, Slurm format ('INFINITE', '7-00:00:00', '04:00:00')."""
    priority_tier: int = Field(default=1, ge=0, le=65533)
    """PriorityTier: jobs in higher tiers are scheduled first."""
    exclusive: bool = False
    """Allocate whole nodes (OverSubscribe=EXCLUSIVE)."""


class Slurm(SpecModel):
    """Scheduler settings."""

    partitions: list[Partition] = Field(min_length=1)
    """Partitions."""
    accounting: bool = False
    """Use slurmdbd accounting on the first controller (AccountingStorageType=slurmdbd)."""
    memory_reserve_percent: float = Field(default=3.0, ge=0, le=50)
    """Share of node memory kept from jobs for the OS, page cache and drivers."""
    memory_reserve_min_gib: float = Field(default=4.0, ge=0)
    """At least this much memory is kept for the OS."""
    select_parameters: Literal["CR_Core_Memory", "CR_CPU_Memory", "CR_Core", "CR_CPU"] = (
        "CR_Core_Memory"
    )
    """SelectTypeParameters for select/cons_tres."""
    topology: Literal["auto", "tree", "block", "none"] = "auto"
    """TopologyPlugin: 'auto' picks topology/block for rack-scale NVLink domains when the
    targeted Slurm has it (23.11 and later), topology/tree when there is a compute fabric,
    and none otherwise."""
    extra: dict[str, str] = {}
    """Extra slurm.conf parameters, written as Key=Value after the generated ones."""
