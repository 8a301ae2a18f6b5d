"""Run real slurmctld/slurmd of several Slurm releases on a rendered slurm directory, in a sandbox.

Releases: Debian 12's own Slurm 22.05 on the machine, and the newer releases in the Debian roots
that .ci/install-deps builds under ``ROOTS/<suite>`` (trixie: 24.11, sid: 26.05), run there by
chroot. How this was learned is in ../shared/reference/slurm-harness.md.

The rendered files are copied into a private directory and only what the sandbox needs is
rewritten, each rewrite with its reason (``_controller_values`` and ``_slurmd_values``); every
NodeName, PartitionName, Gres and topology line is kept as emitted, so the daemons judge our files.
slurmctld reads our slurm.conf with host, ports, user, paths and auth changed; slurmd reads a copy
that also keeps it out of the host's cgroups. Daemons run under ``unshare -m`` with a private
/etc/hosts (each node name resolves to a loopback address of its own, see ``hosts_text``:
slurmctld 22.05 waits ~10 s per unresolvable name)
and, for slurmd, a private /dev holding stand-in GPU character devices. Every ``error:``/``fatal:``
log line fails a test unless ``SANDBOX_NOISE`` explains it by the sandbox.
"""

from __future__ import annotations

import ctypes
import os
import pwd
import random
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

from cluster_iac.base.hostlist import expand

NO_REAL_ENV = "CLUSTER_IAC_NO_REAL"
# Where .ci/install-deps builds the Debian roots of the newer releases, and which suites.
ROOTS = Path(os.environ.get("CLUSTER_IAC_ROOTS", "/var/cache/cluster-iac/roots"))
SUITES = ("trixie", "sid")
READY = ".cluster-iac-ready"  # written by .ci/install-deps when a root is complete
CONF_FILES = ("slurm.conf", "gres.conf", "cgroup.conf", "topology.conf", "topology.yaml")
# The host's /dev entries a daemon needs inside its private /dev.
BASE_DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
# Log lines the sandbox causes, each with its reason; nothing about our files.
SANDBOX_NOISE = (
    # PMIx mpi plugin without libpmix-dev (Debian 12's host has it; the minimal roots do not)
    re.compile(r"pmix", re.I),
    # a fresh state directory: nothing to recover on the first start
    re.compile(r"Could not open (node|job) state file|Could not open trigger state file|"
               r"Could not open reservation state file|"
               r"No job state file .* to recover|NOTE: Trying backup state save file"),
    # the test machine is smaller than the node it stands in for
    re.compile(r"(Low RealMemory|Low TmpDisk)"),
    re.compile(r"_slurm_rpc_node_registration node=.*: Invalid argument"),
    # slurmd reads a copy that differs from slurmctld's by the slurmd rewrites below
    re.compile(r"appears to have a different slurm\.conf than the slurmctld"),
    # slurmctld times 1000 gettimeofday() calls at start and logs this above 200 us: a busy
    # 2-core test VM (several suites at once) crosses it; it reads no configuration
    re.compile(r"High latency for 1000 calls to gettimeofday\(\)"),
)
# Only when the harness replaced slurmdbd accounting: multifactor weights need SlurmDBD.
NO_DBD_NOISE = re.compile(r"can only be used with SlurmDBD")
WAIT_S = 30.0
# The health check's keys: the matrix drops them, the policy harness keeps them.
HEALTH_KEYS = ("HealthCheckProgram", "HealthCheckInterval", "HealthCheckNodeState", "Epilog")
# Keys the local run needs even when our slurm.conf leaves them to Slurm's default.
ADDED = ("CredType", "MailProg", "SlurmdUser", "CommunicationParameters")


class HarnessError(RuntimeError):
    """The sandbox could not start a daemon (with the daemon's log)."""


# --- the releases -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Runtime:
    """One Slurm release: the machine's own (root None) or one in a Debian root (by chroot)."""

    version: tuple[int, int]
    root: Path | None = None

    @property
    def name(self) -> str:
        return f"{self.version[0]}.{self.version[1]:02d}"

    def tool(self, name: str) -> str:
        """A Slurm program's path as the sandboxed command sees it."""
        return name if self.root is not None else _tool(name)

    def plugin_exists(self, plugin: str) -> bool:
        """'task/cgroup' -> whether the release ships task_cgroup.so."""
        base = (self.root or Path("/")) / "usr/lib/x86_64-linux-gnu/slurm-wlm"
        return (base / (plugin.replace("/", "_") + ".so")).exists()


