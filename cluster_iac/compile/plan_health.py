"""The node health check: what each compute node type must show (GPUs, NICs, Lustre, memory)."""

from __future__ import annotations

from dataclasses import replace

from cluster_iac.base.errors import CompileError, Diagnostic, SpecPath
from cluster_iac.plan import NodeTypePlan, Plan
from cluster_iac.plan.durations import DurationError, seconds
from cluster_iac.plan.scheduling import LINK_LAYERS, HealthPlan, NodeHealth
from cluster_iac.plan.slurm import real_memory_mib
from cluster_iac.spec import ClusterSpec

PATH: SpecPath = ("slurm", "health_check")


def plan_health(spec: ClusterSpec, plan: Plan) -> Plan:
    """The health plan (None when switched off), or the errors of its durations."""
    check = spec.slurm.health_check
    if not check.enabled:
        return plan
    problems: list[Diagnostic] = []
    interval = _seconds(check.interval, "interval", problems)
    timeout = _seconds(check.tool_timeout, "tool_timeout", problems)
    if problems:
        raise CompileError(problems)
    types = sorted({n.node_type for n in plan.compute_nodes})
    lustre = plan.lustre.mount if plan.lustre is not None else None
    health = HealthPlan(
        program=check.program, interval_s=interval, node_states=tuple(check.node_states),
        cycle=check.cycle, epilog=check.epilog, tool_timeout_s=timeout,
        nodes=tuple(_node_health(plan, plan.node_types[t], lustre) for t in types))
    return replace(plan, scheduling=replace(plan.scheduling, health=health))


def _seconds(value: str | int, key: str, problems: list[Diagnostic]) -> int:
    try:
        total = seconds(value, slurm_unit="seconds")
    except DurationError as exc:
        problems.append(Diagnostic("SLURM-DURATION", f"{key}: {exc}", (*PATH, key)))
        return 0
    if total is None or total < 1:
        problems.append(Diagnostic("SLURM-DURATION", f"{key}: must be at least one second",
                                   (*PATH, key), hint="to switch the check off, set "
                                   "health_check.enabled: false"))
        return 0
    return total


def _node_health(plan: Plan, nt: NodeTypePlan, lustre: str | None) -> NodeHealth:
    """GPU count and name, the compute NICs' link layer, rate and port count, memory."""
    gpu_name = plan.catalog.gpus[nt.gpu_model].nvml_name if nt.gpu_model else None
    compute = nt.nics_of("compute")
    link = LINK_LAYERS.get(compute[0].link) if compute else None
    rate = compute[0].speed_gbps if compute else 0
    # every cabled port of that link layer and rate shows in ibstat, whatever its role
    ports = sum(nic.count for nic in nt.nics
                if compute and LINK_LAYERS.get(nic.link) == link and nic.speed_gbps == rate)
    return NodeHealth(node_type=nt.name, gpu_count=nt.gpu_count,
                      gpu_name=gpu_name if nt.gpu_count else None, nic_link=link,
                      nic_rate_gbps=rate, nic_ports=ports, lustre_mount=lustre,
                      memory_mib=real_memory_mib(plan.settings.slurm, nt.memory_gib),
                      imex=plan.imex is not None and nt.name in plan.imex.node_types,
                      mig=tuple(sorted(f"{d.gpu}:{d.gi}:{d.profile}" for d in nt.mig)))
