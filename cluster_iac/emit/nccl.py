"""NCCL files per GPU node type: nccl.conf, the same as an env file, and the topology XML."""

from __future__ import annotations

from collections.abc import Sequence

from cluster_iac.emit.base import GENERATED_BY
from cluster_iac.emit.nccl_topo import topology_xml
from cluster_iac.formats.shell import env_line, shell_assignment, shell_comment
from cluster_iac.plan import Plan
from cluster_iac.plan.nccl import NcclSetting


def render(plan: Plan) -> dict[str, str]:
    files: dict[str, str] = {}
    for name, env in sorted(plan.nccl.items()):
        # nccl.conf carries no comments: NCCL before 2.26.2 would read '# ...' as a variable.
        # NCCL takes the rest of each line verbatim: env_line refuses a value that is not one
        # line without outer blanks.
        files[f"nccl/{name}.nccl.conf"] = "".join(f"{env_line(s.name, s.value)}\n"
                                                  for s in env.settings)
        files[f"nccl/{name}.env"] = env_file(name, env.settings)
        nt = plan.node_types[name]
        if nt.pcie is not None:
            files[f"nccl/{name}.topo.xml"] = topology_xml(nt)
    return files


def env_file(node_type: str, settings: Sequence[NcclSetting]) -> str:
    """The settings as shell assignments (quoted), each under its reason."""
    lines = [
        shell_comment(f"NCCL environment of node type {node_type}: the settings of "
                      f"{node_type}.nccl.conf, each with its reason."),
        shell_comment(GENERATED_BY),
        shell_comment(f"Load it in a job script with `set -a; . ./{node_type}.env; set +a`, "
                      "or as a systemd EnvironmentFile."),
    ]
    for s in settings:
        lines += ["", shell_comment(s.reason), shell_assignment(s.name, s.value)]
    return "\n".join(lines) + "\n"
