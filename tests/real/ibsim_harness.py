"""Real OpenSM and infiniband-diags on a simulated fabric: ibsim (ibsim-utils) loads a topology
in ibnetdiscover's format, and the tools run with libumad2sim preloaded, which turns their
umad calls into messages to the simulator (no kernel, no hardware).

What the harness changes, each for the sandbox only:
- IBSIM_SOCKNAME: each simulator its own socket name (the default 'ibsim0' is one per
  machine), so two tests, or two engineers, never share a fabric;
- opensm.conf's log_file and partition_config_file point into the test's folder (the
  generated file names /var/log and /etc/opensm, which a test may not write or read);
- OSM_CACHE_DIR: OpenSM's cache (guid2lid, neighbors) in the test's folder, not
  /var/cache/opensm, where another fabric's cache would make it see ghosts (ERR 7518);
- OpenSM runs once (-o: bring the subnet up, then exit) instead of as a daemon.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import time
from itertools import count
from pathlib import Path

import pytest

from cluster_iac.formats.ibnetdiscover import parse

TOOLS = {"ibsim": "ibsim-utils", "opensm": "opensm", "ibnetdiscover": "infiniband-diags",
         "ibtracert": "infiniband-diags", "smpquery": "infiniband-diags",
         "ibdmsh": "ibutils", "ibdmtr": "ibutils"}
_SOCKETS = count()


def _missing(what: str, package: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{what} is missing: apt-get install {package} (.ci/install-deps)")
    pytest.skip(f"{what} is not installed (apt-get install {package})")


def umad2sim() -> str:
    """The preload library (ibsim-utils' dependency libumad2sim0; `dpkg -L libumad2sim0`)."""
    found = sorted(glob.glob("/usr/lib/*/umad2sim/libumad2sim.so"))
    if not found:
        _missing("libumad2sim.so", "ibsim-utils")
    return found[0]


def tool(name: str) -> str:
    path = shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")
    if path is None:
        _missing(name, TOOLS[name])
    assert path is not None
    return path


class Simulator:
    """A running ibsim with one fabric; ``run`` runs a tool attached to it."""

    def __init__(self, topology: str, folder: Path) -> None:
        self.folder = folder
        self.net = folder / "fabric.net"
        self.net.write_text(topology)
        self.socket = f"cluster-iac-{os.getpid()}-{next(_SOCKETS)}"
        self.env = {**os.environ, "IBSIM_SOCKNAME": self.socket}
        parsed = parse(topology)
        nodes = len(parsed.nodes)
        switches = sum(1 for n in parsed.nodes.values() if n.kind == "Switch")
        ports = sum(n.ports + 1 for n in parsed.nodes.values())
        # ibsim's tables: 2048 nodes, 256 switches, 13312 ports unless -N/-S/-P raise them
        sizes = ["-N", str(max(2048, nodes)), "-S", str(max(256, switches)),
                 "-P", str(max(13312, ports))]
        self.log = folder / "ibsim.log"
        with self.log.open("w") as out:
            self.process = subprocess.Popen([tool("ibsim"), "-s", "-n", *sizes, str(self.net)],
                                            stdin=subprocess.DEVNULL, stdout=out,
                                            stderr=subprocess.STDOUT, env=self.env,
                                            cwd=self.folder)
        deadline = time.monotonic() + 60
        while "Network simulator ready" not in self.log.read_text(errors="replace"):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise RuntimeError(f"ibsim did not start:\n{self.log.read_text()[-3000:]}")
            time.sleep(0.05)

    def run(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        """A tool run against the simulated fabric (libumad2sim preloaded)."""
        env = {**self.env, "LD_PRELOAD": umad2sim(), "OSM_CACHE_DIR": str(self.folder),
               "OSM_TMP_DIR": str(self.folder)}
        # cwd: libumad2sim writes its simulated sysfs (sys-PID/) into the current folder
        return subprocess.run(list(args), capture_output=True, text=True, env=env,
                              timeout=timeout, stdin=subprocess.DEVNULL, cwd=self.folder)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def __enter__(self) -> Simulator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def opensm(self, conf: str, partitions: str) -> str:
        """OpenSM run once with the generated opensm.conf (its log and partitions file moved
        into the test's folder) on the fabric; its log."""
        log = self.folder / "opensm.log"
        parts = self.folder / "partitions.conf"
        parts.write_text(partitions)
        sandboxed = re.sub(r"(?m)^log_file .*$", f"log_file {log}", conf)
        sandboxed = re.sub(r"(?m)^partition_config_file .*$",
                           f"partition_config_file {parts}", sandboxed)
        assert sandboxed.count(str(self.folder)) == 2, "both paths are in opensm.conf"
        config = self.folder / "opensm.conf"
        config.write_text(sandboxed)
        done = self.run(tool("opensm"), "-F", str(config), "-o")
        assert done.returncode == 0, done.stdout + done.stderr
        return log.read_text(errors="replace")

    def discover(self) -> str:
        """The real ibnetdiscover's output for the simulated fabric."""
        done = self.run(tool("ibnetdiscover"))
        assert done.returncode == 0, done.stderr
        return done.stdout

    def trace(self, source_lid: int, dest_lid: int) -> list[str]:
        """The switches on the route from one LID to another, as ibtracert reads them from
        the switches' forwarding tables."""
        done = self.run(tool("ibtracert"), str(source_lid), str(dest_lid))
        assert done.returncode == 0, done.stdout + done.stderr
        return re.findall(r'-> switch port \{[^}]*\}\[\d+\] lid [\d-]+ "([^"]*)"', done.stdout)


def log_problems(log: str, engine: str) -> list[str]:
    """What an OpenSM log says is wrong: no SUBNET UP, another routing engine than the one
    asked for (OpenSM falls back to min-hop and exits 0), or any ERR line."""
    problems = [line for line in log.splitlines() if re.search(r"\bERR [0-9A-F]{4}\b", line)]
    if "SUBNET UP" not in log:
        problems.append("no 'SUBNET UP' in the log")
    if f"{engine} tables configured on all switches" not in log:
        used = re.findall(r"(\w+) tables configured on all switches", log)
        problems.append(f"asked for {engine}, the log says {used or 'no engine'} routed")
    return problems


def lids(discovered: str) -> dict[str, int]:
    """Each host adapter's LID (by node description) in an ibnetdiscover output taken after
    the subnet manager assigned them."""
    found = re.findall(r'^Ca\s+\d+\s+"[^"]*"\s+#\s+"([^"]*)"\n\[1\]\S*\s+"[^"]*"\[\d+\]\s+'
                       r"#\s+lid (\d+)", discovered, flags=re.MULTILINE)
    return {desc: int(lid) for desc, lid in found}


def pkeys(sim: Simulator, lid: int) -> set[int]:
    """The P_Keys in a port's table (smpquery reads it from the port, as OpenSM set it)."""
    done = sim.run(tool("smpquery"), "pkeys", str(lid))
    assert done.returncode == 0, done.stdout + done.stderr
    return {int(key, 16) for key in re.findall(r"0x([0-9a-f]{4})", done.stdout)} - {0}
