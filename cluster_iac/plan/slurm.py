"""What the plan decides for Slurm: the targeted release, the topology, and the keys the tool owns.

``OWNED_KEYS`` is half of the emitter's extension point (emit/slurm.py has the other half): a
slurm.conf key that a spec field sets is listed here with that field, so that ``slurm.extra``
cannot set it behind the field's back (compile/plan_slurm.py refuses it and names the field).
A module that adds a parameter group for a spec section adds its keys here too.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from cluster_iac.base.errors import Diagnostic
from cluster_iac.catalog.slurm_releases import SlurmRelease

# The daemons' ports as slurm.conf(5) documents their defaults (SlurmctldPort 6817, SlurmdPort
# 6818; slurmdbd.conf(5) DbdPort 6819); slurm.conf keeps the first two at their defaults.
SLURMCTLD_PORT = 6817
SLURMD_PORT = 6818
SLURMDBD_PORT = 6819

# Key -> the spec field (or the part of the spec) that decides it. Case as Slurm documents it;
# compared case-insensitively, as Slurm's parser does.
OWNED_KEYS: dict[str, str] = {
    "ClusterName": "cluster.name",
    "SlurmctldHost": "node_groups (role: controller)",
    "ControlMachine": "node_groups (role: controller)",
    "BackupController": "node_groups (role: controller)",
    "NodeName": "node_groups and node_types",
    "NodeSet": "node_groups and node_types",
    "DownNodes": "node_groups and node_types",
    "FrontendName": "node_groups and node_types",
    "PartitionName": "slurm.partitions",
    "GresTypes": "node_types (GPUs) and gres.conf",
    "SelectType": "slurm.select_parameters (select/cons_tres is needed for GPUs)",
    "SelectTypeParameters": "slurm.select_parameters",
    "TopologyPlugin": "slurm.topology",
    "TopologyParam": "slurm.topology",
    "ProctrackType": "cgroup.conf (written with it: cores, memory and GPUs confined by cgroup)",
    "TaskPlugin": "cgroup.conf (written with it: cores, memory and GPUs confined by cgroup)",
    "JobAcctGatherType": "slurm.accounting",
    "AccountingStorageType": "slurm.accounting",
    "AccountingStorageHost": "slurm.accounting.host",
    "AccountingStoragePort": "slurm.accounting.port",
    "AccountingStorageTRES": "slurm.accounting (GPUs are tracked)",
    "AccountingStorageEnforce": "slurm.accounting.enforce",
    "AccountingStoragePass": "slurm.accounting.storage (no password goes in the spec or "
                             "slurm.conf)",
    "AccountingStorageUser": "slurm.accounting.storage",
    "PriorityType": "slurm.priority (multifactor; left out: the release's default)",
    "PriorityDecayHalfLife": "slurm.priority.decay_half_life",
    "PriorityCalcPeriod": "slurm.priority.calc_period",
    "PriorityMaxAge": "slurm.priority.max_age",
    "PriorityUsageResetPeriod": "slurm.priority.usage_reset",
    "PriorityFavorSmall": "slurm.priority.favor_small",
    "PriorityWeightAge": "slurm.priority.weights.age",
    "PriorityWeightAssoc": "slurm.priority.weights.assoc",
    "PriorityWeightFairshare": "slurm.priority.weights.fairshare",
    "PriorityWeightJobSize": "slurm.priority.weights.job_size",
    "PriorityWeightPartition": "slurm.priority.weights.partition",
    "PriorityWeightQOS": "slurm.priority.weights.qos",
    "PreemptType": "slurm.qos (preempt lists) and slurm.preemption",
    "PreemptMode": "slurm.preemption.mode",
    "PreemptExemptTime": "slurm.preemption.exempt_time",
    "HealthCheckProgram": "slurm.health_check.program",
    "HealthCheckInterval": "slurm.health_check.interval",
    "HealthCheckNodeState": "slurm.health_check.node_states",
    "Epilog": "slurm.health_check.epilog",
    "ReturnToService": "slurm.return_to_service",
    "SwitchType": "slurm.multi_node_nvlink (switch/nvidia_imex for rack-scale NVLink domains)",
    "SwitchParameters": "slurm.multi_node_nvlink (imex_channel_count)",
}

# topology.yaml's topology names (Slurm 25.05+), shown by `scontrol show topology`
BLOCK_TOPOLOGY = "nvlink"  # the NVLink racks as blocks, for the partitions made of them
DEFAULT_TOPOLOGY = "fabric"  # the compute fabric's tree (or flat), the cluster default

# slurm.conf time limits: minutes, minutes:seconds, hours:minutes:seconds, days-hours,
# days-hours:minutes, days-hours:minutes:seconds (slurm.conf(5) MaxTime), or the two words
# for no limit. Slurm's parser also takes lower case words.
SLURM_TIME = re.compile(
    r"INFINITE|UNLIMITED|\d+(?::\d+){0,2}|\d+-\d+(?::\d+){0,2}", re.IGNORECASE)
TIME_FORMATS = ("MM", "MM:SS", "HH:MM:SS", "D-HH", "D-HH:MM", "D-HH:MM:SS", "INFINITE",
                "UNLIMITED")


def real_memory_mib(slurm: Any, memory_gib: float) -> int:
    """RealMemory: installed memory minus the OS reserve (spec slurm.memory_reserve_percent,
    at least slurm.memory_reserve_min_gib)."""
    total = memory_gib * 1024
    reserve = max(slurm.memory_reserve_min_gib * 1024, total * slurm.memory_reserve_percent / 100)
    return math.floor(total - reserve)


def owned_key(key: str) -> tuple[str, str] | None:
    """(the key as documented, the spec field that sets it) when the tool owns ``key``."""
    lowered = key.lower()
    return next(((k, f) for k, f in OWNED_KEYS.items() if k.lower() == lowered), None)


def value_problem(value: str) -> str | None:
    """Why ``value`` cannot be one slurm.conf value, or None.

    slurm.conf is read line by line: a line break would start a new line, other control
    characters are not text. A value holding blanks must be double-quoted, and a quoted value
    cannot hold a double quote (Slurm's parser: "quoted value" or a run of non-blanks).
    """
    if re.search(r"[\x00-\x1f\x7f]", value):
        return "holds a line break or another control character"
    if '"' in value and re.search(r"\s", value):
        return "holds both a blank and a double quote, which slurm.conf cannot quote"
    if value.startswith('"') and not re.search(r"\s", value):
        return "starts with a double quote"
    return None


# Records without generated __eq__/__repr__ (eq=False, repr=False): see plan/model.py.
@dataclass(frozen=True, eq=False, repr=False)
class Block:
    """One topology/block block: a rack-scale NVLink domain's Slurm nodes."""

    name: str
    nodes: tuple[str, ...]


@dataclass(frozen=True, eq=False, repr=False)
class SlurmPlan:
    """The Slurm choices every Slurm emitter reads."""

    release: SlurmRelease
    # 'tree', 'block', 'per-partition' (topology.yaml: a block topology for the NVLink-rack
    # partitions, the tree or flat one for the rest) or 'none'
    topology: str
    blocks: tuple[Block, ...] = ()
    # the planning base block size (BlockSizes): the smallest block, which every block reaches
    block_size: int | None = None
    # partition -> the topology.yaml topology it uses (per-partition only)
    partition_topology: dict[str, str] = field(default_factory=dict)
    # slurm.extra after the checks: (key as written, value)
    extra: tuple[tuple[str, str], ...] = ()
    # warnings about slurm.extra (checks/slurm.py reports them)
    findings: tuple[Diagnostic, ...] = ()
