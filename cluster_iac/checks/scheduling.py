"""Scheduling policy checks: priority weights in Slurm's range, limits that fit the partitions."""

from __future__ import annotations

from collections.abc import Iterator

from cluster_iac.base.errors import Diagnostic, Severity, SpecPath
from cluster_iac.checks.registry import check
from cluster_iac.plan import Plan
from cluster_iac.plan.durations import human
from cluster_iac.plan.scheduling import (
    PRIORITY_MAX,
    HealthPlan,
    NodeHealth,
    PartitionPolicy,
    QosPlan,
    SchedulingPlan,
)
from cluster_iac.plan.slurm import SLURMCTLD_PORT, SLURMD_PORT, SLURMDBD_PORT

PRIORITY: SpecPath = ("slurm", "priority")
# slurmd kills the health-check program after 60 s (slurm.conf(5) HealthCheckProgram): an
# interval shorter than that can start a run while the last may still be going.
HEALTH_RUN_LIMIT_S = 60


@check("slurm.priority_weights")
def priority_weights(plan: Plan) -> Iterator[Diagnostic]:
    """The weights sum to at most 2^32 - 1: each factor reaches 1.0, and a job's priority is
    an unsigned 32-bit integer (priority_multifactor.shtml), so a larger sum makes the highest
    jobs all equal."""
    prio = plan.scheduling.priority if plan.scheduling else None
    if prio is None:
        return
    total = sum(prio.weights.values())
    if total > PRIORITY_MAX:
        yield Diagnostic(
            "SLURM-PRIORITY-WEIGHTS", f"the priority weights sum to {total:,}, above "
            f"{PRIORITY_MAX:,} (2^32 - 1), the highest priority Slurm can hold: jobs whose "
            "factors add up past it all get the same priority", (*PRIORITY, "weights"),
            hint="scale the weights down together; their ratios are the policy",
            details={"measured": total, "limit": PRIORITY_MAX, "unit": ""})


@check("slurm.priority_factors")
def priority_factors(plan: Plan) -> Iterator[Diagnostic]:
    """A QOS priority with no QOS weight counts for nothing; a usage reset on top of a
    half-life wipes what the half-life keeps; recomputing less often than the half-life."""
    sched = plan.scheduling
    if sched is None:
        return
    prio = sched.priority
    ranked = [q for q in sched.qos if q.priority]
    if ranked and (prio is None or prio.weights["qos"] == 0):
        where = ("priority.weights.qos is 0" if prio is not None else
                 "there is no slurm.priority (every weight is 0 or priority/basic)")
        yield Diagnostic(
            "SLURM-PRIORITY-QOS-WEIGHT", f"QOS {', '.join(q.name for q in ranked)} set a "
            f"priority but {where}: the QOS factor adds nothing to any job",
            (*PRIORITY, "weights", "qos") if prio is not None else PRIORITY,
            severity=Severity.WARNING, hint="give priority.weights.qos a weight (e.g. 2000)")
    if prio is None:
        return
    if prio.usage_reset != "none" and prio.decay_half_life_s:
        yield Diagnostic(
            "SLURM-PRIORITY-RESET", f"usage_reset '{prio.usage_reset}' clears all usage on top "
            f"of the {human(prio.decay_half_life_s)} half-life: fair share forgets everything "
            "at each reset (slurm.conf(5) advises the half-life instead)",
            (*PRIORITY, "usage_reset"), severity=Severity.WARNING,
            hint="use usage_reset only with decay_half_life '0s' (hard quotas)")
    if prio.decay_half_life_s and prio.calc_period_min * 60 >= prio.decay_half_life_s:
        yield Diagnostic(
            "SLURM-PRIORITY-CALC", f"calc_period ({human(prio.calc_period_min * 60)}) is not "
            f"shorter than decay_half_life ({human(prio.decay_half_life_s)}): usage would "
            "decay in steps of a half-life or more", (*PRIORITY, "calc_period"),
            severity=Severity.WARNING,
            hint="recompute well within the half-life (Slurm's default: 5 minutes)")


