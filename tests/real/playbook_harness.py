"""Real ansible-playbook runs of the rendered ansible/site.yml against local hosts, with the
change plan's actions carried out on real slurmctld/slurmd (tests/real/test_playbook_real.py).

What the sandbox changes, each with its reason:
- every host is this machine (``ansible_connection=local``): the test has no other machines;
- ``cluster_iac_root`` = ROOTS/<inventory host>: each host's files go under a directory of its
  own, so one machine holds the file systems of several hosts (the playbook prefixes every
  installed path with it; on a real cluster it is empty);
- ``cluster_iac_service``, ``cluster_iac_scontrol`` and ``cluster_iac_admin`` (the prefix of
  the admin commands, sh accounting.sh and sacctmgr): the playbook's ``systemctl restart X``
  and ``scontrol ...`` reach the daemons through tests/real/service_request.py, answered by
  ``Services`` below, which owns the daemons as systemd would on a host: the daemons are
  change_harness's (ports, paths, users rewritten there, each with its reason), fed the slurm
  files the playbook installed on the controller. One slurmd runs (``node``), as in
  change_harness: a restart of another node's slurmd is logged, not run;
- Prometheus is real: ``systemctl reload-or-restart prometheus`` on its host starts
  /usr/bin/prometheus on the config the playbook installed there (a free loopback port and a
  storage directory of the test's: the sandbox is not the host's Prometheus), or sends it
  SIGHUP, as Debian's unit's ExecReload does;
- ``cluster_iac_netplan_apply``: the apply-netplan action runs real netplan on the host's root
  (``netplan generate --root-dir``, netplan_stand_in), never ``netplan apply`` here;
- opensm, lnet, nvidia-imex, dcgm-exporter and snmp_exporter have no hardware or no GPU here
  (an InfiniBand port, the Lustre modules, NVLink, DCGM): their restarts are logged with the
  host, so the test checks each one the plan names, and run nothing.

How the sandbox runs Ansible's modules, chosen for CPU only (nothing a module does to a host
changes; run_playbook says each setting's reason): pipelining; a fork server
(ansible_python/module_server.py, ``module_server`` below) whose client is the modules'
``ansible_python_interpreter``, so a module run forks a Python that has already imported
ansible.module_utils instead of starting one that imports it (a third of a playbook run's CPU
with it, measured on the minimal example's first deployment); CLUSTER_IAC_NO_MODULE_SERVER=1
runs each module in a Python of its own, to compare.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from cluster_iac.write.scan import CACHE_ENV
from tests.real import slurm_harness as harness
from tests.real.change_harness import SLURM_FILES, LiveSlurm

HERE = Path(__file__).parent
SITE = HERE / "ansible_python"  # the modules' Python: its sitecustomize, the module server
NO_MODULE_SERVER = "CLUSTER_IAC_NO_MODULE_SERVER"
# Services whose restart the sandbox logs and does not run (see the module docstring)
NO_HARDWARE = ("opensm", "lnet", "nvidia-imex", "dcgm-exporter", "prometheus-snmp-exporter")


def ansible_playbook() -> str:
    """ansible-playbook's path; under CI a missing one fails (ansible-core is in '.[test]')."""
    path = shutil.which("ansible-playbook") or shutil.which(
        "ansible-playbook", path=str(Path(sys.executable).parent))
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("ansible-playbook is missing: install ansible-core ('.[test]' extras)")
        pytest.skip("ansible-playbook is not installed (pip install ansible-core)")
    return path


