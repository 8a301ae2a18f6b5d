"""Run real slurmctld/slurmd (Debian's 22.05) on a rendered slurm directory, in a sandbox.

How this was learned is in ../shared/reference/slurm-harness.md. The rendered files are copied
into a private directory and only what a local run needs is rewritten (``_local_values``
says which, and why);
every NodeName, PartitionName, Gres and topology line is kept as emitted, so the daemons judge
our files. Daemons run under ``unshare -m`` with a private /etc/hosts (node names resolve to
127.0.0.1: slurmctld 22.05 waits ~10 s per unresolvable name) and, for slurmd, a private /dev
holding stand-in GPU character devices (gres.conf File= paths must be character devices).
"""

from __future__ import annotations

import os
import pwd
import re
import shlex
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from cluster_iac.hostlist import expand

NO_REAL_ENV = "CLUSTER_IAC_NO_REAL"
CONF_FILES = ("slurm.conf", "gres.conf", "cgroup.conf", "topology.conf")
# topology/block arrived in Slurm 23.11 (slurm.schedmd.com/topology.html).
BLOCK_SINCE = (23, 11)
# The host's /dev entries a daemon needs inside its private /dev.
BASE_DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
# Log lines caused by the sandbox, not by our files (the harness doc lists them).
SANDBOX_NOISE = (
    re.compile(r"pmix", re.I),  # PMIx mpi plugin without libpmix-dev
    re.compile(r"Could not open (node|job) state file|Could not open trigger state file|"
               r"Could not open reservation state file|"
               r"No job state file .* to recover|NOTE: Trying backup state save file"),
    re.compile(r"(Low RealMemory|Low TmpDisk)"),  # the test machine is smaller than the node
    re.compile(r"_slurm_rpc_node_registration node=.*: Invalid argument"),  # the same
)
# Only when the harness replaced slurmdbd accounting: multifactor weights need SlurmDBD, and
# a partition's AllowQos names QOS that live in slurmdbd's database.
NO_DBD_NOISE = re.compile(r"can only be used with SlurmDBD|We have no QOS on the system")
WAIT_S = 30.0
# Keys the local run needs even when our slurm.conf leaves them to Slurm's default.
ADDED = ("CredType", "MailProg", "SlurmdUser")


class HarnessError(RuntimeError):
    """The sandbox could not start a daemon (with the daemon's log)."""


def installed_version() -> tuple[int, int]:
    """The installed Slurm's (major, minor), from `slurmctld -V` ('slurm-wlm 22.05.8')."""
    out = subprocess.run([_tool("slurmctld"), "-V"], capture_output=True, text=True,
                         check=True).stdout
    match = re.search(r"(\d+)\.(\d+)", out)
    if match is None:
        raise HarnessError(f"cannot read the Slurm version from {out!r}")
    return int(match.group(1)), int(match.group(2))


def missing_tools() -> list[str]:
    return [t for t in ("slurmctld", "slurmd", "scontrol", "unshare", "mount")
            if _which(t) is None]


def _which(name: str) -> str | None:
    return shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")


def _tool(name: str) -> str:
    path = _which(name)
    if path is None:
        raise HarnessError(f"{name} is not installed")
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --- the private configuration ------------------------------------------------------------


@dataclass
class SlurmConf:
    """A private copy of a rendered slurm directory with the harness's rewrites."""

    directory: Path
    node_names: list[str]
    overrides: list[str] = field(default_factory=list)

    @property
    def path(self) -> Path:
        return self.directory / "slurm.conf"


def prepare(rendered: Path, work: Path) -> SlurmConf:
    """Copy rendered/{slurm.conf,gres.conf,cgroup.conf,topology.conf} into work/etc and
    rewrite only host, ports, paths, user, auth, process tracking and accounting."""
    etc = work / "etc"
    etc.mkdir(parents=True)
    for name in CONF_FILES:
        if (rendered / name).exists():
            shutil.copy(rendered / name, etc / name)
    for sub in ("state", "spool", "log", "run"):
        (work / sub).mkdir()
    text = (rendered / "slurm.conf").read_text()
    values = _local_values(work)
    lines, overrides = _rewrite(text.splitlines(), values)
    (etc / "slurm.conf").write_text("\n".join(lines) + "\n")
    # what the harness changed, for whoever reads a failure's temp dir
    (work / "overrides.txt").write_text("".join(f"{o}\n" for o in overrides))
    nodes = [host for line in lines if line.startswith("NodeName=")
             for host in expand(line.split()[0].split("=", 1)[1])]
    return SlurmConf(etc, nodes, overrides)


