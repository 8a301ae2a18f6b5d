"""slurm.conf, gres.conf and cgroup.conf: one emitter for every release of the Slurm version table.

Extension point. slurm.conf is assembled from three tables at the bottom of this module:

- ``PARAMETER_GROUPS``: (heading, function) pairs in the order slurm.conf lists them; each
  function takes the plan and returns the group's ``(key, value)`` pairs. A new spec section
  (accounting, priority, QOS, health checks) adds or replaces one group with a function in its
  own module, and lists the keys its spec fields set in plan/slurm.py ``OWNED_KEYS`` so that
  ``slurm.extra`` cannot set them too.
- ``NODE_KEYS`` and ``PARTITION_KEYS``: functions ``(plan, node type)`` and
  ``(plan, partition)`` returning pairs appended to each NodeName and PartitionName line.

Version differences are read from ``plan.slurm.release`` (catalog/slurm_releases.py), never
from the version string. Every line goes through emit/slurm_conf.py, which quotes values and
refuses any value that would add a line. ``slurm.extra`` replaces a generated key that no spec
field sets (e.g. SchedulerParameters) in place; other extra keys follow the generated ones.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable

from cluster_iac.base.hostlist import fold
from cluster_iac.emit import slurm_policy, topology
from cluster_iac.emit.base import render_template
from cluster_iac.emit.slurm_conf import Pair, conf_line
from cluster_iac.plan import NodeTypePlan, PartitionPlan, Plan
from cluster_iac.plan import slurm as slurm_plan
from cluster_iac.plan.mig import gres_counts
from cluster_iac.plan.slurm import SLURMCTLD_PORT, SLURMD_PORT

# Ports registered with IANA for Slurm (slurmctld 6817, slurmd 6818, slurmdbd 6819).

ParameterGroup = Callable[[Plan], Iterable[Pair]]
NodeKeys = Callable[[Plan, NodeTypePlan], Iterable[Pair]]
PartitionKeys = Callable[[Plan, PartitionPlan], Iterable[Pair]]


def render(plan: Plan) -> dict[str, str]:
    by_type = nodes_by_type(plan)  # once for slurm.conf and gres.conf
    return {
        "slurm/slurm.conf": render_template("slurm/slurm.conf.j2", cluster=plan.cluster.name,
                                            groups=parameter_sections(plan),
                                            nodes=node_lines(plan, by_type),
                                            partitions=partition_lines(plan)),
        "slurm/gres.conf": render_template("slurm/gres.conf.j2",
                                           lines=gres_lines(plan, by_type)),
        "slurm/cgroup.conf": render_template("slurm/cgroup.conf.j2"),
        **topology.render(plan),
    }


# --- parameters -----------------------------------------------------------------------------------


def parameters(plan: Plan) -> list[tuple[str, str]]:
    """Every scheduler-wide key and value, in file order, slurm.extra applied."""
    return [(k, str(v)) for _heading, pairs in _merged_groups(plan) for k, v in pairs]


def parameter_sections(plan: Plan) -> list[tuple[str, list[str]]]:
    """(heading, lines) per non-empty group, for the template."""
    return [(heading, [conf_line([pair]) for pair in pairs])
            for heading, pairs in _merged_groups(plan) if pairs]


def _merged_groups(plan: Plan) -> list[tuple[str, list[Pair]]]:
    """The groups with slurm.extra: a generated key is replaced where it stands (Slurm ignores
    the case of keys), the other extra keys come last, in the spec's order."""
    extra = {key.lower(): (key, value) for key, value in plan.slurm.extra}
    groups = []
    for heading, group in PARAMETER_GROUPS:
        pairs = [extra.pop(key.lower(), (key, value)) for key, value in group(plan)]
        groups.append((heading, pairs))
    groups.append(("Site parameters (slurm.extra)", list(extra.values())))
    return groups