class RequestServer:
    """Answers service_request.py's requests from a thread of the test (a service manager of
    the sandbox hosts); ``handle`` says what each request does. The daemons it starts are
    children of its thread (they die with it: harness._die_with_parent), so one serves a
    whole test."""

    def __init__(self, requests: Path, roots: Path) -> None:
        self.requests = requests
        self.roots = roots  # ROOTS/<host>: each host's installed files
        self.requests.mkdir(exist_ok=True)
        self.log: list[tuple[str, ...]] = []  # what was asked, in order
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> RequestServer:
        self._stop.clear()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _serve(self) -> None:
        while not self._stop.is_set():
            for request in sorted(self.requests.glob("*.json")):
                body = json.loads(request.read_text())
                try:
                    rc, out = self.handle(body["argv"], body["host"])
                except Exception as exc:  # the playbook's task fails with it
                    rc, out = 1, f"{type(exc).__name__}: {exc}\n"
                done = request.with_suffix(".done")
                done.with_suffix(".part").write_text(json.dumps({"rc": rc, "out": out}))
                done.with_suffix(".part").rename(done)
                request.unlink()
            self._stop.wait(0.05)

    def handle(self, argv: list[str], host: str) -> tuple[int, str]:
        raise NotImplementedError


@dataclass
class Services(RequestServer):
    """The service manager of the sandbox hosts for change_harness's slurmctld and slurmd."""

    live: LiveSlurm
    roots: Path  # ROOTS/<host>: each host's installed files
    controller: str
    node: str  # the one node whose slurmd runs
    prometheus: subprocess.Popen[bytes] | None = None
    prometheus_port: int = 0

    def __post_init__(self) -> None:
        RequestServer.__init__(self, self.live.work / "requests", self.roots)

    def __exit__(self, *exc: object) -> None:
        RequestServer.__exit__(self, *exc)
        if self.prometheus is not None and self.prometheus.poll() is None:
            self.prometheus.terminate()
            self.prometheus.wait(timeout=30)

    def handle(self, argv: list[str], host: str) -> tuple[int, str]:
        if argv[:1] == ["scontrol"]:
            if argv[1:] == ["ping"] or argv[1:3] == ["show", "hostnames"]:  # queries
                result = self.live._scontrol({}, *argv[1:])
                return result.returncode, result.stdout + result.stderr
            self.log.append(("scontrol", *argv[1:]))
            self.sync()
            if argv[1:] == ["reconfigure"]:
                self.live.reconfigure()
                return 0, ""
            result = self.live._scontrol({}, *argv[1:])
            return result.returncode, result.stdout + result.stderr
        if argv[:1] == ["restart"] and argv[1:] in (["slurmctld"], ["slurmd"]):
            self.log.append((argv[1], host))
            self.sync()
            if argv[1] == "slurmctld":
                if self.live.cluster is not None and self.live.cluster.controller is not None:
                    self.live.restart_slurmctld()
                else:
                    self.live.ctl.start()
            elif host == self.node:
                self.live.stop_slurmd()
                self.live.start_slurmd(host)
            else:
                return 0, f"{host}: not run here (one slurmd per sandbox)\n"
            return 0, ""
        if argv == ["enable", "--now", "slurmd"]:  # start-slurmd: a node the change adds
            self.log.append(("slurmd-start", host))
            return 0, f"{host}: not run here (one slurmd per sandbox)\n"
        if argv[:2] == ["reload-or-restart", "prometheus"]:
            self.log.append(("prometheus", host))
            return self.reload_prometheus(host)
        if argv[:1] == ["restart"] and argv[1:] in ([u] for u in NO_HARDWARE):
            self.log.append((argv[1], host))
            return 0, f"{host}: {argv[1]} not run here (no hardware for it)\n"
        return 1, f"the sandbox runs no {argv!r}\n"

    def reload_prometheus(self, host: str) -> tuple[int, str]:
        """Start Prometheus on the host's installed config, or SIGHUP it (a reload)."""
        if self.prometheus is not None and self.prometheus.poll() is None:
            self.prometheus.send_signal(signal.SIGHUP)
            return 0, ""
        binary = shutil.which("prometheus")
        if binary is None:
            return 1, "prometheus is not installed (apt-get install prometheus)\n"
        # below the ephemeral range, in this xdist worker's slice (slurm_harness.free_port)
        self.prometheus_port = harness.free_port()
        work = self.live.work / "prometheus"
        work.mkdir(exist_ok=True)
        self.prometheus = subprocess.Popen(
            [binary, f"--config.file={self.roots / host / 'etc/prometheus/prometheus.yml'}",
             f"--storage.tsdb.path={work / 'data'}",
             f"--web.listen-address=127.0.0.1:{self.prometheus_port}"],
            stdout=(work / "log").open("a"), stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.prometheus.poll() is not None:
                return 1, (work / "log").read_text()
            try:
                self.prometheus_api("/-/ready")
                return 0, ""
            except OSError:
                time.sleep(0.3)
        return 1, "prometheus not ready in 60 s\n"

    def prometheus_api(self, path: str) -> object:
        url = f"http://127.0.0.1:{self.prometheus_port}{path}"
        with urllib.request.urlopen(url, timeout=10) as answer:
            body = answer.read()
        return json.loads(body) if path.startswith("/api/") else body

    def sync(self) -> None:
        """The slurm files the playbook installed on the controller, where the daemons read
        them (with change_harness's rewrites)."""
        etc = self.roots / self.controller / "etc" / "slurm"
        self.live.install({f"slurm/{name}": (etc / name).read_text() for name in SLURM_FILES
                           if (etc / name).exists()})

    def pids(self) -> dict[str, int | None]:
        """slurmctld's and the live slurmd's process ids (a restart makes new ones)."""
        ctl = self.live.cluster.controller if self.live.cluster else None
        return {"slurmctld": ctl.pid if ctl else None,
                self.node: self.live.slurmd.pid if self.live.slurmd else None,
                "prometheus": self.prometheus.pid if self.prometheus else None}


def netplan_stand_in(roots: Path) -> list[str]:
    """The apply-netplan action's command in the sandbox: real netplan reading the host's
    root (``netplan generate --root-dir``: it writes the systemd-networkd files under it and
    applies nothing), never ``netplan apply`` on this machine's interfaces. The host is
    ``CLUSTER_IAC_HOST``: the action is delegated from the controller to each node."""
    return ["sh", "-c", 'exec netplan generate --root-dir "$0/$CLUSTER_IAC_HOST"', str(roots)]


def extra_vars(work: Path, services: RequestServer) -> Path:
    """The sandbox's variables (see the module docstring), as an extra-vars file."""
    request = [sys.executable, str(HERE / "service_request.py"), str(services.requests)]
    data = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
            "cluster_iac_root": f"{services.roots}/{{{{ inventory_hostname }}}}",
            "cluster_iac_service": request, "cluster_iac_scontrol": [*request, "scontrol"],
            "cluster_iac_hostnames": [*request, "scontrol", "show", "hostnames"],
            "cluster_iac_admin": request,
            "cluster_iac_netplan_apply": netplan_stand_in(services.roots)}
    path = work / "sandbox-vars.json"
    path.write_text(json.dumps(data))
    return path