@check("slurm.qos_limits")
def qos_limits(plan: Plan) -> Iterator[Diagnostic]:
    """Each QOS's GPU and node limits fit the largest partition its jobs can run in: a limit
    above every partition's GPUs limits nothing, and is most likely a typo."""
    sched = plan.scheduling
    if sched is None:
        return
    for qos in sched.qos:
        parts = _partitions_of(sched, qos)
        if not parts:
            continue
        gpus = max(p.gpus for p in parts)
        nodes = max(p.nodes for p in parts)
        where = ", ".join(p.name for p in parts)
        for key, value, most, unit in (
                ("max_gpus_per_user", qos.max_gpus_per_user, gpus, "GPUs"),
                ("max_gpus_per_job", qos.max_gpus_per_job, gpus, "GPUs"),
                ("grp_gpus", qos.grp_gpus, gpus, "GPUs"),
                ("max_nodes_per_job", qos.max_nodes_per_job, nodes, "nodes"),
                ("grp_nodes", qos.grp_nodes, nodes, "nodes")):
            if value is not None and value > most:
                yield Diagnostic(
                    "SLURM-QOS-LIMIT", f"QOS '{qos.name}': {key} {value} is above the {most} "
                    f"{unit} of the largest partition it runs in ({where})",
                    (*qos.spec_path, key), hint=f"at most {most}",
                    details={"measured": value, "limit": most, "unit": unit})
        yield from _wall(qos, parts)


def _partitions_of(sched: SchedulingPlan, qos: QosPlan) -> list[PartitionPolicy]:
    """The partitions whose AllowQos admits the QOS (all when they do not narrow it)."""
    return [p for p in sched.partitions.values()
            if p.allow_qos is None or qos.name in p.allow_qos]


def _wall(qos: QosPlan, parts: list[PartitionPolicy]) -> Iterator[Diagnostic]:
    """A MaxWall above every partition's MaxTime: the partition's limit wins (unless the QOS
    has PartitionTimeLimit)."""
    limits = [p.max_time_s for p in parts]
    if qos.max_wall_s is None or None in limits or "PartitionTimeLimit" in qos.flags:
        return
    longest = max(t for t in limits if t is not None)
    if qos.max_wall_s > longest:
        yield Diagnostic(
            "SLURM-QOS-WALL", f"QOS '{qos.name}': max_wall {human(qos.max_wall_s)} is longer "
            f"than the MaxTime of every partition it runs in (at most {human(longest)}): the "
            "partition's limit holds", (*qos.spec_path, "max_wall"), severity=Severity.WARNING,
            hint="lower max_wall, or add the PartitionTimeLimit flag")


@check("slurm.enforcement")
def enforcement(plan: Plan) -> Iterator[Diagnostic]:
    """QOS and account limits hold only when slurmctld enforces them."""
    sched = plan.scheduling
    acct = sched.accounting if sched else None
    if acct is None or not (sched.qos or sched.accounts):
        return
    missing = [e for e in ("associations", "limits", "qos") if e not in acct.enforce]
    if missing:
        yield Diagnostic(
            "SLURM-ENFORCE", f"accounting.enforce lacks {', '.join(missing)}: the spec's QOS "
            "and account limits would not hold (AccountingStorageEnforce)",
            ("slurm", "accounting", "enforce"), severity=Severity.WARNING,
            hint="enforce associations, limits and qos")


LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")
"""StorageHost names that are slurmdbd's own host."""