def controller_parameters(plan: Plan) -> list[Pair]:
    controllers = [n.hostname for n in plan.nodes_by_role("controller")]
    return [
        ("ClusterName", plan.cluster.name),
        *(("SlurmctldHost", host) for host in controllers),
        ("SlurmUser", "slurm"),
        ("SlurmctldPort", SLURMCTLD_PORT),
        ("SlurmdPort", SLURMD_PORT),
        ("AuthType", "auth/munge"),
        ("StateSaveLocation", "/var/spool/slurmctld"),
        ("SlurmdSpoolDir", "/var/spool/slurmd"),
        ("SlurmctldPidFile", "/run/slurmctld.pid"),
        ("SlurmdPidFile", "/run/slurmd.pid"),
        ("SlurmctldLogFile", "/var/log/slurm/slurmctld.log"),
        ("SlurmdLogFile", "/var/log/slurm/slurmd.log"),
    ]


def resource_parameters(plan: Plan) -> list[Pair]:
    return [
        # cgroup confinement of cores, memory and GPUs (cgroup.conf says what is constrained)
        ("ProctrackType", "proctrack/cgroup"),
        ("TaskPlugin", "task/cgroup,task/affinity"),
        ("SelectType", "select/cons_tres"),
        ("SelectTypeParameters", plan.settings.slurm.select_parameters),
        ("GresTypes", "gpu"),
    ]


def topology_parameters(plan: Plan) -> list[Pair]:
    """TopologyPlugin when topology.conf is written (topology.yaml names its own plugins)."""
    chosen = topology.plugin(plan)
    return [("TopologyPlugin", chosen)] if chosen else []


def imex_parameters(plan: Plan) -> list[Pair]:
    """switch/nvidia_imex where jobs span the nodes of rack-scale NVLink domains (plan/imex.py):
    it makes each job's IMEX channel device on its nodes."""
    if plan.imex is None:
        return []
    return [("SwitchType", "switch/nvidia_imex"),
            ("SwitchParameters", f"imex_channel_count={plan.imex.channels}")]


def scheduling_parameters(plan: Plan) -> list[Pair]:
    return [
        ("SchedulerType", "sched/backfill"),
        ("SchedulerParameters", "bf_continue"),
        # RDMA needs an unlimited locked-memory limit in jobs: do not copy the
        # submitting shell's (often 64 KiB) MEMLOCK limit to the compute nodes.
        ("PropagateResourceLimitsExcept", "MEMLOCK"),
        ("MpiDefault", "none"),
    ]


def timeout_parameters(plan: Plan) -> list[Pair]:
    return [
        ("SlurmctldTimeout", 120),
        ("SlurmdTimeout", 300),
        ("MessageTimeout", 30),
        ("InactiveLimit", 0),
        ("KillWait", 30),
        ("MinJobAge", 300),
    ]


# --- nodes and partitions -------------------------------------------------------------------------


def real_memory_mib(plan: Plan, nt: NodeTypePlan) -> int:
    """Installed memory minus the OS reserve (a percentage, with a floor)."""
    return slurm_plan.real_memory_mib(plan.settings.slurm, nt.memory_gib)


def nodes_by_type(plan: Plan) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = defaultdict(list)
    for node in plan.compute_nodes:
        grouped[node.node_type].append(node.hostname)
    return dict(sorted(grouped.items()))


def node_lines(plan: Plan, by_type: dict[str, list[str]] | None = None) -> list[str]:
    """One NodeName line per node type (``by_type``: nodes_by_type(plan), where known)."""
    lines = []
    for type_name, hosts in (nodes_by_type(plan) if by_type is None else by_type).items():
        nt = plan.node_types[type_name]
        pairs: list[Pair] = [("NodeName", fold(hosts))]
        for keys in NODE_KEYS:
            pairs += keys(plan, nt)
        lines.append(conf_line(pairs))
    return lines


def hardware_keys(plan: Plan, nt: NodeTypePlan) -> list[Pair]:
    pairs: list[Pair] = [
        ("CPUs", nt.cpus),
        ("Boards", 1),
        ("SocketsPerBoard", nt.sockets),
        ("CoresPerSocket", nt.cores_per_socket),
        ("ThreadsPerCore", nt.threads_per_core),
        ("RealMemory", real_memory_mib(plan, nt)),
    ]
    if nt.gpu_count:
        counts = gres_counts(nt.gres_type, nt.gpu_count, nt.mig)
        pairs.append(("Gres", ",".join(f"gpu:{t}:{n}" for t, n in counts.items())))
    return pairs + [("Features", ",".join(node_features(nt))), ("State", "UNKNOWN")]


