"""imex/: NVIDIA IMEX's files for multi-node NVLink (GB200/GB300 NVL72; plan/imex.py).

- ``imex/config.cfg`` -> ``/etc/nvidia-imex/config.cfg`` on every node that runs IMEX: the
  daemon reads it once at start (a change needs ``systemctl restart nvidia-imex``). Each
  setting is written with the reason for its value.
- ``imex/<domain>/nodes_config.cfg`` -> ``/etc/nvidia-imex/nodes_config.cfg`` on each node of
  that NVLink domain: the addresses of the domain's nodes on the management network, one per
  line, the same file on all of them. Only addresses: the daemon reads each line as one.

Both are KEY=VALUE / one-address-per-line files written by formats.env_line (one line per value,
no spec string in them but addresses the plan assigned).
"""

from __future__ import annotations

from cluster_iac.emit.base import GENERATED_BY
from cluster_iac.formats.shell import env_line, shell_comment
from cluster_iac.plan import Plan
from cluster_iac.plan.imex import NODES_FILE, ImexPlan

SERVER_PORT = 50000  # NVIDIA's default; every daemon of a domain must use the same one
CMD_PORT = 50005  # NVIDIA's default command port, for nvidia-imex-ctl


def render(plan: Plan) -> dict[str, str]:
    if plan.imex is None:
        return {}
    files = {"imex/config.cfg": config(plan, plan.imex)}
    for domain in plan.imex.domains:
        files[f"imex/{domain.name}/nodes_config.cfg"] = "".join(
            f"{address}\n" for address in domain.addresses)
    return files


def settings(plan: Plan, imex: ImexPlan) -> list[tuple[str, object, str]]:
    """(key, value, reason) of every setting config.cfg writes, in file order."""
    return [
        ("IMEX_NODE_CONFIG_FILE", NODES_FILE,
         "this NVLink domain's peers; install imex/<domain>/nodes_config.cfg there"),
        ("BIND_INTERFACE_IP", "",
         f"empty: the daemon listens on this node's address as nodes_config.cfg lists it "
         f"(the {imex.network} network)"),
        ("SERVER_PORT", SERVER_PORT,
         "TCP port of the peers, the same on every node of a domain; open it between them"),
        ("IMEX_WAIT_FOR_QUORUM", "RECOVERY",
         "after an unclean stop, wait for the nodes that had imported memory to reconnect so "
         "their references are cleaned up before jobs start again"),
        ("IMEX_ENABLE_AUTH_ENCRYPTION", 0,
         f"peers talk on the cluster's own {imex.network} network; no certificates are planned"),
        ("IMEX_CMD_ENABLED", 1, "nvidia-imex-ctl can query the daemon (domain state)"),
        ("IMEX_CMD_BIND_INTERFACE_IP", "127.0.0.1", "the query port is for this node only"),
        ("IMEX_CMD_PORT", CMD_PORT, "NVIDIA's default query port"),
        ("DAEMONIZE", 1, "the nvidia-imex systemd unit starts it as a forking service"),
        ("LOG_LEVEL", 4, "INFO: peers joining and leaving are logged"),
        ("LOG_FILE_NAME", "/var/log/nvidia-imex.log", "NVIDIA's default log file"),
    ]


def config(plan: Plan, imex: ImexPlan) -> str:
    release = plan.slurm.release
    holder = ("each job" if release.imex_channel_per_job
              else "each job step that spans nodes")
    lines = [
        shell_comment(f"NVIDIA IMEX configuration of cluster {plan.cluster.name}: "
                      "/etc/nvidia-imex/config.cfg on the nodes of node type(s) "
                      + ", ".join(imex.node_types) + "."),
        shell_comment("Read once when nvidia-imex starts: restart the service after a change. "
                      f"Slurm {release.version} (switch/nvidia_imex) gives {holder} an IMEX "
                      "channel."),
        shell_comment(GENERATED_BY),
    ]
    for key, value, reason in settings(plan, imex):
        lines += ["", shell_comment(reason), env_line(key, value)]
    return "\n".join(lines) + "\n"
