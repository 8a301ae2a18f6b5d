"""Run Debian's MariaDB, slurmdbd, slurmctld and a slurmd with its health check, in a sandbox.

What worked here (Debian 12: mariadb-server 10.11, slurmdbd 22.05.8):
- MariaDB: `mariadb-install-db` into a temp datadir (2-4 s), then `mariadbd --skip-networking`
  with its socket in the temp dir, reading the rendered ``mariadb-slurmdbd.cnf`` (Slurm's InnoDB
  settings; below them slurmdbd logs 'Database settings not recommended values').
- slurmdbd has no -f option: it reads slurmdbd.conf from slurm.conf's directory. Every daemon
  and client runs in a mount namespace where the private etc directory is bind-mounted over
  /etc/slurm, so slurmdbd.conf's ``Include /etc/slurm/slurmdbd.storage.conf`` and slurm.conf's
  ``HealthCheckProgram=/etc/slurm/healthcheck.sh`` resolve to the private copies unchanged.
- The MySQL client library in slurmdbd honours ``MYSQL_UNIX_PORT``: StorageHost=localhost (as
  rendered) reaches the temp socket.
- slurmd runs the health check with only SLURMD_NODENAME in its environment (no PATH, no
  SLURM_CONF): the program sets its own PATH, and scontrol finds /etc/slurm/slurm.conf.
- The sandbox puts stand-in nvidia-smi/ibstat/findmnt on that PATH by bind-mounting a directory
  over /usr/local/bin, and the node's memory by bind-mounting a meminfo file over /proc/meminfo.
- Slurm 24.11 (trixie's root, .ci/install-deps adds slurmdbd there): slurmdbd, slurmctld,
  sacctmgr and slurmd run by chroot, as tests/real/slurm_harness.py runs a root's release, with
  the temp dir at the same path inside, so the host's MariaDB socket is reachable; cgroup.conf
  says CgroupPlugin=disabled (the chroot has no cgroup file system).
Rewrites of the rendered files are only what a local run needs, each printed with its reason.
"""

from __future__ import annotations

import os
import pwd
import shlex
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tests.real import slurm_harness as harness

WAIT_S = 60.0
Mounts = Sequence[tuple[Path, str]]
TOOLS = ("mariadb-install-db", "mariadbd", "mariadb", "slurmdbd", "sacctmgr", "slurmctld",
         "slurmd", "scontrol", "unshare", "mount", "shellcheck")
# A Debian root's release also needs these inside the root (.ci/install-deps installs them).
ROOT_TOOLS = ("usr/sbin/slurmdbd", "usr/bin/sacctmgr")


def missing_tools() -> list[str]:
    return [t for t in TOOLS if harness._which(t) is None]


def host() -> str:
    return socket.gethostname().split(".")[0]


def user() -> str:
    return pwd.getpwuid(os.geteuid()).pw_name


# --- MariaDB -----------------------------------------------------------------------------------


