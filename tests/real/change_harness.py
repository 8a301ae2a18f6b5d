"""A running slurmctld and one slurmd whose rendered files can be replaced, and the planned
actions (cluster_iac/change/actions.py) run on them, for tests/real/test_change_actions_real.py.

The sandbox is slurm_harness's (same rewrites, each with its reason, in work/overrides.txt),
with two differences a sequence of changes needs:
- the rewrites are computed once and applied again to each new slurm.conf, except the ports:
  each port the rendered file names gets its own free port, so a rendered port change is a
  sandbox port change too;
- ``SlurmdParameters=config_overrides`` (the test machine is smaller than the node, and a node
  registered 'Low RealMemory' could not be resumed after the drain a plan runs).
One slurmd runs at a time (all nodes' slurmd would listen on the same SlurmdPort of this host):
``live`` names the node it stands for.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from cluster_iac.base.hostlist import expand
from cluster_iac.change.actions import Action
from tests.real import slurm_harness as harness

SLURM_FILES = ("slurm.conf", "gres.conf", "cgroup.conf", "topology.conf", "topology.yaml")
OVERRIDES = "SlurmdParameters=config_overrides"
GPUS = 8
RECONFIGURE_WAIT_S = 120.0  # scontrol reconfigure: see LiveSlurm.reconfigure


@dataclass
class LiveSlurm:
    """slurmctld and one slurmd of ``runtime`` on the rendered slurm files installed last."""

    work: Path
    runtime: harness.Runtime
    ports: dict[str, int] = field(default_factory=dict)  # rendered port -> sandbox port
    cluster: harness.SlurmCluster | None = None
    live: str | None = None  # the node the running slurmd stands for
    slurmd: subprocess.Popen[bytes] | None = None
    names: set[str] = field(default_factory=set)  # every node name seen: /etc/hosts

    def __post_init__(self) -> None:
        for sub in ("etc", "etc-slurmd", "etc-before", "state", "spool", "log", "run"):
            (self.work / sub).mkdir(parents=True, exist_ok=True)

    # --- files ----------------------------------------------------------------------------

    def install(self, files: dict[str, str]) -> None:
        """Write the rendered slurm/ files (with the sandbox rewrites) where the daemons read
        them; the previous ones stay in etc-before (for a reconfigure sent on the old port)."""
        etc, etc_slurmd = self.work / "etc", self.work / "etc-slurmd"
        shutil.rmtree(self.work / "etc-before")
        shutil.copytree(etc, self.work / "etc-before")
        for directory in (etc, etc_slurmd):
            for name in SLURM_FILES:
                (directory / name).unlink(missing_ok=True)
                if f"slurm/{name}" in files:
                    (directory / name).write_text(files[f"slurm/{name}"])
        text = files["slurm/slurm.conf"]
        values = harness._controller_values(self.work, text)
        for key in ("SlurmctldPort", "SlurmdPort"):
            rendered = _value(text, key)
            port = self.ports.setdefault(rendered, harness.free_port())
            values[key] = (str(port), f"rendered {rendered}: a free port of its own")
        lines, overrides = harness._rewrite(text.splitlines(), values)
        lines, dropped = harness._drop_allow_qos(lines)
        lines.insert(harness._first_node_line(lines), OVERRIDES)
        (etc / "slurm.conf").write_text("\n".join(lines) + "\n")
        slurmd_lines, slurmd_overrides = harness._rewrite(
            lines, harness._slurmd_values(lines, self.runtime))
        (etc_slurmd / "slurm.conf").write_text("\n".join(slurmd_lines) + "\n")
        cgroup = harness._cgroup_rewrite(etc_slurmd / "cgroup.conf", self.runtime)
        (self.work / "overrides.txt").write_text("".join(
            f"{o}\n" for o in [*overrides, *dropped, f"added {OVERRIDES} (the test machine "
                               "is smaller than the node)", *slurmd_overrides, *cgroup]))
        nodes = [h for line in lines if line.startswith("NodeName=")
                 for h in expand(line.split()[0].split("=", 1)[1])]
        self.names.update(nodes)
        conf = harness.SlurmConf(etc, etc_slurmd, sorted(self.names))
        if self.cluster is None:
            self.cluster = harness.SlurmCluster(conf, self.work, self.runtime)
        self.cluster.conf = conf
        self._hosts()

    def _hosts(self) -> None:
        names = ["localhost", socket.gethostname().split(".")[0], *sorted(self.names)]
        # rewritten in place: the running daemons' bind mount of this file sees it
        (self.work / "hosts").write_text("127.0.0.1 " + " ".join(dict.fromkeys(names)) + "\n")

    def port(self, key: str) -> int:
        """The sandbox port of the installed slurm.conf's SlurmctldPort or SlurmdPort."""
        return int(_value((self.work / "etc" / "slurm.conf").read_text(), key))

    # --- daemons --------------------------------------------------------------------------

    @property
    def ctl(self) -> harness.SlurmCluster:
        assert self.cluster is not None, "install() first"
        return self.cluster

    def start(self, node: str) -> None:
        self.ctl.start()
        self.start_slurmd(node)

    def stop(self) -> None:
        self.stop_slurmd()
        if self.cluster is not None:
            self.cluster.stop()

    def restart_slurmctld(self) -> None:
        if self.ctl.controller is not None:
            harness._stop(self.ctl.controller)
        self.ctl.start()

    def start_slurmd(self, node: str) -> dict[str, str]:
        """slurmd -D -N node, left running; the node's record once it has (re)registered."""
        before = self.ctl.node(node).get("SlurmdStartTime", "None")
        (self.work / "spool" / node).mkdir(exist_ok=True)
        command = [self.runtime.tool("slurmd"), "-D", "-f",
                   str(self.work / "etc-slurmd" / "slurm.conf"), "-N", node]
        argv = harness._sandbox(self.work, self.runtime, command, GPUS)
        env = {**self.ctl.env, "HWLOC_SYNTHETIC": self._hwloc(node)}
        self.slurmd = self.ctl._spawn(argv, f"slurmd-{node}-stdout.log", env)
        self.live = node
        deadline = time.monotonic() + harness.WAIT_S
        while time.monotonic() < deadline:
            record = self.ctl.node(node)
            if record.get("SlurmdStartTime", "None") not in ("None", before):
                return record
            if self.slurmd.poll() is not None:
                raise harness.HarnessError(f"slurmd -N {node} exited:\n"
                                           + self.ctl.log(f"slurmd-{node}"))
            time.sleep(0.2)
        raise harness.HarnessError(f"slurmd -N {node} did not register:\n"
                                   + self.ctl.log(f"slurmd-{node}"))

    def _hwloc(self, node: str) -> str:
        """HWLOC_SYNTHETIC from the node's installed line (sockets, cores, threads)."""
        record = self.ctl.node(node)
        return (f"pack:{record.get('Sockets', '2')} core:{record.get('CoresPerSocket', '64')} "
                f"pu:{record.get('ThreadsPerCore', '2')}")

    def stop_slurmd(self) -> None:
        if self.slurmd is not None:
            harness._stop(self.slurmd)
        self.slurmd, self.live = None, None

    def reconfigure(self, conf: Path | None = None) -> None:
        """scontrol reconfigure (through ``conf``, e.g. etc-before, when the installed file
        names a port slurmctld does not listen on yet); then wait until slurmctld answers
        again (from 23.11 it re-executes itself)."""
        env = {"SLURM_CONF": str(conf)} if conf else {}
        # scontrol waits while slurmctld re-reads (from 23.11 re-executes itself and reloads its
        # state): past 30 s on a 2-core machine running four test workers (seen twice on 24.11)
        result = self._scontrol(env, "reconfigure", timeout=RECONFIGURE_WAIT_S)
        if result.returncode != 0:
            raise harness.HarnessError(f"scontrol reconfigure: {result.stderr.strip()}")
        time.sleep(2.0)  # slurmd re-reads (or re-executes) after slurmctld has answered
        deadline = time.monotonic() + harness.WAIT_S
        while time.monotonic() < deadline:
            if " is UP" in self._scontrol(env, "ping").stdout:
                return
            time.sleep(0.2)
        raise harness.HarnessError("slurmctld did not answer after reconfigure:\n"
                                   + self.ctl.log("slurmctld"))

    def scontrol_with(self, conf: Path, *args: str) -> subprocess.CompletedProcess[str]:
        """scontrol reading ``conf`` instead of the installed slurm.conf."""
        return self._scontrol({"SLURM_CONF": str(conf)}, *args)

    def _scontrol(self, env: dict[str, str], *args: str,
                  timeout: float = harness.WAIT_S) -> subprocess.CompletedProcess[str]:
        conf = env.get("SLURM_CONF", str(self.ctl.conf.path))
        argv = [self.runtime.tool("scontrol"), *args]
        if self.runtime.root is not None:
            argv = harness._sandbox(self.work, self.runtime, ["env", f"SLURM_CONF={conf}",
                                                               *argv])
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                              env={**self.ctl.env, "SLURM_CONF": conf})

    def ping(self) -> bool:
        """Whether slurmctld answers on the installed slurm.conf's SlurmctldPort."""
        return " is UP" in self._scontrol({}, "ping").stdout

    # --- the plan ---------------------------------------------------------------------------

    def run(self, plan: list[Action]) -> None:
        """Run each action the way an operator would, on this sandbox's daemons."""
        for action in plan:
            hosts = expand(action.hosts) if action.hosts else []
            if action.kind in ("drain", "resume"):
                state = "DRAIN" if action.kind == "drain" else "RESUME"
                self.ctl.scontrol("update", f"nodename={action.hosts}", f"state={state}",
                                  *(["reason=cluster-iac-change"] if state == "DRAIN" else []))
            elif action.kind == "restart-slurmctld":
                self.restart_slurmctld()
            elif action.kind == "reconfigure":
                self.reconfigure()
            elif action.kind in ("restart-slurmd", "start-slurmd"):
                # one slurmd runs here (one SlurmdPort): a start of the nodes the change adds
                # names other nodes; the test starts one of them itself
                if self.live in hosts:
                    node = self.live
                    self.stop_slurmd()
                    self.start_slurmd(node)
            elif action.kind not in ("none", "new-jobs", *OTHER_SERVICES):
                raise AssertionError(f"this sandbox cannot run {action.kind}")


# Actions of services other than Slurm's (the file's hosts, not Slurm nodes): this sandbox has
# no fabric, Lustre, IMEX, monitoring, switches or boot server, and runs only Slurm's;
# tests/real/test_playbook_real.py checks that the playbook asks for each of them on the right
# hosts. A node added to the spec changes the DNS zones and the DHCP reservations, so the plan
# asks for reload-dns and reload-dhcp too.
OTHER_SERVICES = ("restart-opensm", "restart-lnet", "restart-imex", "restart-dcgm-exporter",
                  "restart-snmp-exporter", "reload-prometheus", "reload-frr", "reload-dns",
                  "reload-dhcp")


def _value(text: str, key: str) -> str:
    for line in text.splitlines():
        if line.startswith(f"{key}="):
            return line.split("=", 1)[1].strip()
    raise AssertionError(f"no {key} line")


def listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0
