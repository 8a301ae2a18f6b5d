"""Slurm: partitions and scheduler settings."""

# Annotations as written, not strings: see cluster_iac/spec/__init__.py.

from typing import Annotated, Literal

from pydantic import AfterValidator, Field, WithJsonSchema

from cluster_iac.spec.base import SpecModel, fail
from cluster_iac.spec.health import HealthCheck
from cluster_iac.spec.limits import (
    MAX_CPUS,
    MAX_MEMORY_GIB,
    MAX_SLURM_NUMBER,
    NodeCount,
    at_most,
    up_to,
)
from cluster_iac.spec.scheduling import Account, Accounting, Preemption, Priority, Qos, SlurmName
from cluster_iac.spec.strings import HostlistExpr, Name

SLURM_NUMBER_SCHEMA = WithJsonSchema({"type": "integer", "minimum": -(1 << 63),
                                      "maximum": MAX_SLURM_NUMBER})


def _slurm_number(value: str | int) -> str | int:
    """A slurm.extra number fits the 64-bit fields Slurm reads slurm.conf numbers into."""
    if isinstance(value, int) and not -(1 << 63) <= value <= MAX_SLURM_NUMBER:
        fail("limit", f"{value:,} does not fit a slurm.conf number (at most "
             f"{MAX_SLURM_NUMBER:,}, 64 bits)")
    return value


class GroupNodes(SpecModel):
    """The first nodes of a node group, in the group's order (its hostnames' indices)."""

    group: Name
    """The node group."""
    count: NodeCount
    """How many of its nodes (at most the group's count)."""


PartitionNodes = HostlistExpr | GroupNodes
"""Some nodes: a hostlist of node names ('gpu[001-004]') or the first nodes of a group."""


class Partition(SpecModel):
    """A Slurm partition: the nodes of its node_groups, then those its nodes name."""

    name: Name
    """Partition name."""
    node_groups: list[Name] = []
    """Node groups all of whose nodes are in the partition."""
    nodes: PartitionNodes | list[PartitionNodes] = []
    """Further nodes: a hostlist of node names ('gpu[001-004]'), the first nodes of a group
    ({group: gpu, count: 4}), or a list of these. A partition names at least one node, by
    node_groups or nodes."""
    default: bool = False
    """The default partition (exactly one may be)."""
    max_time: str = "INFINITE"
    """MaxTime in one of Slurm's time formats: minutes, minutes:seconds, hours:minutes:seconds,
    days-hours, days-hours:minutes, days-hours:minutes:seconds, or INFINITE/UNLIMITED
    ('7-00:00:00', '04:00:00', '90')."""
    priority_tier: int = Field(default=1, ge=0, le=65533)
    """PriorityTier: jobs in higher tiers are scheduled first."""
    exclusive: bool = False
    """Allocate whole nodes (OverSubscribe=EXCLUSIVE; Exclusive=NODE from Slurm 26.05)."""
    def_mem_per_gpu_gib: Annotated[float, up_to(MAX_MEMORY_GIB),
                                   at_most(MAX_MEMORY_GIB, "GiB")] | None = None
    """DefMemPerGPU for jobs that ask for GPUs and no memory. Default: the usable memory
    (RealMemory) of the partition's smallest GPU node divided by its GPUs; a value here may
    only be lower."""
    def_cpu_per_gpu: Annotated[int, up_to(MAX_CPUS), at_most(MAX_CPUS, "CPUs")] | None = None
    """DefCpuPerGPU for jobs that ask for GPUs and no CPUs. Default: the CPUs of the
    partition's smallest GPU node divided by its GPUs; a value here may only be lower."""
    allow_qos: list[SlurmName] | None = None
    """AllowQos: the only QOS its jobs may use (default: all)."""
    allow_accounts: list[SlurmName] | None = None
    """AllowAccounts: the only accounts whose jobs may run in it (default: all)."""