def _local_values(work: Path) -> dict[str, str | None]:
    """Key -> the value for the local run (None: drop the line). Each is needed, and why:"""
    return {
        # our controllers are not this machine; the address saves a lookup outside the sandbox
        "SlurmctldHost": f"{socket.gethostname().split('.')[0]}(127.0.0.1)",
        # no 'slurm' account needed: the daemons run as whoever runs the tests
        "SlurmUser": pwd.getpwuid(os.geteuid()).pw_name,
        **({"SlurmdUser": pwd.getpwuid(os.geteuid()).pw_name} if os.geteuid() != 0 else {}),
        # free ports, so parallel runs and a host's own Slurm do not clash
        "SlurmctldPort": str(free_port()),
        "SlurmdPort": str(free_port()),
        # state, spool, pid and log files in the test's temp dir (%n: one per slurmd)
        "StateSaveLocation": str(work / "state"),
        "SlurmdSpoolDir": str(work / "spool" / "%n"),
        "SlurmctldPidFile": str(work / "run" / "slurmctld.pid"),
        "SlurmdPidFile": str(work / "run" / "slurmd-%n.pid"),
        "SlurmctldLogFile": str(work / "log" / "slurmctld.log"),
        "SlurmdLogFile": str(work / "log" / "slurmd-%n.log"),
        # no munged: 22.05 still ships auth/none and cred/none, and they work
        "AuthType": "auth/none",
        "CredType": "cred/none",
        # keep slurmd out of the host's cgroups (the harness doc)
        "ProctrackType": "proctrack/pgid",
        "TaskPlugin": "task/none",
        "JobAcctGatherType": "jobacct_gather/none",
        # no slurmdbd here: without it gres/gpu TRES is fatal and Enforce logs an error
        "AccountingStorageType": "accounting_storage/none",
        "AccountingStorageHost": None,
        "AccountingStoragePort": None,
        "AccountingStorageTRES": None,
        "AccountingStorageEnforce": None,
        "MailProg": "/bin/true",
        # the health check reads the node's GPUs, HCAs and mounts, which this machine lacks:
        # tests/real/test_slurm_policy_real.py runs it under slurmd with stand-in tools
        "HealthCheckProgram": None,
        "HealthCheckInterval": None,
        "HealthCheckNodeState": None,
        "Epilog": None,
    }


def _rewrite(lines: list[str], values: dict[str, str | None]) -> tuple[list[str], list[str]]:
    """Substitute the keys in values (first SlurmctldHost only); keep every other line."""
    out: list[str] = []
    overrides: list[str] = []
    seen: set[str] = set()
    block_ok = installed_version() >= BLOCK_SINCE
    for line in lines:
        key, _, value = line.partition("=")
        key = key.strip()
        if key == "TopologyPlugin" and value.strip() == "topology/block" and not block_ok:
            overrides.append(f"dropped {line} (the installed Slurm has no topology/block)")
            continue
        if key not in values or line.lstrip().startswith("#"):
            out.append(line)
            continue
        new = values[key]
        if new is None or key in seen:
            overrides.append(f"dropped {line}")
        elif new != value:
            out.append(f"{key}={new}")
            overrides.append(f"{line} -> {key}={new}")
        else:
            out.append(line)
        seen.add(key)
    for key, new in values.items():
        if key not in seen and new is not None and key in ADDED:
            out.insert(_first_node_line(out), f"{key}={new}")
            overrides.append(f"added {key}={new}")
    return out, overrides


def _first_node_line(lines: list[str]) -> int:
    """Global keys must come before the first NodeName line."""
    return next((i for i, line in enumerate(lines) if line.startswith("NodeName=")), len(lines))


# --- daemons in a sandbox --------------------------------------------------------------------


