"""slurm.conf's policy keys: accounting, priority, preemption, health check, partition defaults.

These are parameter groups and partition keys of emit/slurm.py's extension point; the keys are
listed in plan/slurm.py ``OWNED_KEYS`` with the spec fields that set them. Each duration goes
out in the unit its key reads (plan/durations.py): PriorityCalcPeriod in minutes,
HealthCheckInterval in seconds, the others as D-HH:MM:SS.
"""

from __future__ import annotations

from cluster_iac.emit.slurm_conf import Pair
from cluster_iac.plan import PartitionPlan, Plan
from cluster_iac.plan.durations import slurm_time
from cluster_iac.plan.scheduling import WEIGHT_KEYS

# AccountingStorageTRES: GPUs are tracked (and so can be limited per user, account and QOS)
# only when listed; cpu, mem, energy, node, billing, fs/disk, vmem and pages always are.
TRACKED_TRES = "gres/gpu"


def accounting_parameters(plan: Plan) -> list[Pair]:
    """slurmdbd, or no accounting at all. Without storage nothing gathers either:
    jobacct_gather/cgroup with accounting_storage/none logs 'Job accounting information
    gathered, but not stored' at every start (22.05, 24.11 and 26.05 alike)."""
    acct = plan.scheduling.accounting
    if acct is None:
        return [("AccountingStorageType", "accounting_storage/none"),
                ("JobAcctGatherType", "jobacct_gather/none")]
    return [
        ("AccountingStorageType", "accounting_storage/slurmdbd"),
        ("AccountingStorageHost", acct.dbd_host),
        ("AccountingStoragePort", acct.port),
        ("AccountingStorageTRES", TRACKED_TRES),
        ("AccountingStorageEnforce", ",".join(acct.enforce)),
        ("JobAcctGatherType", "jobacct_gather/cgroup"),
    ]


def priority_parameters(plan: Plan) -> list[Pair]:
    """Multifactor priority where the spec gives priority weights; else no key at all, so the
    release's default holds: priority/basic in 22.05, priority/multifactor with every weight
    0 in 24.11 and 26.05 (`scontrol show config` of each, tests/real/test_priority_real.py);
    both order jobs by submission. The fair-share and age factors need slurmdbd (slurm.conf(5)
    PriorityWeightFairshare, PriorityWeightAge), so the spec's priority needs accounting."""
    prio = plan.scheduling.priority
    if prio is None:
        return []
    pairs: list[Pair] = [
        ("PriorityType", "priority/multifactor"),
        ("PriorityDecayHalfLife", slurm_time(prio.decay_half_life_s)),
        ("PriorityCalcPeriod", prio.calc_period_min),
        ("PriorityMaxAge", slurm_time(prio.max_age_s)),
        ("PriorityUsageResetPeriod", prio.usage_reset.upper()),
        ("PriorityFavorSmall", prio.favor_small),
    ]
    return pairs + [(f"PriorityWeight{key}", prio.weights[name]) for name, key in WEIGHT_KEYS]


def preemption_parameters(plan: Plan) -> list[Pair]:
    """preempt/qos with the cluster's default mode when a QOS may preempt another."""
    sched = plan.scheduling
    if sched.preempt_type == "preempt/none":
        return []
    pairs: list[Pair] = [("PreemptType", sched.preempt_type),
                         ("PreemptMode", sched.preempt_mode.upper())]
    if sched.preempt_exempt_s is not None:
        pairs.append(("PreemptExemptTime", slurm_time(sched.preempt_exempt_s)))
    return pairs


def health_parameters(plan: Plan) -> list[Pair]:
    """The health-check program (and Epilog), and ReturnToService. The program drains, never
    sets DOWN: no ReturnToService value returns a DRAINED node to service (slurm.conf(5)
    ReturnToService speaks of DOWN nodes only), so a node drained for a missing GPU stays out
    after its slurmd re-registers."""
    sched = plan.scheduling
    pairs: list[Pair] = []
    health = sched.health
    if health is not None:
        states = [s.upper() for s in health.node_states] + (["CYCLE"] if health.cycle else [])
        pairs += [("HealthCheckProgram", health.program),
                  ("HealthCheckInterval", health.interval_s),
                  ("HealthCheckNodeState", ",".join(states))]
        if health.epilog:
            pairs.append(("Epilog", health.program))
    return pairs + [("ReturnToService", sched.return_to_service)]


def partition_policy_keys(plan: Plan, part: PartitionPlan) -> list[Pair]:
    """DefMemPerGPU (MiB) and DefCpuPerGPU where the partition has GPUs; AllowQos and
    AllowAccounts where the spec narrows them."""
    policy = plan.scheduling.partitions[part.name]
    pairs: list[Pair] = []
    if policy.def_mem_per_gpu_mib is not None:
        pairs.append(("DefMemPerGPU", policy.def_mem_per_gpu_mib))
    if policy.def_cpu_per_gpu is not None:
        pairs.append(("DefCpuPerGPU", policy.def_cpu_per_gpu))
    if policy.allow_qos is not None:
        pairs.append(("AllowQos", ",".join(policy.allow_qos)))
    if policy.allow_accounts is not None:
        pairs.append(("AllowAccounts", ",".join(policy.allow_accounts)))
    return pairs