def host_runtime() -> Runtime | None:
    """The machine's own Slurm, from `slurmctld -V` ('slurm-wlm 22.05.8'), or None."""
    if missing_tools():
        return None
    out = subprocess.run([_tool("slurmctld"), "-V"], capture_output=True, text=True,
                         check=True).stdout
    return Runtime(_parse_version(out))


def root_runtimes() -> tuple[list[Runtime], list[str]]:
    """The releases in the Debian roots, and the suites whose root is missing or unusable."""
    found, missing = [], []
    for suite in SUITES:
        root = ROOTS / suite
        if not (root / READY).exists() or os.geteuid() != 0:
            missing.append(f"{suite} ({root}" + (")" if os.geteuid() == 0 else ", needs root)"))
            continue
        out = subprocess.run(["chroot", str(root), "slurmctld", "-V"], capture_output=True,
                             text=True, check=True).stdout
        found.append(Runtime(_parse_version(out), root))
    return found, missing


def _parse_version(text: str) -> tuple[int, int]:
    match = re.search(r"(\d+)\.(\d+)", text)
    if match is None:
        raise HarnessError(f"cannot read the Slurm version from {text!r}")
    return int(match.group(1)), int(match.group(2))


def installed_version() -> tuple[int, int]:
    """The machine's own Slurm's (major, minor)."""
    runtime = host_runtime()
    if runtime is None:
        raise HarnessError("Slurm is not installed")
    return runtime.version


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


_PORTS = random.Random()  # seeded from the OS: parallel runs draw different ports
_HANDED_OUT: set[int] = set()  # this process's ports: never handed out twice


def free_port() -> int:
    """A port nothing is bound to, drawn below the kernel's ephemeral range. A port the
    kernel handed out for bind(0) went back to that range as soon as it was returned, where
    the next bind(0) or outgoing connection of any process (another suite running at the
    same time) could take it before the daemon bound it, or while a daemon that is not
    running (slurmd) left it free: slurmctld's agents and slurmdbd then talked to another
    run's daemon, which reset the connection ('Connection reset by peer'). Ports below the
    range are never handed out by the kernel.

    Under pytest-xdist each worker draws from a slice of its own (``worker_ports``): a port
    is free when drawn but bound only later (a SlurmdPort, by the slurmd a test starts
    seconds after, on a node's own loopback address), so two workers drawing from one range
    could both hand out a port before either bound it, and the second slurmctld or slurmd
    then failed to bind, or its node messages reached the other worker's slurmd. A port is
    never handed out twice in one process either (SlurmctldPort and SlurmdPort of one
    cluster, drawn before either daemon binds)."""
    low, high = worker_ports()
    for _ in range(200):
        port = _PORTS.randrange(low, high)
        if port in _HANDED_OUT:
            continue
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
        _HANDED_OUT.add(port)
        return port
    raise HarnessError(f"no free port in {low}-{high - 1}")


def worker_ports() -> tuple[int, int]:
    """This process's port range [low, high): the 20,000 ports below the ephemeral range,
    split evenly between the pytest-xdist workers (PYTEST_XDIST_WORKER 'gw3' of
    PYTEST_XDIST_WORKER_COUNT); the whole range outside xdist."""
    top = _ephemeral_low()
    bottom = max(1024, top - 20_000)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    if not worker.startswith("gw") or not worker[2:].isdigit() or count < 2:
        return bottom, top
    index = int(worker[2:]) % count
    size = (top - bottom) // count
    return bottom + index * size, bottom + (index + 1) * size