def _sandbox(work: Path, command: list[str], gpus: int | None = None) -> list[str]:
    """`unshare -m` with a private /etc/hosts and, for slurmd (gpus given), a private /dev
    where /dev/nvidia0..N-1 are the host's /dev/null bind-mounted: gres.conf File= paths must
    be character devices, and binding needs no mknod, so a user namespace will do when the
    tests do not run as root."""
    steps = [f"mount --bind {shlex.quote(str(work / 'hosts'))} /etc/hosts"]
    if gpus is not None:
        host_dev = work / "host-dev"
        host_dev.mkdir(exist_ok=True)
        steps += [f"mount --rbind /dev {shlex.quote(str(host_dev))}",
                  "mount -t tmpfs -o mode=755 sandbox-dev /dev"]
        devices = {name: name for name in BASE_DEVICES}
        devices.update({f"nvidia{i}": "null" for i in range(gpus)})
        for name, source in devices.items():
            steps += [f"touch /dev/{name}",
                      f"mount --bind {shlex.quote(str(host_dev / source))} /dev/{name}"]
    if os.geteuid() != 0:
        # mount as root of a user namespace, then run the daemon as ourselves again: as root
        # there it would call setgroups(), which a user namespace denies
        command = [_tool("unshare"), f"--map-user={os.geteuid()}",
                   f"--map-group={os.getegid()}", *command]
    steps.append("exec " + shlex.join(command))
    user_ns = ["--map-root-user"] if os.geteuid() != 0 else []
    return [_tool("unshare"), "-m", *user_ns, "--propagation", "private", "sh", "-ec",
            " && ".join(steps)]