class Slurm(SpecModel):
    """Scheduler settings."""

    partitions: list[Partition] = Field(min_length=1)
    """Partitions."""
    accounting: Accounting | None = None
    """slurmdbd accounting (slurm/slurmdbd.conf); needed by multifactor priority, QOS and
    accounts. Without it: no accounting, FIFO priority."""
    priority: Priority | None = None
    """Multifactor priority and fair share (PriorityType=priority/multifactor; needs
    accounting). Left out, slurm.conf writes no priority key and the release's default holds:
    priority/basic (first in, first out) in 22.05, priority/multifactor with every weight 0
    (so also in submission order) from 24.11 on, as their slurmctld showed here."""
    preemption: Preemption = Preemption()
    """Preemption between QOS."""
    qos: list[Qos] = []
    """QOS, created in slurmdbd by slurm/accounting.sh."""
    default_qos: SlurmName | None = None
    """The cluster's default QOS (the root association's DefaultQOS); every QOS is allowed
    at the root, accounts narrow it."""
    accounts: list[Account] = []
    """The account tree under root, created in slurmdbd by slurm/accounting.sh."""
    health_check: HealthCheck = HealthCheck()
    """The node health check slurmd runs."""
    return_to_service: Literal[0, 1, 2] = 1
    """ReturnToService: when a DOWN node comes back by itself. 1: only a node that was DOWN
    for not responding, once it registers with a valid configuration; 2: a DOWN node for any
    reason (also one an admin or a script set DOWN, e.g. for ECC errors, after a reboot);
    0: never. No value returns a DRAINED node (slurm.conf(5) ReturnToService speaks of DOWN
    nodes only), which is why the health check drains."""
    memory_reserve_percent: float = Field(default=3.0, ge=0, le=50)
    """Share of node memory kept from jobs for the OS, page cache and drivers."""
    memory_reserve_min_gib: Annotated[float, up_to(MAX_MEMORY_GIB, ge=0),
                                      at_most(MAX_MEMORY_GIB, "GiB")] = 4.0
    """At least this much memory is kept for the OS."""
    select_parameters: Literal["CR_Core_Memory", "CR_CPU_Memory", "CR_Core", "CR_CPU"] = (
        "CR_Core_Memory"
    )
    """SelectTypeParameters for select/cons_tres."""
    topology: Literal["auto", "tree", "block", "none"] = "auto"
    """TopologyPlugin: 'auto' picks topology/block for rack-scale NVLink domains when the
    targeted Slurm has it (23.11 and later) and every compute node is in one, a per-partition
    topology.yaml (block for NVLink-rack partitions, tree or flat for the rest) on 25.05 and
    later when only some are, topology/tree when there is a compute fabric, and none
    otherwise. 'block' is an error on a Slurm without topology/block or without NVLink racks."""
    multi_node_nvlink: bool | None = None
    """Jobs share GPU memory over NVLink across the nodes of a rack-scale NVLink domain
    (GB200/GB300 NVL72): the nodes run NVIDIA's IMEX service (imex/ files) and Slurm hands each
    job its IMEX channel (SwitchType=switch/nvidia_imex, Slurm 24.05 and later). Default: true
    when a compute node type has a rack-scale NVLink domain. false keeps each job's NVLink use
    within one node (no IMEX files, no switch plugin), which a release before 24.05 needs."""
    extra: dict[str, Annotated[str | Annotated[int, SLURM_NUMBER_SCHEMA],
                               AfterValidator(_slurm_number)]] = {}
    """Extra slurm.conf parameters, written as Key=Value after the generated ones. Keys must be
    slurm.conf keys of the targeted Slurm release; keys that a spec field sets are refused (the
    error names the field); a key the tool writes with a fixed value (e.g. SchedulerParameters)
    is replaced in place. Values are one line."""


def partition_picks(part: Partition) -> list[tuple[str | GroupNodes, tuple[str | int, ...]]]:
    """Each entry of a partition's nodes with its path under the partition ('nodes' for a
    single entry, ('nodes', j) in a list)."""
    if isinstance(part.nodes, list):
        return [(pick, ("nodes", j)) for j, pick in enumerate(part.nodes)]
    return [(part.nodes, ("nodes",))]