@dataclass
class MariaDB:
    """A private MariaDB server on a socket in ``work``; nothing listens on the network."""

    work: Path
    proc: subprocess.Popen[bytes] | None = None

    @property
    def socket(self) -> Path:
        return self.work / "mysqld.sock"

    def start(self, cnf: Path) -> None:
        data, tmp = self.work / "data", self.work / "tmp"
        data.mkdir(parents=True)
        tmp.mkdir()
        # --tmpdir of its own: under pytest-xdist two bootstraps ran at once and one lost its
        # temporary tables in the shared /tmp ("Could not remove temporary table
        # '/tmp/#sql-temptable-...', error: 2", then "Installation of system tables failed")
        options = [f"--defaults-file={cnf}", f"--datadir={data}", f"--socket={self.socket}",
                   f"--pid-file={self.work / 'mysqld.pid'}", "--skip-networking",
                   f"--tmpdir={tmp}",
                   f"--user={user()}", f"--log-error={self.work / 'mysqld.err'}"]
        install = subprocess.run([harness._tool("mariadb-install-db"), *options,
                                  "--auth-root-authentication-method=socket",
                                  "--skip-test-db"], capture_output=True, text=True,
                                 timeout=WAIT_S)
        if install.returncode != 0:
            raise harness.HarnessError("mariadb-install-db failed:\n" + install.stdout
                                       + install.stderr)
        with open(self.work / "mysqld.out", "wb") as out:
            # killed with the test process however it ends (a SIGKILLed run left one behind)
            self.proc = subprocess.Popen([harness._tool("mariadbd"), *options], stdout=out,
                                         stderr=subprocess.STDOUT, start_new_session=True,
                                         preexec_fn=harness._die_with_parent)
        _wait(lambda: self.socket.exists() and self._ping(), self.proc, "mariadbd",
              self.work / "mysqld.err")

    def _ping(self) -> bool:
        return self._client("SELECT 1").returncode == 0

    def _client(self, sql: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([harness._tool("mariadb"), "--no-defaults", "-S", str(self.socket),
                               "-u", user(), "-N", "-B", "-e", sql],
                              capture_output=True, text=True, timeout=WAIT_S)

    def sql(self, statement: str) -> str:
        result = self._client(statement)
        if result.returncode != 0:
            raise harness.HarnessError(f"mariadb: {statement}: {result.stderr}")
        return result.stdout

    def stop(self) -> None:
        if self.proc is not None:
            harness._stop(self.proc)
            self.proc = None


# --- the private configuration ------------------------------------------------------------


@dataclass
class Sandbox:
    """The rendered slurm directory, copied to ``work/etc`` with the local run's rewrites."""

    work: Path
    node_names: list[str]
    runtime: harness.Runtime
    rewrites: list[str] = field(default_factory=list)

    @property
    def etc(self) -> Path:
        return self.work / "etc"

    def env(self) -> dict[str, str]:
        return {**os.environ, "SLURM_CONF": str(self.etc / "slurm.conf")}

    def tool(self, name: str) -> str:
        """A Slurm program as the sandboxed command sees it (the release's own)."""
        return self.runtime.tool(name)

    def run(self, argv: list[str], *, mounts: Mounts = (), env: dict[str, str] | None = None,
            timeout: float = WAIT_S) -> subprocess.CompletedProcess[str]:
        """A command in the sandbox's mount namespace (see ``command``)."""
        return subprocess.run(self.command(argv, mounts), capture_output=True, text=True,
                              env=env or self.env(), timeout=timeout)

    def command(self, argv: list[str], mounts: Mounts = (), gpus: int | None = None
                ) -> list[str]:
        """`unshare -m`: the private etc over /etc/slurm, a private /etc/hosts (every node
        name a loopback address of its own, slurm_harness.hosts_text: slurmctld 22.05 waits
        ~10 s on each name it cannot resolve), with
        ``gpus`` a private /dev holding /dev/nvidia0..gpus-1, then the (source, target) bind
        ``mounts``. A root's release runs by chroot, as slurm_harness runs it (the temp dir
        at the same path, a fresh /proc, a PID namespace that ends with the command)."""
        if self.runtime.root is not None:
            return self._root_command(self.runtime.root, argv, mounts, gpus)
        binds = [(self.etc, "/etc/slurm"), (self.work / "hosts", "/etc/hosts")]
        steps = [f"mount --bind {shlex.quote(str(src))} {shlex.quote(dst)}"
                 for src, dst in binds]
        steps += _private_dev(self.work / "host-dev", gpus) if gpus is not None else []
        steps += [f"mount --bind {shlex.quote(str(src))} {shlex.quote(dst)}"
                  for src, dst in mounts]
        steps.append("exec " + shlex.join(argv))
        return [harness._tool("unshare"), "-m", "--propagation", "private", "sh", "-ec",
                " && ".join(steps)]

    def _root_command(self, root: Path, argv: list[str], mounts: Mounts,
                      gpus: int | None) -> list[str]:
        q = shlex.quote
        inside = root / str(self.work).lstrip("/")
        steps = [f"mount -t tmpfs sandbox-tmp {q(str(root / 'tmp'))}",
                 f"mkdir -p {q(str(inside))}",
                 f"mount --bind {q(str(self.work))} {q(str(inside))}",
                 f"mkdir -p {q(str(root / 'etc/slurm'))}",
                 f"mount --bind {q(str(self.etc))} {q(str(root / 'etc/slurm'))}",
                 f"touch {q(str(root / 'etc/hosts'))}",  # a minbase root has none
                 f"mount --bind {q(str(self.work / 'hosts'))} {q(str(root / 'etc/hosts'))}",
                 f"mount -t proc proc {q(str(root / 'proc'))}"]
        steps += harness._dev_steps(self.work, root, gpus) if gpus is not None else []
        steps += [f"mount --bind {q(str(src))} {q(str(root / dst.lstrip('/')))}"
                  for src, dst in mounts]
        steps.append(f"exec chroot {q(str(root))} " + shlex.join(argv))
        return [harness._tool("unshare"), "-m", "-p", "-f", "--kill-child", "--propagation",
                "private", "sh", "-ec", " && ".join(steps)]

    def spawn(self, argv: list[str], log_name: str, *, mounts: Mounts = (),
              env: dict[str, str] | None = None, gpus: int | None = None
              ) -> subprocess.Popen[bytes]:
        with open(self.work / "log" / log_name, "wb") as out:
            return subprocess.Popen(self.command(argv, mounts, gpus), stdout=out,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    start_new_session=True, env=env or self.env(),
                                    preexec_fn=harness._die_with_parent)


def _private_dev(host_dev: Path, gpus: int) -> list[str]:
    """Shell steps: a tmpfs /dev with the base devices and /dev/nvidia0..N-1 (the host's
    /dev/null bound over each: gres.conf File= paths must be character devices)."""
    host_dev.mkdir(exist_ok=True)
    steps = [f"mount --rbind /dev {host_dev}", "mount -t tmpfs -o mode=755 sandbox-dev /dev"]
    devices = {name: name for name in harness.BASE_DEVICES}
    devices.update({f"nvidia{i}": "null" for i in range(gpus)})
    for name, source in devices.items():
        steps += [f"touch /dev/{name}", f"mount --bind {host_dev / source} /dev/{name}"]
    return steps


def prepare(rendered: Path, work: Path, *, dbd_port: int, runtime: harness.Runtime) -> Sandbox:
    """Copy the rendered slurm directory into work/etc and rewrite what a local run needs."""
    for sub in ("etc", "state", "spool", "log", "run"):
        (work / sub).mkdir(parents=True)
    for path in rendered.iterdir():
        if path.is_file():
            shutil.copy(path, work / "etc" / path.name)
    box = Sandbox(work, [], runtime)
    _rewrite_slurm_conf(box, dbd_port, runtime)
    box.rewrites += [f"cgroup.conf: {r}" for r in
                     harness._cgroup_rewrite(box.etc / "cgroup.conf", runtime)]
    if (rendered / "slurmdbd.conf").exists():
        _rewrite_slurmdbd_conf(box, dbd_port)
    (work / "hosts").write_text(harness.hosts_text(["localhost", host()], box.node_names))
    (work / "rewrites.txt").write_text("".join(f"{r}\n" for r in box.rewrites))
    return box


def _rewrite_slurm_conf(box: Sandbox, dbd_port: int, runtime: harness.Runtime) -> None:
    """slurm_harness's rewrites (host, ports, paths, user, auth; slurmd out of the host's
    cgroups), in one file that slurmctld, slurmd and the health check's scontrol all read,
    except that accounting stays slurmdbd (only its host and port change, to the test's
    slurmdbd) and the health check stays: its program is the rendered one in this sandbox."""
    path = box.etc / "slurm.conf"
    text = path.read_text()
    lines = text.splitlines()
    values = harness._controller_values(box.work, text)
    for key in ("AccountingStorageTRES", "AccountingStorageEnforce", *harness.HEALTH_KEYS):
        values.pop(key, None)  # kept as rendered
    values.update(harness._slurmd_values(lines, runtime))
    values["JobAcctGatherType"] = ("jobacct_gather/none", "keep slurmd out of the host's "
                                   "cgroups (the harness doc)")
    values["AccountingStorageType"] = ("accounting_storage/slurmdbd", "the test's slurmdbd")
    values["AccountingStorageHost"] = ("127.0.0.1", "the test's slurmdbd")
    values["AccountingStoragePort"] = (str(dbd_port), "the test's slurmdbd, on a free port")
    lines, rewrites = harness._rewrite(lines, values)
    # the test machine is smaller than the node: slurmd reports the configured CPUs and
    # memory instead of this machine's, so the node registers valid and only the health
    # check can drain it (slurm.conf(5) SlurmdParameters=config_overrides)
    lines.insert(harness._first_node_line(lines), "SlurmdParameters=config_overrides")
    rewrites.append("added SlurmdParameters=config_overrides (the test machine is smaller "
                    "than the node)")
    path.write_text("\n".join(lines) + "\n")
    box.rewrites += [f"slurm.conf: {r}" for r in rewrites]
    box.node_names = [h for line in lines if line.startswith("NodeName=")
                      for h in harness.expand(line.split()[0].split("=", 1)[1])]


def _rewrite_slurmdbd_conf(box: Sandbox, dbd_port: int) -> None:
    """slurmdbd.conf: this host, the free port, ourselves as SlurmUser, no munged, files in
    the temp dir. The storage lines stay: StorageHost=localhost reaches the test's socket."""
    values: harness.Values = {
        "AuthType": ("auth/none", "no munged here; 22.05-26.05 still ship auth/none"),
        "DbdHost": (host(), "slurmdbd runs only where DbdHost names the host"),
        "DbdPort": (str(dbd_port), "a free port"),
        "SlurmUser": (user(), "the daemons run as the test's user"),
        "LogFile": (str(box.work / "log" / "slurmdbd.log"), "files in the test's temp dir"),
        "PidFile": (str(box.work / "run" / "slurmdbd.pid"), "files in the test's temp dir"),
    }
    path = box.etc / "slurmdbd.conf"
    lines, rewrites = harness._rewrite(path.read_text().splitlines(), values)
    path.write_text("\n".join(lines) + "\n")
    path.chmod(0o600)  # slurmdbd refuses a slurmdbd.conf others can read
    box.rewrites += [f"slurmdbd.conf: {r}" for r in rewrites]


# --- daemons -----------------------------------------------------------------------------------


def _wait(ready: Callable[[], bool], proc: subprocess.Popen[bytes], name: str,
          log: Path) -> None:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise harness.HarnessError(f"{name} exited {proc.returncode}:\n{_read(log)}")
        if ready():
            return
        time.sleep(0.2)
    raise harness.HarnessError(f"{name} did not come up in {WAIT_S:.0f} s:\n{_read(log)}")


def _read(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else "(no log)"


def start_slurmdbd(box: Sandbox, db: MariaDB, dbd_port: int) -> subprocess.Popen[bytes]:
    env = {**box.env(), "SLURM_CONF": "/etc/slurm/slurm.conf",
           "MYSQL_UNIX_PORT": str(db.socket)}  # the client library's default socket
    proc = box.spawn([box.tool("slurmdbd"), "-D"], "slurmdbd-stdout.log", env=env)
    log = box.work / "log" / "slurmdbd.log"
    # ready when it says so and its port answers: the port alone might be another process's
    _wait(lambda: "slurmdbd version" in _read(log) and _port_open(dbd_port), proc, "slurmdbd",
          log)
    return proc


def _port_open(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def log_errors(path: Path, *noise: str) -> list[str]:
    """error:/fatal: lines of a log that no noise pattern (regex) explains."""
    import re

    patterns = [*harness.SANDBOX_NOISE, *(re.compile(n) for n in noise)]
    return harness._errors(_read(path), patterns)