def _ephemeral_low() -> int:
    """The first port of the kernel's ephemeral range (ip_local_port_range; 32768 by
    default)."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


# --- the private configuration ------------------------------------------------------------


@dataclass
class SlurmConf:
    """A private copy of a rendered slurm directory with the harness's rewrites: ``directory``
    for slurmctld and the clients, ``slurmd_directory`` for slurmd."""

    directory: Path
    slurmd_directory: Path
    node_names: list[str]
    overrides: list[str] = field(default_factory=list)

    @property
    def path(self) -> Path:
        return self.directory / "slurm.conf"

    @property
    def slurmd_path(self) -> Path:
        return self.slurmd_directory / "slurm.conf"


def prepare(rendered: Path, work: Path, runtime: Runtime) -> SlurmConf:
    """Copy the rendered slurm files into work/etc (slurmctld) and work/etc-slurmd (slurmd),
    rewriting only what the sandbox needs; work/overrides.txt lists each rewrite and why."""
    etc, etc_slurmd = work / "etc", work / "etc-slurmd"
    for directory in (etc, etc_slurmd):
        directory.mkdir(parents=True)
        for name in CONF_FILES:
            if (rendered / name).exists():
                shutil.copy(rendered / name, directory / name)
    for sub in ("state", "spool", "log", "run"):
        (work / sub).mkdir()
    text = (rendered / "slurm.conf").read_text()
    controller = _controller_values(work, text)
    lines, overrides = _rewrite(text.splitlines(), controller)
    if "AccountingStorageType" in controller:
        lines, dropped = _drop_allow_qos(lines)
        overrides += dropped
    (etc / "slurm.conf").write_text("\n".join(lines) + "\n")
    slurmd_lines, slurmd_overrides = _rewrite(lines, _slurmd_values(lines, runtime))
    (etc_slurmd / "slurm.conf").write_text("\n".join(slurmd_lines) + "\n")
    overrides += [f"slurmd only: {o}" for o in slurmd_overrides]
    overrides += _cgroup_rewrite(etc_slurmd / "cgroup.conf", runtime)
    (work / "overrides.txt").write_text("".join(f"{o}\n" for o in overrides))
    nodes = [host for line in lines if line.startswith("NodeName=")
             for host in expand(line.split()[0].split("=", 1)[1])]
    return SlurmConf(etc, etc_slurmd, nodes, overrides)


Values = dict[str, tuple[str | None, str]]


def _controller_values(work: Path, text: str) -> Values:
    """Key -> (the value for the local run, or None to drop the line; why the sandbox needs it)."""
    me = pwd.getpwuid(os.geteuid()).pw_name
    values: Values = {
        "SlurmctldHost": (f"{socket.gethostname().split('.')[0]}(127.0.0.1)",
                          "our controllers are not this machine"),
        "SlurmUser": (me, "no 'slurm' account here: the daemons run as the test's user"),
        "SlurmctldPort": (str(free_port()), "a free port: parallel runs and a host Slurm"),
        "SlurmdPort": (str(free_port()), "a free port: parallel runs and a host Slurm"),
        "StateSaveLocation": (str(work / "state"), "files in the test's temp dir"),
        "SlurmdSpoolDir": (str(work / "spool" / "%n"), "files in the test's temp dir"),
        "SlurmctldPidFile": (str(work / "run" / "slurmctld.pid"), "files in the test's temp dir"),
        "SlurmdPidFile": (str(work / "run" / "slurmd-%n.pid"), "files in the test's temp dir"),
        "SlurmctldLogFile": (str(work / "log" / "slurmctld.log"), "files in the test's temp dir"),
        "SlurmdLogFile": (str(work / "log" / "slurmd-%n.log"), "files in the test's temp dir"),
        "AuthType": ("auth/none", "no munged key here (auth/none still ships in 22.05-26.05)"),
        "CredType": ("cred/none", "goes with auth/none"),
        "MailProg": ("/bin/true", "the sandbox has no mail program (Slurm logs an error)"),
        "CommunicationParameters": ("NoInAddrAny", "each slurmd listens on its node's own "
                                    "loopback address only (hosts_text)"),
    }
    if os.geteuid() != 0:
        values["SlurmdUser"] = (me, "not root: slurmd runs as the test's user")
    why = ("the health check reads GPUs, HCAs and mounts this machine lacks: "
           "test_health_real.py runs it under slurmd with stand-in tools")
    values.update({key: (None, why) for key in HEALTH_KEYS})
    if "AccountingStorageType=accounting_storage/slurmdbd" in text:
        why = "no slurmdbd in this sandbox"
        values.update({
            "AccountingStorageType": ("accounting_storage/none", why),
            "AccountingStorageHost": (None, why),
            "AccountingStoragePort": (None, why),
            # fatal without slurmdbd
            "AccountingStorageTRES": (None, why + ": gres/gpu TRES is fatal without it"),
            "AccountingStorageEnforce": (None, why + ": Enforce logs an error without it"),
            "JobAcctGatherType": ("jobacct_gather/none", why + ": gathering without storage "
                                  "logs an error the real cluster does not have"),
        })
    return values


def _drop_allow_qos(lines: list[str]) -> tuple[list[str], list[str]]:
    """Without slurmdbd there are no QOS, and 26.05 refuses to start on a partition whose
    AllowQos names one ('Partition ... has an invalid AllowQOS'; 22.05 and 24.11 log it and
    ignore it). tests/real/test_slurm_policy_real.py starts slurmctld with them, on slurmdbd."""
    out, overrides = [], []
    for line in lines:
        if line.startswith("PartitionName=") and " AllowQos=" in line:
            new = re.sub(r" AllowQos=\S+", "", line)
            overrides.append(f"{line} -> {new} (no slurmdbd in this sandbox: no QOS exist, "
                             "and 26.05 is fatal on AllowQos naming none)")
            line = new
        out.append(line)
    return out, overrides


def _slurmd_values(lines: list[str], runtime: Runtime) -> Values:
    """slurmd's copy also stays out of the host's cgroups (the harness doc). The plugins it
    replaces must exist in the release, so that the rewrite hides no misspelt name."""
    why = "keep slurmd out of the host's cgroups"
    for line in lines:
        key, _, value = line.partition("=")
        if key in ("ProctrackType", "TaskPlugin"):
            for plugin in value.split(","):
                if not runtime.plugin_exists(plugin):
                    raise HarnessError(f"{key}={value}: Slurm {runtime.name} has no {plugin}")
    return {"ProctrackType": ("proctrack/pgid", why), "TaskPlugin": ("task/none", why)}


def _cgroup_rewrite(path: Path, runtime: Runtime) -> list[str]:
    """slurmd 24.05+ initialises its cgroup plugin even for -G, and a chroot has no cgroup file
    system: CgroupPlugin=disabled (24.05+) in slurmd's copy."""
    if runtime.root is None or not path.exists():
        return []
    text = path.read_text()
    new = re.sub(r"(?m)^CgroupPlugin=.*$", "CgroupPlugin=disabled", text)
    if new == text:
        new = text + "CgroupPlugin=disabled\n"
    path.write_text(new)
    return ["slurmd only: cgroup.conf CgroupPlugin=disabled (the chroot has no cgroup "
            "file system)"]


