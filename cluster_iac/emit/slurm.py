"""slurm.conf, gres.conf and cgroup.conf."""

from __future__ import annotations

import math
from collections import defaultdict

from cluster_iac.emit import topology
from cluster_iac.emit.base import render_template
from cluster_iac.hostlist import fold
from cluster_iac.plan import NodeTypePlan, Plan

# Ports registered with IANA for Slurm (slurmctld 6817, slurmd 6818, slurmdbd 6819).
SLURMCTLD_PORT = 6817
SLURMD_PORT = 6818
SLURMDBD_PORT = 6819


def render(plan: Plan) -> dict[str, str]:
    return {
        "slurm/slurm.conf": render_template("slurm/slurm.conf.j2", **slurm_conf_context(plan)),
        "slurm/gres.conf": render_template("slurm/gres.conf.j2", lines=gres_lines(plan)),
        "slurm/cgroup.conf": render_template("slurm/cgroup.conf.j2"),
        **topology.render(plan),
    }


def real_memory_mib(plan: Plan, nt: NodeTypePlan) -> int:
    """Installed memory minus the OS reserve (a percentage, with a floor)."""
    slurm = plan.settings.slurm
    total = nt.memory_gib * 1024
    reserve = max(slurm.memory_reserve_min_gib * 1024, total * slurm.memory_reserve_percent / 100)
    return math.floor(total - reserve)


def nodes_by_type(plan: Plan) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = defaultdict(list)
    for node in plan.compute_nodes:
        grouped[node.node_type].append(node.hostname)
    return dict(sorted(grouped.items()))


def node_lines(plan: Plan) -> list[str]:
    lines = []
    for type_name, hosts in nodes_by_type(plan).items():
        nt = plan.node_types[type_name]
        fields = [
            f"NodeName={fold(hosts)}",
            f"CPUs={nt.cpus}",
            "Boards=1",
            f"SocketsPerBoard={nt.sockets}",
            f"CoresPerSocket={nt.cores_per_socket}",
            f"ThreadsPerCore={nt.threads_per_core}",
            f"RealMemory={real_memory_mib(plan, nt)}",
        ]
        if nt.gpu_count:
            fields.append(f"Gres=gpu:{nt.gres_type}:{nt.gpu_count}")
        fields.append("Features=" + ",".join(node_features(nt)))
        fields.append("State=UNKNOWN")
        lines.append(" ".join(fields))
    return lines


def node_features(nt: NodeTypePlan) -> list[str]:
    """The node type, its GPU type and the spec's own features."""
    features = {nt.name, *nt.features}
    if nt.gres_type:
        features.add(nt.gres_type)
    return sorted(features)


def partition_lines(plan: Plan) -> list[str]:
    lines = []
    for part in plan.partitions:
        fields = [
            f"PartitionName={part.name}",
            f"Nodes={fold(part.nodes)}",
            f"Default={'YES' if part.default else 'NO'}",
            f"MaxTime={part.max_time}",
            f"PriorityTier={part.priority_tier}",
        ]
        if part.exclusive:
            fields.append("OverSubscribe=EXCLUSIVE")
        fields.append("State=UP")
        lines.append(" ".join(fields))
    return lines