@check("slurm.accounting_ports")
def accounting_ports(plan: Plan) -> Iterator[Diagnostic]:
    """slurmdbd's DbdPort is free on its host: not MariaDB's StoragePort when the database
    runs beside it, nor slurmctld's or slurmd's port when it runs on a controller or a node
    (two daemons cannot listen on one port: the second fails to bind and does not start)."""
    acct = plan.scheduling.accounting if plan.scheduling else None
    if acct is None:
        return
    roles = {n.hostname: n.role for n in plan.nodes}
    taken: dict[int, str] = {}
    if acct.storage.host in LOCAL_HOSTS or acct.storage.host == acct.dbd_host:
        taken[acct.storage.port] = (f"MariaDB's port (slurm.accounting.storage.port), and the "
                                    f"database runs on {acct.dbd_host} too")
    role = roles.get(acct.dbd_host)
    if role == "controller":
        taken[SLURMCTLD_PORT] = f"SlurmctldPort, and {acct.dbd_host} is a controller"
    elif role == "compute":
        taken[SLURMD_PORT] = f"SlurmdPort, and {acct.dbd_host} runs slurmd"
    if acct.port in taken:
        yield Diagnostic(
            "SLURM-PORT-CLASH", f"slurmdbd's DbdPort {acct.port} on {acct.dbd_host} is "
            f"{taken[acct.port]}: the daemon that starts second cannot listen on it",
            ("slurm", "accounting", "port"),
            hint=f"use slurmdbd's registered port, port: {SLURMDBD_PORT}"
            if acct.port != SLURMDBD_PORT else "give the other daemon another port")


@check("slurm.health_check")
def health_check(plan: Plan) -> Iterator[Diagnostic]:
    """The health check runs less often than slurmd's 60 s limit on one run, and a node it
    drains stays out: with ReturnToService=2 an admin's DOWN (e.g. for ECC errors) ends at
    the next registration."""
    sched = plan.scheduling
    if sched is None:
        return
    health = sched.health
    if health is not None and health.interval_s < HEALTH_RUN_LIMIT_S:
        yield Diagnostic(
            "SLURM-HEALTH-INTERVAL", f"health_check.interval is {human(health.interval_s)}: "
            f"slurmd lets one run take up to {HEALTH_RUN_LIMIT_S} s, so runs can pile up",
            ("slurm", "health_check", "interval"), severity=Severity.WARNING,
            hint="run it every few minutes; the Epilog checks after every job")
    if health is not None:
        yield from _tool_timeout(health)
    if sched.return_to_service == 2:
        yield Diagnostic(
            "SLURM-RETURN-TO-SERVICE", "return_to_service 2 puts a node back in service when "
            "its slurmd registers, whatever set it DOWN (an admin, a script marking ECC errors "
            "DOWN): only DRAINED nodes stay out", ("slurm", "return_to_service"),
            severity=Severity.WARNING,
            hint="use 1: only nodes that were DOWN for not responding come back")


def hung_tools(node: NodeHealth) -> int:
    """Commands of a node type's health check that one fault can hang together, each up to
    ``timeout $tool_timeout`` (templates/slurm/healthcheck.sh.j2): a GPU off the bus hangs
    every nvidia-smi call (two with MIG: the GPU query and `nvidia-smi mig -lgi`); ibstat,
    findmnt and systemctl each hang alone."""
    return max(1, (node.gpu_count > 0) + bool(node.mig))


def _tool_timeout(health: HealthPlan) -> Iterator[Diagnostic]:
    """The tools one fault hangs take hung x tool_timeout: the check must still end before
    slurmd's kill, or it never records the fault and never drains the node."""
    worst = max(health.nodes, key=hung_tools, default=None)
    if worst is None:
        return
    tools = hung_tools(worst)
    total = tools * health.tool_timeout_s
    if total >= HEALTH_RUN_LIMIT_S:
        most = (HEALTH_RUN_LIMIT_S - 1) // tools
        held = (f"a hung GPU holds node type {worst.node_type}'s check {tools} nvidia-smi "
                f"calls x {health.tool_timeout_s} s = {total} s" if tools > 1 else
                f"a hung tool (nvidia-smi on a GPU off the bus) holds the check {total} s")
        yield Diagnostic(
            "SLURM-HEALTH-TIMEOUT", f"health_check.tool_timeout is {health.tool_timeout_s} s: "
            f"{held}, and slurmd kills the check at {HEALTH_RUN_LIMIT_S} s, before it drains "
            f"the node",
            ("slurm", "health_check", "tool_timeout"),
            hint=f"tool_timeout: {most}s or less (a healthy nvidia-smi answers in a second "
                 "or two)", details={"measured": total, "limit": HEALTH_RUN_LIMIT_S,
                                     "unit": "s"})