def _rewrite(lines: list[str], values: Values) -> tuple[list[str], list[str]]:
    """Substitute the keys in values (first SlurmctldHost only); keep every other line."""
    out: list[str] = []
    overrides: list[str] = []
    seen: set[str] = set()
    for line in lines:
        key = line.partition("=")[0].strip()
        if key not in values or line.lstrip().startswith("#"):
            out.append(line)
            continue
        new, why = values[key]
        if new is None or key in seen:
            overrides.append(f"dropped {line} ({why})")
        elif f"{key}={new}" != line:
            out.append(f"{key}={new}")
            overrides.append(f"{line} -> {key}={new} ({why})")
        else:
            out.append(line)
        seen.add(key)
    for key, (new, why) in values.items():
        if key not in seen and new is not None and key in ADDED:
            out.insert(_first_node_line(out), f"{key}={new}")
            overrides.append(f"added {key}={new} ({why})")
    return out, overrides


def under_node_name(runtime: Runtime, node: str, command: list[str]) -> list[str]:
    """``command`` run under ``node`` as its host name, where the test runs as root: slurmd
    binds the address of the host name it runs under, not of -N's node (fleet_harness.py
    measured it: every slurmd bound 127.0.0.1, and two at once clashed on the port), so
    NoInAddrAny puts it on its node's own address (hosts_text) only in a UTS namespace of
    its own, which takes root. Not root: ``command`` as it is."""
    if os.geteuid() != 0:
        return command
    return [runtime.tool("unshare"), "-u", "sh", "-c", 'hostname "$0" && exec "$@"', node,
            *command]


def hosts_text(local: list[str], nodes: list[str]) -> str:
    """The sandbox's /etc/hosts: the controller's names at 127.0.0.1, each node at a
    loopback address of its own (127.0.1.1, 127.0.1.2, ...), which its slurmd binds alone
    (CommunicationParameters=NoInAddrAny). With every node at 127.0.0.1 and one SlurmdPort,
    a message slurmctld sent to a node that has no slurmd (pings, forwarded fan-out) reached
    whichever slurmd a test was running, which reset it or forwarded it on: 'slurm_receive_msgs
    ... Connection reset by peer', 'forward_thread to dgx-013 ... Connection refused' in
    slurmctld's log, when a ping came while a test's slurmd was up (more often under load)."""
    lines = ["127.0.0.1 " + " ".join(dict.fromkeys(local))]
    for n, name in enumerate(dict.fromkeys(nodes)):
        third, fourth = divmod(n, 254)
        lines.append(f"127.0.{1 + third}.{1 + fourth} {name}")
    return "\n".join(lines) + "\n"


