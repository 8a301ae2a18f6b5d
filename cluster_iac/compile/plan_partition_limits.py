"""Partition defaults per GPU, derived from the nodes, and the resources QOS limits are judged by.

DefMemPerGPU and DefCpuPerGPU default to the partition's smallest GPU node split evenly over its
GPUs: a job that asks for every GPU of a node and nothing else then gets the whole node. A
spec value may only be lower; a higher one would make such a job ask for more than the node
has, and it would never start.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from cluster_iac.base.errors import CompileError, Diagnostic, SpecPath
from cluster_iac.plan import NodeTypePlan, PartitionPlan, Plan
from cluster_iac.plan.durations import DurationError, time_limit_seconds
from cluster_iac.plan.scheduling import PartitionPolicy
from cluster_iac.plan.slurm import real_memory_mib
from cluster_iac.spec import ClusterSpec
from cluster_iac.spec.slurm import Partition


def plan_partition_limits(spec: ClusterSpec, plan: Plan) -> Plan:
    """Each partition's per-GPU defaults and allowed QOS/accounts into the scheduling plan."""
    types = {n.hostname: plan.node_types[n.node_type] for n in plan.nodes}
    policies, problems = {}, []
    for part, spec_part in zip(plan.partitions, spec.slurm.partitions, strict=True):
        node_types = [types[h] for h in part.nodes]
        policy = _policy(plan, part, spec_part, node_types)
        problems += list(_too_high(plan, part, spec_part, node_types, policy))
        policies[part.name] = policy
    if problems:
        raise CompileError(problems)
    return replace(plan, scheduling=replace(plan.scheduling, partitions=policies))


def _gpu_types(node_types: list[NodeTypePlan]) -> list[NodeTypePlan]:
    return list({nt.name: nt for nt in node_types if nt.gpu_count}.values())


def derived_mem_per_gpu(plan: Plan, node_types: list[NodeTypePlan]) -> int | None:
    """floor(RealMemory / GPU GRES) of the GPU node type with the least per GPU, in MiB. A MIG
    instance is one GPU GRES to Slurm (a job's --gpus=1 may get one), so a node of 8 GPUs cut
    into 7 instances each divides its memory 56 ways: every instance can run a job at once."""
    gpu_types = _gpu_types(node_types)
    return min((real_memory_mib(plan.settings.slurm, nt.memory_gib) // nt.gres_gpus
                for nt in gpu_types), default=None)


def derived_cpu_per_gpu(node_types: list[NodeTypePlan]) -> int | None:
    """floor(CPUs / GPU GRES) of the GPU node type with the fewest per GPU (CPUs as Slurm
    counts them: hardware threads; MIG instances counted as derived_mem_per_gpu does)."""
    return min((nt.cpus // nt.gres_gpus for nt in _gpu_types(node_types)), default=None)


def _policy(plan: Plan, part: PartitionPlan, spec_part: Partition,
            node_types: list[NodeTypePlan]) -> PartitionPolicy:
    mem = derived_mem_per_gpu(plan, node_types)
    cpu = derived_cpu_per_gpu(node_types)
    if spec_part.def_mem_per_gpu_gib is not None:
        mem = int(spec_part.def_mem_per_gpu_gib * 1024)
    if spec_part.def_cpu_per_gpu is not None:
        cpu = spec_part.def_cpu_per_gpu
    return PartitionPolicy(
        name=part.name, def_mem_per_gpu_mib=mem, def_cpu_per_gpu=cpu,
        allow_qos=tuple(spec_part.allow_qos) if spec_part.allow_qos is not None else None,
        allow_accounts=(tuple(spec_part.allow_accounts)
                        if spec_part.allow_accounts is not None else None),
        gpus=sum(nt.gpu_count for nt in node_types), nodes=len(node_types),
        max_time_s=max_time_seconds(part.max_time))


def max_time_seconds(text: str) -> int | None:
    """A partition MaxTime (slurm.conf(5): a bare number is minutes) in seconds; None for
    INFINITE/UNLIMITED."""
    try:
        return time_limit_seconds(text)
    except DurationError:
        return None  # plan_slurm refused it already (SLURM-TIME)


def _too_high(plan: Plan, part: PartitionPlan, spec_part: Partition,
              node_types: list[NodeTypePlan], policy: PartitionPolicy) -> Iterator[Diagnostic]:
    path: SpecPath = part.spec_path
    checks = (("def_mem_per_gpu_gib", spec_part.def_mem_per_gpu_gib,
               derived_mem_per_gpu(plan, node_types), policy.def_mem_per_gpu_mib, _mib,
               "its RealMemory"),
              ("def_cpu_per_gpu", spec_part.def_cpu_per_gpu, derived_cpu_per_gpu(node_types),
               policy.def_cpu_per_gpu, _cpus, "its CPUs"))
    for key, given, derived, value, unit, what in checks:
        if given is None:
            continue
        if derived is None:
            yield Diagnostic("SLURM-PARTITION-DEFAULT", f"partition '{part.name}' has no GPU "
                             f"nodes: {key} would apply to no job", (*path, key),
                             hint=f"drop {key}")
        elif value is not None and value > derived:
            yield Diagnostic(
                "SLURM-PARTITION-DEFAULT", f"partition '{part.name}': {key} gives {unit(value)} "
                f"per GPU, but its smallest GPU node has {unit(derived)} per GPU ({what} over "
                "its GPUs): a job asking for all of a node's GPUs would ask for more than the "
                "node has and never start", (*path, key),
                hint=f"leave it out (the default is {unit(derived)}) or lower it")


def _mib(value: int) -> str:
    return f"{value / 1024:.1f} GiB ({value} MiB)"


def _cpus(value: int) -> str:
    return f"{value} CPUs"
