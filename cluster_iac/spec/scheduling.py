"""Scheduling policy: slurmdbd accounting, multifactor priority, preemption, QOS and accounts."""

# Annotations as written, not strings: see cluster_iac/spec/__init__.py.

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from cluster_iac.spec.base import SpecModel
from cluster_iac.spec.limits import at_most, up_to
from cluster_iac.spec.strings import within, within_schema

# Slurm stores QOS and account names in lower case (sacctmgr lowers what it is given), so the
# spec takes them that way and a name compares equal to what `sacctmgr show` prints.
SlurmName = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9_.-]*$", max_length=63)]
"""A QOS or account name: lower-case letters, digits, '_', '.', '-'."""
UserName = Annotated[str, StringConstraints(pattern=r"^[a-z_][a-z0-9_.-]*$", max_length=32)]
"""A Unix user name."""
Text = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9 ._()/+&-]*$",
                                        max_length=100)]
"""Free text for a description: letters, digits, blanks and . _ ( ) / + & -."""
HostName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9.-]*$",
                                            max_length=253)]
"""A host name or address."""
SlurmEtcPath = Annotated[str, within("/etc/", example="/etc/slurm/slurmdbd.storage.conf"),
                         within_schema("/etc/")]
"""A file under /etc (slurmdbd.conf's Include'd password file): letters, digits and . _ / -,
no '..'."""
ProgramPath = Annotated[str, within("/etc/", "/usr/local/", "/opt/",
                                   example="/etc/slurm/healthcheck.sh"),
                        within_schema("/etc/", "/usr/local/", "/opt/")]
"""A program that slurmd runs as root: under /etc, /usr/local or /opt, no '..'."""
EnvName = Annotated[str, StringConstraints(pattern=r"^[A-Z_][A-Z0-9_]*$", max_length=64)]
"""An environment variable name."""
Port = Annotated[int, Field(ge=1, le=65535)]
Weight = Annotated[int, Field(ge=0, le=4294967295)]
"""Slurm's priority weights and QOS priorities are unsigned 32-bit integers."""
Limit = Annotated[int, Field(ge=0, le=4294967294)]
"""A count limit (sacctmgr's -1, no limit, is leaving the field out)."""
Duration = str | int
"""A duration with its unit: '90s', '5m', '1h', '7d', '2w', or Slurm's '7-00:00:00',
'04:00:00', '30:00'. A bare number is refused: Slurm reads minutes for one key and seconds for
the next."""
PreemptMode = Literal["off", "cancel", "requeue", "suspend"]


class AccountingStorage(SpecModel):
    """The MariaDB/MySQL database slurmdbd writes to (slurmdbd.conf Storage*)."""

    host: HostName = "localhost"
    """StorageHost: the database server (ideally the slurmdbd host itself)."""
    port: Port = 3306
    """StoragePort."""
    database: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_]+$", max_length=64)] = (
        "slurm_acct_db")
    """StorageLoc: the database name."""
    user: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_]+$", max_length=80)] = "slurm"
    """StorageUser: the database user."""
    password_file: SlurmEtcPath = "/etc/slurm/slurmdbd.storage.conf"
    """The file holding the one line ``StoragePass=...`` on the slurmdbd host, readable by
    SlurmUser only; slurmdbd.conf includes it (``Include``), so no password is ever in the spec
    or the generated files. '#' cannot be in the password (slurmdbd.conf(5))."""
    password_env: EnvName | None = None
    """An environment variable holding the password at deployment: the output then has
    ``slurm/slurmdbd-storage-pass.sh``, which writes ``password_file`` from it."""


class Accounting(SpecModel):
    """slurmdbd accounting: jobs recorded in a database, associations, QOS and limits enforced."""

    host: HostName | None = None
    """DbdHost/AccountingStorageHost: where slurmdbd runs (default: the first controller)."""
    port: Port = 6819
    """DbdPort/AccountingStoragePort (6819 is slurmdbd's registered port)."""
    storage: AccountingStorage = AccountingStorage()
    """The database."""
    enforce: list[Literal["associations", "limits", "qos", "safe", "wckeys", "nojobs",
                          "nosteps"]] = Field(default=["associations", "limits", "qos", "safe"])
    """AccountingStorageEnforce: jobs need an association, and QOS and association limits
    hold ('safe': a job starts only if it can finish within its limits)."""


class PriorityWeights(SpecModel):
    """PriorityWeight*: how much each factor (0.0-1.0) adds to a job's priority."""

    age: Weight = 1000
    """PriorityWeightAge: time waiting in the queue, up to max_age."""
    fairshare: Weight = 10000
    """PriorityWeightFairshare: under-served accounts first."""
    job_size: Weight = 1000
    """PriorityWeightJobSize: bigger (or, with favor_small, smaller) jobs first."""
    partition: Weight = 1000
    """PriorityWeightPartition: the partition's PriorityJobFactor."""
    qos: Weight = 0
    """PriorityWeightQOS: the QOS's priority, normalised to the highest QOS priority."""
    assoc: Weight = 0
    """PriorityWeightAssoc: the association's priority."""


