"""slurm/healthcheck/<node type>.sh: the health-check program of each compute node type.

One program per node type, because each checks its type's GPU count and model, compute NIC
ports and memory; slurm.conf names one HealthCheckProgram path, so the program of a type is
installed at that path on the nodes of that type. POSIX sh, every spec string a quoted word
(formats/shell.py shell_word); tests/real runs it under a real slurmd and through shellcheck.
"""

from __future__ import annotations

from cluster_iac.emit.base import render_template
from cluster_iac.formats.shell import shell_word
from cluster_iac.plan import Plan, imex
from cluster_iac.plan.durations import human
from cluster_iac.plan.scheduling import HealthPlan, NodeHealth


def render(plan: Plan) -> dict[str, str]:
    health = plan.scheduling.health
    if health is None:
        return {}
    return {f"slurm/healthcheck/{node.node_type}.sh": program(plan, health, node)
            for node in health.nodes}


def program(plan: Plan, health: HealthPlan, node: NodeHealth) -> str:
    return render_template(
        "slurm/healthcheck.sh.j2", cluster=plan.cluster.name, node_type=node.node_type,
        program=health.program, interval=human(health.interval_s), epilog=health.epilog,
        tool_timeout=health.tool_timeout_s, gpu_count=node.gpu_count,
        gpu_name_word=shell_word(node.gpu_name or ""), nic_ports=node.nic_ports,
        nic_link=node.nic_link, nic_link_word=shell_word(node.nic_link or ""),
        nic_rate=node.nic_rate_gbps, lustre_mount=node.lustre_mount,
        lustre_mount_word=shell_word(node.lustre_mount or ""), memory_mib=node.memory_mib,
        memory_kib=node.memory_mib * 1024, imex=node.imex, imex_service=imex.SERVICE,
        imex_major=imex.CHANNEL_MAJOR, imex_nodes_file=imex.NODES_FILE,
        mig_word=shell_word(" ".join(node.mig)), mig_count=len(node.mig))