def node_features(nt: NodeTypePlan) -> list[str]:
    """The node type, its GPU type and the spec's own features."""
    features = {nt.name, *nt.features}
    if nt.gres_type:
        features.add(nt.gres_type)
    return sorted(features)


def partition_lines(plan: Plan) -> list[str]:
    lines = []
    for part in plan.partitions:
        pairs: list[Pair] = [("PartitionName", part.name)]
        for keys in PARTITION_KEYS:
            pairs += keys(plan, part)
        lines.append(conf_line([*pairs, ("State", "UP")]))
    return lines


def partition_keys(plan: Plan, part: PartitionPlan) -> list[Pair]:
    pairs: list[Pair] = [
        ("Nodes", fold(part.nodes)),
        ("Default", part.default),
        ("MaxTime", part.max_time),
        ("PriorityTier", part.priority_tier),
    ]
    if part.exclusive:
        # 26.05 deprecates OverSubscribe=EXCLUSIVE for Exclusive=NODE (the version table)
        pairs.append(("Exclusive", "NODE") if plan.slurm.release.exclusive_node
                     else ("OverSubscribe", "EXCLUSIVE"))
    if part.name in plan.slurm.partition_topology:
        pairs.append(("Topology", plan.slurm.partition_topology[part.name]))
    return pairs


# --- gres.conf ------------------------------------------------------------------------------------


def gres_lines(plan: Plan, by_type: dict[str, list[str]] | None = None) -> list[str]:
    """One line per node type and CPU socket, so each GPU is bound to its socket's cores."""
    lines = []
    for type_name, hosts in (nodes_by_type(plan) if by_type is None else by_type).items():
        nt = plan.node_types[type_name]
        if not nt.gpu_count:
            continue
        hostlist = fold(hosts)
        if nt.gres_autodetect == "nvml":
            lines.append(conf_line([("NodeName", hostlist), ("AutoDetect", "nvml")]))
            continue
        partitioned = {d.gpu for d in nt.mig}
        for socket, gpus in _gpus_by_socket(nt).items():
            whole = [g for g in gpus if g not in partitioned]
            if whole:
                lines.append(conf_line([
                    ("NodeName", hostlist), ("Name", "gpu"), ("Type", nt.gres_type),
                    ("File", f"/dev/nvidia{_bracket(whole)}"), *_cores(nt, socket)]))
            # each MIG instance: its GPU's device and its instances' capability devices
            lines += [conf_line([("NodeName", hostlist), ("Name", "gpu"),
                                 ("Type", d.gres_type), ("MultipleFiles", ",".join(d.files)),
                                 *_cores(nt, socket)])
                      for d in nt.mig if d.gpu in gpus]
    return lines


def _cores(nt: NodeTypePlan, socket: int | None) -> list[Pair]:
    if socket is None:
        return []
    first = socket * nt.cores_per_socket
    return [("Cores", f"{first}-{first + nt.cores_per_socket - 1}")]


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


# --- the extension point: what slurm.conf is made of, in order ------------------------------------

PARAMETER_GROUPS: tuple[tuple[str, ParameterGroup], ...] = (
    ("Controller, daemons and paths", controller_parameters),
    ("Resources: cgroups, cores, memory and GPUs", resource_parameters),
    ("Network topology", topology_parameters),
    ("Multi-node NVLink: IMEX channels for jobs (imex/ holds the IMEX service's files)",
     imex_parameters),
    ("Scheduling", scheduling_parameters),
    ("Timeouts", timeout_parameters),
    ("Accounting (slurmdbd)", slurm_policy.accounting_parameters),
    ("Priority and fair share", slurm_policy.priority_parameters),
    ("Preemption between QOS", slurm_policy.preemption_parameters),
    ("Node health check", slurm_policy.health_parameters),
)
NODE_KEYS: tuple[NodeKeys, ...] = (hardware_keys,)
PARTITION_KEYS: tuple[PartitionKeys, ...] = (partition_keys, slurm_policy.partition_policy_keys)