@dataclass
class SlurmCluster:
    """A running slurmctld on a private configuration; scontrol talks to it."""

    conf: SlurmConf
    work: Path
    controller: subprocess.Popen[bytes] | None = None
    daemons: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, "SLURM_CONF": str(self.conf.path)}

    def start(self) -> None:
        names = ["localhost", socket.gethostname().split(".")[0], *self.conf.node_names]
        (self.work / "hosts").write_text("127.0.0.1 " + " ".join(dict.fromkeys(names)) + "\n")
        command = [_tool("slurmctld"), "-D", "-f", str(self.conf.path)]
        self.controller = self._spawn(_sandbox(self.work, command), "slurmctld-stdout.log")
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            if self.controller.poll() is not None:
                raise HarnessError(f"slurmctld exited {self.controller.returncode}:\n"
                                   + self.log("slurmctld"))
            ping = self.scontrol("ping", check=False)
            if " is UP" in ping:
                return
            time.sleep(0.1)
        raise HarnessError("slurmctld did not answer scontrol ping:\n" + self.log("slurmctld"))

    def _spawn(self, argv: list[str], stdout_name: str,
               env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        """A daemon in its own process group (so _stop reaches its children too)."""
        with open(self.work / "log" / stdout_name, "wb") as out:
            return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True,
                                    env=env or self.env)

    def stop(self) -> None:
        for proc in [*self.daemons, self.controller]:
            if proc is not None:
                _stop(proc)
        self.daemons.clear()
        self.controller = None

    def scontrol(self, *args: str, check: bool = True) -> str:
        return self.run("scontrol", *args, check=check)

    def run(self, tool: str, *args: str, check: bool = True) -> str:
        """A Slurm client (scontrol, sinfo) against this cluster; stderr output is an error."""
        result = self._client(tool, *args)
        if check and (result.returncode != 0 or result.stderr.strip()):
            raise HarnessError(f"{tool} {' '.join(args)}: {result.stderr.strip()}")
        return result.stdout

    def _client(self, tool: str, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([_tool(tool), *args], capture_output=True, text=True,
                              env=self.env, timeout=WAIT_S)

    def topology(self, key: str = "SwitchName") -> dict[str, dict[str, str]]:
        """`scontrol show topology`: switch (or block, key='BlockName') name -> its fields;
        empty without a topology plugin."""
        result = self._client("scontrol", "show", "topology")
        if "No topology information available" in result.stderr:
            return {}
        if result.returncode != 0 or result.stderr.strip():
            raise HarnessError(f"scontrol show topology: {result.stderr.strip()}")
        return topology_records(result.stdout, key)

    def records(self, kind: str) -> list[dict[str, str]]:
        """`scontrol -o show nodes|partitions` as one dict per line."""
        return [parse_record(line) for line in self.scontrol("-o", "show", kind).splitlines()
                if line.strip()]

    def node(self, name: str) -> dict[str, str]:
        return parse_record(self.scontrol("-o", "show", "node", name).strip())

    def log(self, daemon: str) -> str:
        """A daemon's log file ('slurmctld' or 'slurmd-<node>') and its captured stdout."""
        texts = []
        for name in (f"{daemon}.log", f"{daemon}-stdout.log"):
            path = self.work / "log" / name
            if path.exists():
                texts.append(path.read_text(errors="replace"))
        return "\n".join(texts)

    def register(self, node: str, sockets: int, cores: int, threads: int, gpus: int,
                 conf_dir: Path | None = None) -> dict[str, str]:
        """Start `slurmd -D -N node` (CPU topology faked with HWLOC_SYNTHETIC, /dev/nvidia*
        stand-ins as character devices), wait until it has registered, stop it, return the
        node's record. conf_dir: another config directory (a changed gres.conf)."""
        conf = (conf_dir or self.conf.directory) / "slurm.conf"
        (self.work / "spool" / node).mkdir(exist_ok=True)  # SlurmdSpoolDir=.../%n
        command = [_tool("slurmd"), "-D", "-f", str(conf), "-N", node]
        argv = _sandbox(self.work, command, gpus)
        env = {**self.env, "HWLOC_SYNTHETIC": f"pack:{sockets} core:{cores} pu:{threads}"}
        proc = self._spawn(argv, f"slurmd-{node}-stdout.log", env)
        self.daemons.append(proc)
        try:
            return self._wait_registered(node, proc)
        finally:
            _stop(proc)
            self.daemons.remove(proc)

    def gres_parse(self, node: str, sockets: int, cores: int, threads: int,
                   gpus: int) -> list[dict[str, str]]:
        """`slurmd -G -N node`: slurmd parses gres.conf for the node (File= devices and Cores=
        against the faked CPU topology) and prints one record per File= line, then exits."""
        (self.work / "spool" / node).mkdir(exist_ok=True)
        command = [_tool("slurmd"), "-G", "-f", str(self.conf.path), "-N", node]
        env = {**self.env, "HWLOC_SYNTHETIC": f"pack:{sockets} core:{cores} pu:{threads}"}
        result = subprocess.run(_sandbox(self.work, command, gpus), capture_output=True,
                                text=True, env=env, timeout=WAIT_S)
        output = result.stdout + result.stderr
        if result.returncode != 0 or _errors(output, SANDBOX_NOISE):
            raise HarnessError(f"slurmd -G -N {node} exited {result.returncode}:\n{output}")
        return [parse_record(line.split(" Gres ", 1)[1]) for line in output.splitlines()
                if " Gres " in line]

    def _wait_registered(self, node: str, proc: subprocess.Popen[bytes]) -> dict[str, str]:
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            record = self.node(node)
            if record.get("SlurmdStartTime", "None") != "None":
                return record
            if proc.poll() is not None:
                raise HarnessError(f"slurmd -N {node} exited {proc.returncode}:\n"
                                   + self.log(f"slurmd-{node}"))
            time.sleep(0.1)
        raise HarnessError(f"slurmd -N {node} did not register:\n" + self.log(f"slurmd-{node}"))

    def log_errors(self, daemon: str) -> list[str]:
        """error:/fatal: lines of a daemon's log that the sandbox does not explain."""
        noise = list(SANDBOX_NOISE)
        if any(o.startswith("AccountingStorageType=accounting_storage/slurmdbd ->")
               for o in self.conf.overrides):
            noise.append(NO_DBD_NOISE)
        return _errors(self.log(daemon), noise)


def _errors(text: str, noise: Iterable[re.Pattern[str]]) -> list[str]:
    """error:/fatal: lines that none of the noise patterns explains."""
    patterns = list(noise)
    return [line for line in text.splitlines() if re.search(r"\b(error|fatal):", line)
            and not any(p.search(line) for p in patterns)]


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the daemon's process group, SIGKILL after 5 s."""
    if proc.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def running(rendered: Path, work: Path) -> Iterator[SlurmCluster]:
    """Generator for a fixture: a started cluster, stopped afterwards whatever happens."""
    cluster = SlurmCluster(prepare(rendered, work), work)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


# --- scontrol output ---------------------------------------------------------------------------

_FIELD = re.compile(r"(?:^|\s)([A-Za-z][\w/:.]*)=")


def parse_record(line: str) -> dict[str, str]:
    """'NodeName=a CPUs=8 OS=Linux 6.1 #1 SMP Reason=x y' -> {key: value}; values may hold
    spaces, so a field ends where the next 'Key=' begins."""
    marks = list(_FIELD.finditer(line))
    record: dict[str, str] = {}
    for mark, following in zip(marks, [*marks[1:], None], strict=True):
        end = following.start() if following else len(line)
        record[mark.group(1)] = line[mark.end():end].strip()
    return record


def topology_records(text: str, key: str) -> dict[str, dict[str, str]]:
    """`scontrol show topology` -> name -> fields (Level, Nodes, Switches for a switch)."""
    records = {}
    for line in text.splitlines():
        record = parse_record(line.strip())
        if key in record:
            records[record[key]] = record
    return records