def parameters(plan: Plan) -> list[tuple[str, str]]:
    """Scheduler-wide parameters, in the order a reader expects; spec 'extra' overrides."""
    slurm = plan.settings.slurm
    controllers = [n.hostname for n in plan.nodes_by_role("controller")]
    params: list[tuple[str, str]] = [("ClusterName", plan.cluster.name)]
    params += [("SlurmctldHost", host) for host in controllers]
    params += [
        ("SlurmUser", "slurm"),
        ("SlurmctldPort", str(SLURMCTLD_PORT)),
        ("SlurmdPort", str(SLURMD_PORT)),
        ("AuthType", "auth/munge"),
        ("StateSaveLocation", "/var/spool/slurmctld"),
        ("SlurmdSpoolDir", "/var/spool/slurmd"),
        ("SlurmctldPidFile", "/run/slurmctld.pid"),
        ("SlurmdPidFile", "/run/slurmd.pid"),
        ("SlurmctldLogFile", "/var/log/slurm/slurmctld.log"),
        ("SlurmdLogFile", "/var/log/slurm/slurmd.log"),
        # cgroup confinement of cores, memory and GPUs (cgroup.conf says what is constrained).
        ("ProctrackType", "proctrack/cgroup"),
        ("TaskPlugin", "task/cgroup,task/affinity"),
        ("JobAcctGatherType", "jobacct_gather/cgroup"),
        ("SelectType", "select/cons_tres"),
        ("SelectTypeParameters", slurm.select_parameters),
        ("GresTypes", "gpu"),
        *topology_parameters(plan),
        ("SchedulerType", "sched/backfill"),
        ("SchedulerParameters", "bf_continue"),
        # RDMA needs an unlimited locked-memory limit in jobs: do not copy the
        # submitting shell's (often 64 KiB) MEMLOCK limit to the compute nodes.
        ("PropagateResourceLimitsExcept", "MEMLOCK"),
        ("MpiDefault", "none"),
        ("ReturnToService", "2"),
        ("SlurmctldTimeout", "120"),
        ("SlurmdTimeout", "300"),
        ("MessageTimeout", "30"),
        ("InactiveLimit", "0"),
        ("KillWait", "30"),
        ("MinJobAge", "300"),
    ]
    params += accounting_parameters(plan, controllers)
    overrides = dict(slurm.extra)
    merged = [(k, overrides.pop(k, v)) for k, v in params]
    return merged + sorted(overrides.items())


def topology_parameters(plan: Plan) -> list[tuple[str, str]]:
    """TopologyPlugin when topology.conf is written (see emit/topology.py)."""
    chosen = topology.plugin(plan)
    return [("TopologyPlugin", chosen)] if chosen else []


def accounting_parameters(plan: Plan, controllers: list[str]) -> list[tuple[str, str]]:
    if not plan.settings.slurm.accounting:
        return [("AccountingStorageType", "accounting_storage/none"),
                ("PriorityType", "priority/basic")]
    return [
        ("AccountingStorageType", "accounting_storage/slurmdbd"),
        ("AccountingStorageHost", controllers[0]),
        ("AccountingStoragePort", str(SLURMDBD_PORT)),
        ("AccountingStorageTRES", "gres/gpu"),
        ("AccountingStorageEnforce", "associations,limits,qos"),
        ("PriorityType", "priority/multifactor"),
        ("PriorityWeightFairshare", "10000"),
        ("PriorityWeightAge", "1000"),
        ("PriorityWeightJobSize", "1000"),
        ("PriorityWeightPartition", "1000"),
    ]


def slurm_conf_context(plan: Plan) -> dict[str, object]:
    return {
        "cluster": plan.cluster.name,
        "parameters": [f"{k}={v}" for k, v in parameters(plan)],
        "nodes": node_lines(plan),
        "partitions": partition_lines(plan),
    }


def gres_lines(plan: Plan) -> list[str]:
    """One line per node type and CPU socket, so each GPU is bound to its socket's cores."""
    lines = []
    for type_name, hosts in nodes_by_type(plan).items():
        nt = plan.node_types[type_name]
        if not nt.gpu_count:
            continue
        hostlist = fold(hosts)
        if nt.gres_autodetect == "nvml":
            lines.append(f"NodeName={hostlist} AutoDetect=nvml")
            continue
        for socket, gpus in _gpus_by_socket(nt).items():
            line = (f"NodeName={hostlist} Name=gpu Type={nt.gres_type} "
                    f"File=/dev/nvidia{_bracket(gpus)}")
            if socket is not None:
                first = socket * nt.cores_per_socket
                line += f" Cores={first}-{first + nt.cores_per_socket - 1}"
            lines.append(line)
    return lines


def _gpus_by_socket(nt: NodeTypePlan) -> dict[int | None, list[int]]:
    grouped: dict[int | None, list[int]] = defaultdict(list)
    for gpu in range(nt.gpu_count):
        socket = nt.gpu_sockets[gpu] if len(nt.gpu_sockets) == nt.gpu_count else None
        grouped[socket].append(gpu)
    return dict(sorted(grouped.items(), key=lambda kv: (kv[0] is None, kv[0] or 0)))


def _bracket(indices: list[int]) -> str:
    """[0,1,2,3] -> '[0-3]', [5] -> '5' (Slurm's File= device-range syntax)."""
    if len(indices) == 1:
        return str(indices[0])
    folded = fold(f"d{i}" for i in indices)
    return folded[1:]