def run_playbook(tree: Path, plan: Path, release: str, sandbox_vars: Path, work: Path,
                 *extra: str) -> subprocess.CompletedProcess[str]:
    """ansible-playbook -i inventory.yml site.yml with the plan for ``release``."""
    config = work / "ansible.cfg"
    # how often ansible-playbook looks for its workers' results (ini only, no variable):
    # every 10 ms rather than 1 ms, which woke it ~80,000 times in one run of the minimal
    # example's playbook
    config.write_text("[defaults]\ninternal_poll_interval = 0.01\n")
    code = Path(os.environ.get(CACHE_ENV) or work) / "ansible-module-code"
    code.mkdir(parents=True, exist_ok=True)
    # ANSIBLE_PIPELINING: each module is piped to the interpreter instead of written to a
    # temporary file first (a transport setting many sites turn on; nothing the playbook does
    # changes): about a quarter less CPU per task on this 2-core machine
    env = {**os.environ, "ANSIBLE_CONFIG": str(config), "ANSIBLE_NOCOLOR": "1",
           "ANSIBLE_PIPELINING": "True",
           "ANSIBLE_LOCAL_TEMP": str(work / "ansible-tmp"), "ANSIBLE_HOME": str(work / "home"),
           "ANSIBLE_REMOTE_TEMP": str(work / "ansible-remote"), "ANSIBLE_FORKS": "4",
           "ANSIBLE_INVENTORY_UNPARSED_FAILED": "True", "ANSIBLE_DEPRECATION_WARNINGS": "True",
           # the modules' Python keeps the code it compiles (ansible_python/sitecustomize.py)
           "PYTHONPATH": os.pathsep.join([str(SITE),
                                          *filter(None, [os.environ.get("PYTHONPATH")])]),
           "CLUSTER_IAC_MODULE_CODE": str(code)}
    argv = [ansible_playbook(), "-i", str(tree / "ansible" / "inventory.yml"),
            str(tree / "ansible" / "site.yml"), "-e", f"@{sandbox_vars}",
            "-e", f"cluster_iac_changes={plan}", "-e", f"cluster_iac_release={release}"]
    if os.environ.get(NO_MODULE_SERVER):
        return subprocess.run([*argv, *extra], capture_output=True, text=True, env=env,
                              timeout=600)
    with module_server(env, work) as interpreter:
        # the modules' interpreter: the server's client (a later -e wins over the sandbox's)
        argv += ["-e", json.dumps({"ansible_python_interpreter": str(interpreter)})]
        return subprocess.run([*argv, *extra], capture_output=True, text=True, env=env,
                              timeout=600)