def _first_node_line(lines: list[str]) -> int:
    """Global keys must come before the first NodeName line."""
    return next((i for i, line in enumerate(lines) if line.startswith("NodeName=")), len(lines))


# --- daemons in a sandbox --------------------------------------------------------------------


def _sandbox(work: Path, runtime: Runtime, command: list[str],
             gpus: int | None = None, caps: tuple[int, ...] = ()) -> list[str]:
    """The command in a private mount namespace: /etc/hosts from work/hosts and, for slurmd
    (gpus given), a private /dev where /dev/nvidia0..N-1 are the host's /dev/null bound over
    (gres.conf File= paths must be character devices; binding needs no mknod). A root's
    release runs by chroot, with the test's temp dir at the same path, a fresh /proc and PID
    namespace (every daemon ends with the namespace, even on a kill). ``caps``: MIG
    capability minors, made as /dev/nvidia-caps/nvidia-cap<N> the same way."""
    if runtime.root is not None:
        return _root_sandbox(work, runtime.root, command, gpus, caps)
    steps = [f"mount --bind {shlex.quote(str(work / 'hosts'))} /etc/hosts"]
    if gpus is not None:
        steps += _dev_steps(work, Path("/"), gpus, caps)
    if os.geteuid() != 0:
        # mount as root of a user namespace, then run the daemon as ourselves again: as root
        # there it would call setgroups(), which a user namespace denies
        command = [_tool("unshare"), f"--map-user={os.geteuid()}",
                   f"--map-group={os.getegid()}", *command]
    steps.append("exec " + shlex.join(command))
    user_ns = ["--map-root-user"] if os.geteuid() != 0 else []
    return [_tool("unshare"), "-m", *user_ns, "--propagation", "private", "sh", "-ec",
            " && ".join(steps)]


def _root_sandbox(work: Path, root: Path, command: list[str], gpus: int | None,
                  caps: tuple[int, ...] = ()) -> list[str]:
    if not work.is_relative_to("/tmp"):
        raise HarnessError(f"the chroot sandbox maps the test's temp dir under /tmp, not {work}")
    q = shlex.quote
    inside = root / str(work).lstrip("/")
    steps = [f"mount -t tmpfs sandbox-tmp {q(str(root / 'tmp'))}",
             f"mkdir -p {q(str(inside))}",
             f"mount --bind {q(str(work))} {q(str(inside))}",
             f"touch {q(str(root / 'etc/hosts'))}",  # a minbase root has none to mount over
             f"mount --bind {q(str(work / 'hosts'))} {q(str(root / 'etc/hosts'))}",
             f"mount -t proc proc {q(str(root / 'proc'))}"]
    steps += _dev_steps(work, root, gpus or 0, caps)
    steps.append("exec chroot " + q(str(root)) + " " + shlex.join(command))
    return [_tool("unshare"), "-m", "-p", "-f", "--kill-child", "--propagation", "private",
            "sh", "-ec", " && ".join(steps)]


def _dev_steps(work: Path, root: Path, gpus: int, caps: tuple[int, ...] = ()) -> list[str]:
    """A tmpfs /dev under root holding the base devices, /dev/nvidia0..gpus-1 and
    /dev/nvidia-caps/nvidia-cap<N> for each MIG capability minor in ``caps``."""
    q = shlex.quote
    host_dev = work / "host-dev"
    host_dev.mkdir(exist_ok=True)
    dev = root / "dev"
    steps = [f"mount --rbind /dev {q(str(host_dev))}",
             f"mount -t tmpfs -o mode=755 sandbox-dev {q(str(dev))}"]
    devices = {name: name for name in BASE_DEVICES}
    devices.update({f"nvidia{i}": "null" for i in range(gpus)})
    if caps:
        steps.append(f"mkdir {q(str(dev / 'nvidia-caps'))}")
        devices.update({f"nvidia-caps/nvidia-cap{n}": "null" for n in caps})
    for name, source in devices.items():
        steps += [f"touch {q(str(dev / name))}",
                  f"mount --bind {q(str(host_dev / source))} {q(str(dev / name))}"]
    return steps