class Priority(SpecModel):
    """Multifactor priority (PriorityType=priority/multifactor, which needs slurmdbd)."""

    weights: PriorityWeights = PriorityWeights()
    """Factor weights: their sum is the highest priority a job can reach, at most 2^32 - 1."""
    decay_half_life: Duration = "7d"
    """PriorityDecayHalfLife: past usage counts half after this long (fair share's memory)."""
    calc_period: Duration = "5m"
    """PriorityCalcPeriod: how often usage decays and fair share is recomputed (Slurm counts
    whole minutes)."""
    max_age: Duration = "7d"
    """PriorityMaxAge: a job waiting this long gets the full age factor."""
    usage_reset: Literal["none", "daily", "weekly", "monthly", "quarterly", "yearly"] = "none"
    """PriorityUsageResetPeriod: clear all usage periodically; for hard quotas with no
    half-life decay, not together with one."""
    favor_small: bool = False
    """PriorityFavorSmall: the job-size factor favours small jobs."""


class Preemption(SpecModel):
    """Cluster-wide preemption (PreemptType is preempt/qos when a QOS may preempt another)."""

    mode: Literal["off", "cancel", "requeue"] = "cancel"
    """PreemptMode for QOS that do not set their own: 'requeue' puts the preempted job back in
    the queue (it must be requeueable), 'cancel' ends it. SUSPEND is not offered: suspended
    jobs keep their GPUs (slurm.conf(5): "Suspended jobs will not release GRES")."""
    exempt_time: Duration | None = None
    """PreemptExemptTime: a job runs at least this long before it can be preempted."""


class Qos(SpecModel):
    """A Quality of Service: priority, whom it may preempt, and limits (sacctmgr QOS)."""

    name: SlurmName
    """QOS name."""
    description: Text | None = None
    """Description (Slurm stores it in lower case)."""
    priority: Weight = 0
    """Priority added to its jobs (through PriorityWeightQOS; unrelated to preemption)."""
    preempt: list[SlurmName] = []
    """QOS whose jobs this QOS's jobs may preempt."""
    preempt_mode: PreemptMode | None = None
    """How this QOS's jobs are preempted; default: the cluster's preemption.mode."""
    grace_time: Duration | None = None
    """GraceTime: a preempted job gets SIGTERM and this long to checkpoint before it ends."""
    preempt_exempt_time: Duration | None = None
    """PreemptExemptTime: its jobs run at least this long before they can be preempted."""
    max_wall: Duration | None = None
    """MaxWall: time limit of each job (INFINITE or left out: no limit)."""
    max_jobs_per_user: Limit | None = None
    """MaxJobsPerUser: running jobs per user."""
    max_submit_jobs_per_user: Limit | None = None
    """MaxSubmitJobsPerUser: pending and running jobs per user."""
    max_gpus_per_user: Limit | None = None
    """MaxTRESPerUser gres/gpu: GPUs one user's running jobs may hold."""
    max_gpus_per_job: Limit | None = None
    """MaxTRESPerJob gres/gpu."""
    max_nodes_per_job: Limit | None = None
    """MaxTRESPerJob node."""
    grp_gpus: Limit | None = None
    """GrpTRES gres/gpu: GPUs all running jobs of this QOS together may hold."""
    grp_nodes: Limit | None = None
    """GrpTRES node."""
    usage_factor: Annotated[float, up_to(1_000, ge=0), at_most(1_000, "as a usage factor")] = 1.0
    """UsageFactor: how much its jobs' usage counts towards fair share (0: free)."""
    flags: list[Literal["DenyOnLimit", "NoReserve", "NoDecay", "OverPartQOS",
                        "PartitionTimeLimit", "RequiresReservation"]] = []
    """QOS flags (sacctmgr(1)): DenyOnLimit rejects a job over a limit at submission."""


class Account(SpecModel):
    """An account: fair-share shares, allowed and default QOS, users, sub-accounts."""

    name: SlurmName
    """Account name (unique over the whole tree)."""
    description: Text | None = None
    """Description (default: the name)."""
    organization: Text | None = None
    """Organization (default: the parent account's name)."""
    fairshare: Annotated[int, Field(ge=1, le=4294967295)] | Literal["parent"] = 1
    """Fairshare: shares relative to its siblings, or 'parent' to share the parent's."""
    qos: list[SlurmName] | None = None
    """QOS its jobs may use (default: the parent's)."""
    default_qos: SlurmName | None = None
    """DefaultQOS: the QOS of a job that names none (must be allowed)."""
    max_gpus: Limit | None = None
    """GrpTRES gres/gpu: GPUs all running jobs of this account and its sub-accounts may hold."""
    users: list[UserName] = []
    """Users with an association in this account (Fairshare 1 each); a user's default
    account is the first account listing the user."""
    accounts: list["Account"] = []
    """Sub-accounts."""
