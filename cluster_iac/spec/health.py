"""Node health: the generated check slurmd runs, and what Slurm does with a node it drained."""

# Annotations as written, not strings: see cluster_iac/spec/__init__.py.

from typing import Literal

from cluster_iac.spec.base import SpecModel
from cluster_iac.spec.scheduling import Duration, ProgramPath


class HealthCheck(SpecModel):
    """The health-check program slurmd runs on every compute node (HealthCheckProgram).

    It checks what the plan knows of the node's type: GPU count and model and uncorrected ECC
    errors (nvidia-smi), the compute NICs' state and rate (ibstat), the Lustre mount and the
    memory. On a fault it drains the node (``scontrol update State=DRAIN Reason=...``, the
    reason naming the fault) and never sets it DOWN; it leaves alone a node already drained.
    """

    enabled: bool = True
    """Write the program and its slurm.conf keys."""
    program: ProgramPath = "/etc/slurm/healthcheck.sh"
    """Where the program is installed on the compute nodes (slurm/healthcheck/<node type>.sh
    goes there on the nodes of that type)."""
    interval: Duration = "5m"
    """HealthCheckInterval: how often slurmd runs it (Slurm counts seconds; slurmd also runs
    it once at start, before the node registers, and kills it after 60 s)."""
    node_states: list[Literal["any", "idle", "mixed", "alloc"]] = ["any"]
    """HealthCheckNodeState: the node states it runs in."""
    cycle: bool = False
    """HealthCheckNodeState CYCLE: spread the runs over the interval instead of running on
    every node at once (for large clusters)."""
    epilog: bool = True
    """Also run it as the Epilog, after every job, so a GPU a job broke is drained before the
    next job lands on it (the seed guide's intent)."""
    tool_timeout: Duration = "15s"
    """How long a device tool (nvidia-smi, ibstat) may take: a GPU that fell off the bus can
    hang nvidia-smi, and slurmd kills the whole program after 60 s without a reason."""