@contextlib.contextmanager
def module_server(env: dict[str, str], work: Path) -> Iterator[Path]:
    """ansible_python/module_server.py serving one ansible-playbook run; yields the
    interpreter path the sandbox gives Ansible (its client). Set NO_MODULE_SERVER to run each
    module in a Python of its own, as without the server."""
    folder = Path(tempfile.mkdtemp(prefix="ciac-ms-"))  # a Unix socket path: 107 bytes at most
    sock = folder / "socket"
    interpreter = work / "module-python"
    interpreter.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -I -S "
                           f"{shlex.quote(str(SITE / 'module_client.py'))} \"$@\"\n")
    interpreter.chmod(0o755)
    env.update({"CLUSTER_IAC_MODULE_SERVER": str(sock),
                "CLUSTER_IAC_MODULE_PYTHON": sys.executable})
    with (work / "module-server.log").open("a") as log:
        server = subprocess.Popen([sys.executable, str(SITE / "module_server.py"), str(sock)],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=log, env=env,
                                  preexec_fn=harness._die_with_parent)  # a killed test's too
    try:
        assert server.stdout is not None
        ready = server.stdout.readline()
        assert ready == b"ready\n", (work / "module-server.log").read_text()
        yield interpreter
    finally:
        server.terminate()  # it waits for the module runs still going (none after a run)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=30)
        server.stdout.close()  # type: ignore[union-attr]
        shutil.rmtree(folder, ignore_errors=True)


def recap(output: str) -> dict[str, dict[str, int]]:
    """PLAY RECAP: host -> {ok, changed, failed, ...}."""
    found = {}
    for line in output.split("PLAY RECAP", 1)[-1].splitlines():
        match = re.match(r"(\S+)\s+:\s+(.*)", line)
        if match:
            found[match.group(1)] = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)",
                                                                      match.group(2))}
    return found


def changed_files(output: str) -> set[tuple[str, str]]:
    """(host, rendered file) of each file the install task changed, or would change under
    --check (its items are labelled 'SRC -> DEST')."""
    return set(re.findall(r"^changed: \[(\S+)\] => \(item=(\S+) -> \S+\)$", output, re.M))