@dataclass
class SlurmCluster:
    """A running slurmctld on a private configuration; scontrol talks to it."""

    conf: SlurmConf
    work: Path
    runtime: Runtime
    label: str = ""  # the test matrix cell it stands for
    controller: subprocess.Popen[bytes] | None = None
    daemons: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, "SLURM_CONF": str(self.conf.path)}

    def start(self) -> None:
        local = ["localhost", socket.gethostname().split(".")[0]]
        (self.work / "hosts").write_text(hosts_text(local, self.conf.node_names))
        command = [self.runtime.tool("slurmctld"), "-D", "-f", str(self.conf.path)]
        self.controller = self._spawn(_sandbox(self.work, self.runtime, command),
                                      "slurmctld-stdout.log")
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
        """A daemon in its own process group (so _stop reaches its children too), killed
        when the test process dies however it dies (then a root's PID namespace ends too)."""
        with open(self.work / "log" / stdout_name, "wb") as out:
            return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True,
                                    env=env or self.env, preexec_fn=_die_with_parent)

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
        argv = [self.runtime.tool(tool), *args]
        if self.runtime.root is not None:  # the release's own client, by chroot
            argv = _sandbox(self.work, self.runtime, ["env", f"SLURM_CONF={self.conf.path}",
                                                      *argv])
        return subprocess.run(argv, capture_output=True, text=True, env=self.env,
                              timeout=WAIT_S)

    def topology(self, key: str = "SwitchName",
                 name: str | None = None) -> dict[str, dict[str, str]]:
        """`scontrol show topology [NAME]`: switch (or block, key='BlockName') name -> its
        fields; empty without a topology plugin. NAME: one topology of topology.yaml."""
        result = self._client("scontrol", "show", "topology", *([name] if name else []))
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
                 conf_dir: Path | None = None, caps: tuple[int, ...] = ()) -> dict[str, str]:
        """Start `slurmd -D -N node` (CPU topology faked with HWLOC_SYNTHETIC, /dev/nvidia*
        stand-ins as character devices), wait until it has registered, stop it, return the
        node's record. conf_dir: another config directory (a changed gres.conf)."""
        conf = (conf_dir or self.conf.slurmd_directory) / "slurm.conf"
        (self.work / "spool" / node).mkdir(exist_ok=True)  # SlurmdSpoolDir=.../%n
        command = under_node_name(self.runtime, node, [
            self.runtime.tool("slurmd"), "-D", "-f", str(conf), "-N", node])
        argv = _sandbox(self.work, self.runtime, command, gpus, caps)
        env = {**self.env, "HWLOC_SYNTHETIC": f"pack:{sockets} core:{cores} pu:{threads}"}
        proc = self._spawn(argv, f"slurmd-{node}-stdout.log", env)
        self.daemons.append(proc)
        try:
            return self._wait_registered(node, proc)
        finally:
            _stop(proc)
            self.daemons.remove(proc)

    def gres_parse(self, node: str, sockets: int, cores: int, threads: int,
                   gpus: int, caps: tuple[int, ...] = ()) -> list[dict[str, str]]:
        """`slurmd -G -N node`: slurmd parses gres.conf for the node (File= devices and Cores=
        against the faked CPU topology) and prints one record per File= line, then exits.
        ``caps``: the MIG capability minors its MultipleFiles= lines name."""
        (self.work / "spool" / node).mkdir(exist_ok=True)
        command = [self.runtime.tool("slurmd"), "-G", "-f", str(self.conf.slurmd_path), "-N",
                   node]
        env = {**self.env, "HWLOC_SYNTHETIC": f"pack:{sockets} core:{cores} pu:{threads}"}
        result = subprocess.run(_sandbox(self.work, self.runtime, command, gpus, caps),
                                capture_output=True,
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


def _die_with_parent() -> None:
    """prctl(PR_SET_PDEATHSIG, SIGKILL): the kernel kills the child when its parent exits."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL, 0, 0, 0)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the daemon's process group, SIGKILL after WAIT_S. An orderly slurmctld
    shutdown saves its state and waits for its agents (4 s on an idle machine here, with a
    slurmdbd push in flight); a SIGKILL before it ends cuts its connections, and the peer
    logs 'Connection reset by peer'."""
    if proc.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, WAIT_S), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def running(rendered: Path, work: Path, runtime: Runtime) -> Iterator[SlurmCluster]:
    """Generator for a fixture: a started cluster, stopped afterwards whatever happens."""
    cluster = SlurmCluster(prepare(rendered, work, runtime), work, runtime)
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
