"""What the plan decides for the scheduling policy: accounting, priority, QOS, accounts, health.

Durations are held in seconds (minutes for PriorityCalcPeriod, which Slurm counts in minutes);
the emitters write each in the unit its key reads (plan/durations.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cluster_iac.base.errors import SpecPath

# PriorityWeight<Factor> keys, by the spec's weight names, in slurm.conf(5)'s order
WEIGHT_KEYS = (("age", "Age"), ("assoc", "Assoc"), ("fairshare", "Fairshare"),
               ("job_size", "JobSize"), ("partition", "Partition"), ("qos", "QOS"))
# A job's priority is an unsigned 32-bit integer (priority_multifactor.shtml: "The job's
# priority is an integer that ranges between 0 and 4294967295"): the weights of factors that
# each reach 1.0 must sum to at most this.
PRIORITY_MAX = 4294967295
# ibstat's "Link layer:" words, by the catalog's link names
LINK_LAYERS = {"infiniband": "InfiniBand", "ethernet": "Ethernet"}


# Records without generated __eq__/__repr__ (eq=False, repr=False): see plan/model.py.
@dataclass(frozen=True, eq=False, repr=False)
class StoragePlan:
    """slurmdbd's database."""

    host: str
    port: int
    database: str
    user: str
    password_file: str
    password_env: str | None


@dataclass(frozen=True, eq=False, repr=False)
class AccountingPlan:
    """slurmdbd and what slurmctld enforces through it."""

    dbd_host: str
    port: int
    storage: StoragePlan
    enforce: tuple[str, ...]


@dataclass(frozen=True, eq=False, repr=False)
class PriorityPlan:
    """Multifactor priority."""

    weights: dict[str, int]  # spec weight name -> weight
    decay_half_life_s: int
    calc_period_min: int
    max_age_s: int
    usage_reset: str
    favor_small: bool


@dataclass(frozen=True, eq=False, repr=False)
class QosPlan:
    """One QOS, limits resolved (None: no limit)."""

    name: str
    description: str
    priority: int
    preempt: tuple[str, ...]
    preempt_mode: str | None  # None: the cluster's
    grace_time_s: int | None
    preempt_exempt_s: int | None
    max_wall_s: int | None
    max_jobs_per_user: int | None
    max_submit_jobs_per_user: int | None
    max_gpus_per_user: int | None
    max_gpus_per_job: int | None
    max_nodes_per_job: int | None
    grp_gpus: int | None
    grp_nodes: int | None
    usage_factor: float
    flags: tuple[str, ...]
    spec_path: SpecPath


@dataclass(frozen=True, eq=False, repr=False)
class AccountPlan:
    """One account association under its parent (the tree flattened, parents first)."""

    name: str
    parent: str  # 'root' for the top level
    description: str
    organization: str
    fairshare: str  # a number or 'parent'
    qos: tuple[str, ...]  # allowed QOS, inheritance resolved
    default_qos: str | None  # inheritance resolved
    max_gpus: int | None
    spec_path: SpecPath


@dataclass(frozen=True, eq=False, repr=False)
class UserPlan:
    """A user's association with one account."""

    name: str
    account: str
    default_account: str  # the first account listing the user


@dataclass(frozen=True, eq=False, repr=False)
class PartitionPolicy:
    """A partition's scheduling defaults and limits, and the resources they are judged by."""

    name: str
    def_mem_per_gpu_mib: int | None
    def_cpu_per_gpu: int | None
    allow_qos: tuple[str, ...] | None
    allow_accounts: tuple[str, ...] | None
    gpus: int  # GPUs in the partition
    nodes: int
    max_time_s: int | None  # None: INFINITE


@dataclass(frozen=True, eq=False, repr=False)
class NodeHealth:
    """What the health check expects of one compute node type."""

    node_type: str
    gpu_count: int
    gpu_name: str | None  # as nvidia-smi prints it
    nic_link: str | None  # ibstat's link layer of the compute NICs ('InfiniBand', 'Ethernet')
    nic_rate_gbps: int
    nic_ports: int  # Active ports of that link layer and rate the node must have
    lustre_mount: str | None
    memory_mib: int  # RealMemory: /proc/meminfo's MemTotal must reach it
    imex: bool = False  # runs NVIDIA IMEX for multi-node NVLink (plan/imex.py)
    # MIG instances as `nvidia-smi mig -lgi` lists them, 'gpu:gi:profile', byte-sorted
    mig: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False, repr=False)
class HealthPlan:
    """The health-check program and its slurm.conf keys."""

    program: str
    interval_s: int
    node_states: tuple[str, ...]
    cycle: bool
    epilog: bool
    tool_timeout_s: int
    nodes: tuple[NodeHealth, ...]


@dataclass(frozen=True, eq=False, repr=False)
class SchedulingPlan:
    """The scheduling policy every accounting and health emitter reads."""

    cluster: str
    accounting: AccountingPlan | None
    priority: PriorityPlan | None
    preempt_type: str  # 'preempt/qos' or 'preempt/none'
    preempt_mode: str  # cluster-wide PreemptMode, lower case
    preempt_exempt_s: int | None
    qos: tuple[QosPlan, ...]
    default_qos: str | None
    accounts: tuple[AccountPlan, ...]
    users: tuple[UserPlan, ...]
    partitions: dict[str, PartitionPolicy] = field(default_factory=dict)
    health: HealthPlan | None = None
    return_to_service: int = 1

    def qos_named(self, name: str) -> QosPlan | None:
        return next((q for q in self.qos if q.name == name), None)
