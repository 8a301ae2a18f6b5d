"""Network namespaces for real-daemon tests: FRR, lldpd, BIND, Kea and a DHCP client on veth links.

Rules (docs in the module's own tests, tests/real/test_netns_harness_real.py):
- every daemon runs inside a network namespace a ``Lab`` created; links are veth pairs made
  directly inside the namespaces (``ip -n A link add X type veth peer name Y netns B``), so no
  interface ever exists in the machine's own namespace and no packet can leave the lab;
- names are unique per process and lab (``cin<pid>-<n>-<name>``), so pytest-xdist workers and
  several checkouts can run at once; caller-chosen interface names (swp1, eth0, Ethernet0) live
  only inside their namespace, where the 15-character kernel limit is the caller's;
- every wait has a timeout; ``Lab.close`` (the context manager's exit, also on failure) stops the
  daemons it started, kills whatever is left in its namespaces (``ip netns pids``) and deletes
  them; a lab left behind by a killed run (its pid gone) is removed by the next ``Lab``;
- daemons read the configuration under test unchanged; the harness adds only what the sandbox
  needs (run directory, pid files, sockets, log to stdout, vty port 0) on their command lines or
  in its own wrapper files (named.conf around the zones under test, lldpd's -O file).

A missing tool fails the test under CI=true and skips it elsewhere (``require``), like
ibsim_harness and slurm_harness.
"""

from __future__ import annotations

import contextlib
import ipaddress
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

# Each tool with the Debian 12 package that ships it (.ci/install-deps installs them).
TOOLS = {
    "ip": "iproute2", "zebra": "frr", "bgpd": "frr", "staticd": "frr", "vtysh": "frr",
    "lldpd": "lldpd", "lldpcli": "lldpd", "named": "bind9", "named-checkzone": "bind9-utils",
    "named-checkconf": "bind9-utils", "dig": "bind9-dnsutils", "kea-dhcp4": "kea-dhcp4-server",
    "busybox": "busybox", "cloud-init": "cloud-init", "netplan": "netplan.io", "ifup": "ifupdown2",
    "ifreload": "ifupdown2", "ifquery": "ifupdown2", "unshare": "util-linux",
    "systemd-analyze": "systemd", "systemctl": "systemd",
    "dash": "dash",  # Essential in Debian: every machine has it, so not in .ci/install-deps
}
FRR_DIR = Path("/usr/lib/frr")  # FRR's daemons live here, not on PATH
PREFIX = "cin"  # every namespace this harness makes is named cin<pid>-<n>-<name>
_LABS = itertools.count()
RUN_S = 30.0  # the default bound on one command run inside a lab


class LabError(RuntimeError):
    """A lab step failed: the command, its exit status and its output (or a daemon's log)."""


# --- tools --------------------------------------------------------------------------------------


def tool(name: str) -> str:
    """A tool's path; fails under CI=true and skips elsewhere when it is missing."""
    path = str(FRR_DIR / name) if (FRR_DIR / name).exists() else shutil.which(name)
    if path is None:
        package = TOOLS.get(name, name)
        if os.environ.get("CI") == "true":
            pytest.fail(f"{name} is missing: apt-get install {package} (.ci/install-deps)")
        pytest.skip(f"{name} is not installed (apt-get install {package})")
    return path


def require(*names: str) -> None:
    """Each tool (see ``tool``), and root, which network namespaces need."""
    for name in ("ip", *names):
        tool(name)
    if os.geteuid() != 0:
        if os.environ.get("CI") == "true":
            pytest.fail("network namespaces need root (ip netns add)")
        pytest.skip("network namespaces need root (ip netns add)")


def wait_for(what: str, probe: Callable[[], Any], timeout: float, step: float = 0.2) -> Any:
    """Call probe until it returns something other than None or False; LabError past timeout."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value is not None and value is not False:
            return value
        if time.monotonic() > deadline:
            raise LabError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(step)


def wait_ready(lab: Lab, short: str, name: str, ready: Callable[[Daemon], bool],
               timeout: float) -> Daemon:
    """Wait until ready(daemon) for the lab's daemon name in namespace short; LabError with
    the daemon's log if it exits first or past timeout."""
    daemon = next(d for d in lab.daemons if d.ns == short and d.name == name)

    def probe() -> bool:
        if ready(daemon):
            return True
        if not daemon.alive():
            raise LabError(f"{name} in {short} exited {daemon.process.returncode}:\n"
                           f"{daemon.output()}")
        return False

    try:
        wait_for(f"{name} in {short}", probe, timeout)
    except LabError as error:
        if not daemon.alive():
            raise
        raise LabError(f"{error}\n{daemon.output()}") from None
    return daemon


def _run(argv: Sequence[str], timeout: float = RUN_S, check: bool = True, **kw: Any
         ) -> subprocess.CompletedProcess[str]:
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, **kw)
    except subprocess.TimeoutExpired as error:
        raise LabError(f"{' '.join(argv)}: no answer within {timeout:g} s") from error
    if check and done.returncode != 0:
        raise LabError(f"{' '.join(argv)}: exit {done.returncode}\n{done.stdout}{done.stderr}")
    return done


# --- the lab ------------------------------------------------------------------------------------


@dataclass
class Daemon:
    """A background process inside a namespace, its run directory and its log."""

    name: str
    ns: str
    process: subprocess.Popen[bytes]
    rundir: Path
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self, timeout: float = 5.0) -> None:
        """SIGTERM, then SIGKILL past timeout."""
        if self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout)


@dataclass
class Lab:
    """Network namespaces joined by veth pairs, and the daemons run in them.

    ``Lab(["leaf1", "spine1"])`` names namespaces by the caller's short names; every method takes
    those short names. Use as a context manager: leaving it (also by an exception) tears down.
    """

    names: Iterable[str]
    root: Path | None = None  # the run directories' parent; a fresh temporary one when None
    namespaces: dict[str, str] = field(default_factory=dict, init=False)
    daemons: list[Daemon] = field(default_factory=list, init=False)
    _own_root: bool = field(default=False, init=False)

    def __enter__(self) -> Lab:
        require()
        remove_stale_labs()
        if self.root is None:
            self.root = Path(tempfile.mkdtemp(prefix="netns-lab-"))
            self.root.chmod(0o755)  # daemons that drop root (FRR as frr) reach their rundir
            self._own_root = True
        number = next(_LABS)
        try:
            for short in self.names:
                real = f"{PREFIX}{os.getpid()}-{number}-{short}"
                _run(["ip", "netns", "add", real])
                self.namespaces[short] = real
                self.ip(short, "link", "set", "lo", "up")
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- topology --

    def ns(self, short: str) -> str:
        """The namespace's real name (for `ip netns exec` by hand)."""
        return self.namespaces[short]

    def ip(self, short: str, *args: str, timeout: float = RUN_S) -> str:
        """`ip -n NS ARGS...`; its stdout."""
        return _run(["ip", "-n", self.ns(short), *args], timeout=timeout).stdout

    def link(self, a: tuple[str, str], b: tuple[str, str], mtu: int | None = None,
             up: bool = True) -> None:
        """A veth pair from (namespace, ifname) a to b, made inside the namespaces."""
        (ns_a, if_a), (ns_b, if_b) = a, b
        self.ip(ns_a, "link", "add", if_a, "type", "veth", "peer", "name", if_b,
                "netns", self.ns(ns_b))
        for ns, ifname in (a, b):
            if mtu is not None:
                self.ip(ns, "link", "set", ifname, "mtu", str(mtu))
            if up:
                self.ip(ns, "link", "set", ifname, "up")

    def mac(self, short: str, ifname: str, mac: str) -> None:
        self.ip(short, "link", "set", ifname, "address", mac)

    def mtu(self, short: str, ifname: str, mtu: int) -> None:
        self.ip(short, "link", "set", ifname, "mtu", str(mtu))

    def up(self, short: str, ifname: str) -> None:
        self.ip(short, "link", "set", ifname, "up")

    def address(self, short: str, ifname: str, cidr: str) -> None:
        """An IPv4 or IPv6 address (CIDR) on an interface ('lo' for a loopback address)."""
        self.ip(short, "address", "add", cidr, "dev", ifname)

    def route(self, short: str, *args: str) -> None:
        """`ip route add ARGS` in the namespace (a host's default route)."""
        self.ip(short, "route", "add", *args)

    def sysctl(self, short: str, key: str, value: str) -> None:
        self.run(short, "sysctl", "-q", "-w", f"{key}={value}")

    def kernel_route(self, short: str, prefix: str) -> list[dict[str, Any]]:
        """The kernel's route for prefix (`ip -j route show PREFIX`, IPv4 or IPv6): each route
        with its next hops as `ip` prints them ('nexthops' for ECMP, 'gateway'/'dev' else)."""
        family = "-6" if ipaddress.ip_network(prefix, strict=False).version == 6 else "-4"
        return json.loads(self.ip(short, "-j", family, "route", "show", prefix) or "[]")

    # -- processes --

    def run(self, short: str, *argv: str, timeout: float = RUN_S, check: bool = True,
            env: dict[str, str] | None = None, cwd: Path | None = None
            ) -> subprocess.CompletedProcess[str]:
        """A command inside the namespace, bounded by timeout; LabError on failure if check."""
        full = None if env is None else {**os.environ, **env}
        return _run(["ip", "netns", "exec", self.ns(short), *argv], timeout=timeout,
                    check=check, env=full, cwd=cwd)

    def rundir(self, short: str, name: str) -> Path:
        """A private directory for one daemon of one namespace (made on first use)."""
        assert self.root is not None
        path = self.root / short / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    def start(self, short: str, name: str, argv: Sequence[str],
              env: dict[str, str] | None = None) -> Daemon:
        """A daemon (foreground mode) inside the namespace; stdout and stderr to rundir/NAME.log."""
        rundir = self.rundir(short, name)
        log = rundir / f"{name}.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                ["ip", "netns", "exec", self.ns(short), *argv], stdout=out,
                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=rundir,
                env=None if env is None else {**os.environ, **env}, start_new_session=True)
        daemon = Daemon(name, short, process, rundir, log)
        self.daemons.append(daemon)
        return daemon

    def close(self) -> None:
        """Stop the daemons, kill what is left in the namespaces, delete them (idempotent)."""
        for daemon in reversed(self.daemons):
            with contextlib.suppress(OSError, subprocess.SubprocessError):
                daemon.stop()
        self.daemons.clear()
        for real in self.namespaces.values():
            _delete_namespace(real)
        self.namespaces.clear()
        if self._own_root and self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)


def _delete_namespace(real: str) -> None:
    """Kill every process left in the namespace, then delete it."""
    pids = _run(["ip", "netns", "pids", real], check=False, timeout=10).stdout.split()
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(pid), signal.SIGKILL)
    _run(["ip", "netns", "del", real], check=False, timeout=10)


def remove_stale_labs() -> None:
    """Delete the namespaces of labs whose process is gone (a run killed before its teardown)."""
    listed = _run(["ip", "netns", "list"], timeout=10).stdout
    for line in listed.splitlines():
        match = re.match(rf"({PREFIX}(\d+)-\d+-\S+)", line)
        if match and not Path(f"/proc/{match.group(2)}").exists():
            _delete_namespace(match.group(1))


# --- FRR ----------------------------------------------------------------------------------------

FRR_DAEMONS = ("zebra", "bgpd", "staticd")
FRR_USER = "frr"  # FRR's daemons drop root to this user (and check it is in the frrvty group)


def start_frr(lab: Lab, short: str, frr_conf: str, daemons: Sequence[str] = FRR_DAEMONS,
              timeout: float = 20.0) -> Path:
    """FRR's daemons from /usr/lib/frr (no systemd, no watchfrr) in the namespace, then the
    integrated frr.conf applied by `vtysh -b`, as frrinit.sh does; returns the run directory.

    Each daemon is told its paths instead of using /etc/frr and /var/run/frr: --vty_socket (the
    vty sockets, also where vtysh looks), -z (zebra's API socket), -i (pid file), -P 0 (no vty
    TCP port), --log stdout (the daemon's log file). FRR's -N pathspace would put the same files
    under /etc/frr/NS and /var/run/frr/NS on the machine, so it is not used. frr.conf is written
    as given; vtysh.conf (vtysh's own settings) is empty. A line FRR rejects fails the start.
    """
    rundir = lab.rundir(short, "frr")
    (rundir / "frr.conf").write_text(frr_conf)
    (rundir / "vtysh.conf").write_text("")
    shutil.chown(rundir, FRR_USER, FRR_USER)
    for name in daemons:
        lab.start(short, name, [tool(name), "--vty_socket", str(rundir), "-z",
                                str(rundir / "zserv.api"), "-i", str(rundir / f"{name}.pid"),
                                "-P", "0", "--log", "stdout"])
    for name in daemons:
        wait_ready(lab, short, name, lambda d: (rundir / f"{d.name}.vty").exists(), timeout)
    done = lab.run(short, tool("vtysh"), "--vty_socket", str(rundir), "--config_dir",
                   str(rundir), "-b", check=False, timeout=timeout)
    if done.returncode != 0:
        raise LabError(f"FRR in {short} rejected frr.conf (vtysh -b exit {done.returncode}):\n"
                       f"{done.stdout}{done.stderr}")
    return rundir




def vtysh(lab: Lab, short: str, command: str, parse: bool | None = None,
          timeout: float = RUN_S) -> Any:
    """One vtysh command in the namespace's FRR; parsed JSON when it ends in 'json' (or when
    parse is True), else the text."""
    rundir = lab.rundir(short, "frr")
    out = lab.run(short, tool("vtysh"), "--vty_socket", str(rundir), "-c", command,
                  timeout=timeout).stdout
    if parse if parse is not None else command.rstrip().endswith("json"):
        return json.loads(out or "{}")
    return out


def bgp_peers(lab: Lab, short: str) -> dict[str, str]:
    """Each BGP neighbor (address or interface) of the default VRF -> its state, over all
    address families `show bgp summary json` lists."""
    summary = vtysh(lab, short, "show bgp summary json")
    return {peer: state["state"] for family in summary.values() if isinstance(family, dict)
            for peer, state in family.get("peers", {}).items()}


def wait_bgp_established(lab: Lab, short: str, peers: Iterable[str], timeout: float = 30.0
                         ) -> dict[str, str]:
    """Wait until every named peer is Established; the peer states. LabError (with the states
    reached) past timeout."""
    wanted = sorted(peers)
    seen: dict[str, str] = {}

    def probe() -> dict[str, str] | None:
        seen.clear()
        seen.update(bgp_peers(lab, short))
        return seen if all(seen.get(p) == "Established" for p in wanted) else None

    try:
        return wait_for(f"BGP in {short}", probe, timeout, step=0.5)
    except LabError as error:
        raise LabError(f"{error}: peers {wanted}, states {seen}") from None


def frr_route(lab: Lab, short: str, prefix: str) -> list[dict[str, Any]]:
    """FRR's RIB entries for prefix (`show ip route PREFIX json`, or `show ipv6 route`)."""
    family = "ipv6" if ipaddress.ip_network(prefix, strict=False).version == 6 else "ip"
    return vtysh(lab, short, f"show {family} route {prefix} json").get(prefix, [])


def fib_next_hops(lab: Lab, short: str, prefix: str) -> list[tuple[str, str]]:
    """The next hops FRR installed in the kernel for prefix: sorted (interface, address) pairs
    (address '' for a connected route; an IPv6 link-local one for BGP unnumbered)."""
    return sorted((hop.get("interfaceName", ""), hop.get("ip", ""))
                  for entry in frr_route(lab, short, prefix) if entry.get("selected")
                  for hop in entry.get("nexthops", []) if hop.get("fib"))


def kernel_next_hops(lab: Lab, short: str, prefix: str) -> list[tuple[str, str]]:
    """The kernel's next hops for prefix, sorted (interface, gateway) pairs; for an IPv4 route
    via IPv6 (RFC 5549, BGP unnumbered) the gateway is the IPv6 address."""
    hops = []
    for route in lab.kernel_route(short, prefix):
        for hop in route.get("nexthops", [route]):
            via = hop.get("gateway") or hop.get("via", {}).get("host", "")
            hops.append((hop.get("dev", ""), via))
    return sorted(hops)


def start_fabric(lab: Lab, links: Iterable[tuple[str, str, str, str]],
                 switches: Sequence[str], files: Mapping[str, str],
                 timeout: float = 60.0) -> None:
    """A fabric as rendered: a veth pair per cable (a, a_port, b, b_port), then each switch
    forwarding, its generated ifupdown2 interfaces (switches/NAME/interfaces) brought up,
    and its generated FRR (switches/NAME/frr.conf) started."""
    for a, a_port, b, b_port in links:
        lab.link((a, a_port), (b, b_port))
    for name in switches:
        forwarding(lab, name)
        ifupdown2(lab, name, files[f"switches/{name}/interfaces"], timeout=timeout)
    for name in switches:
        start_frr(lab, name, files[f"switches/{name}/frr.conf"], timeout=timeout)


def resolve_neighbours(lab: Lab, short: str, source: str, dest: str,
                       timeout: float = RUN_S) -> None:
    """One small echo from ``source`` to ``dest``, not judged, waited for up to 5 s: each
    hop of the path resolves its next hop's address (ARP) before a test's judged pings. On
    two loaded cores, resolving four hops has outlasted the 2 s a judged ping waits and lost
    its first echo (the README command's run of 29 Nov 2026, test_frr_real): a timing of
    neighbour resolution, not of the routes or MTUs those pings test."""
    lab.run(short, "busybox", "ping", "-c", "1", "-W", "5", "-I", source, dest,
            timeout=timeout, check=False)


def forwarding(lab: Lab, short: str) -> None:
    """IPv4 and IPv6 forwarding on, as a switch's OS has it (a new namespace has it off)."""
    lab.sysctl(short, "net.ipv4.ip_forward", "1")
    lab.sysctl(short, "net.ipv6.conf.all.forwarding", "1")


# --- lldpd --------------------------------------------------------------------------------------


def start_lldpd(lab: Lab, short: str, system_name: str, interfaces: Sequence[str] = (),
                tx_interval: int = 1, timeout: float = 10.0) -> Path:
    """lldpd in the namespace with its own control socket (-u), announcing system_name every
    tx_interval seconds on interfaces (all when empty); returns the socket's path.

    The system name and interval come from lldpd's -O file (commands lldpcli runs at start),
    since all namespaces share the machine's host name."""
    rundir = lab.rundir(short, "lldpd")
    socket = rundir / "lldpd.socket"
    startup = rundir / "lldpd.conf"
    startup.write_text(f"configure system hostname {system_name}\n"
                       f"configure lldp tx-interval {tx_interval}\n")
    argv = [tool("lldpd"), "-d", "-u", str(socket), "-O", str(startup)]
    if interfaces:
        argv += ["-I", ",".join(interfaces)]
    lab.start(short, "lldpd", argv)
    wait_ready(lab, short, "lldpd", lambda _: socket.exists(), timeout)
    return socket


def lldp_neighbors(lab: Lab, short: str) -> list[dict[str, str]]:
    """`lldpcli -u SOCK show neighbors -f json` in the namespace, flattened: one
    {'interface', 'system', 'port', 'port_descr', 'chassis_id'} per neighbour, sorted."""
    socket = lab.rundir(short, "lldpd") / "lldpd.socket"
    out = lab.run(short, tool("lldpcli"), "-u", str(socket), "show", "neighbors", "-f",
                  "json").stdout
    found = json.loads(out).get("lldp", {}).get("interface", [])
    # lldpcli's JSON gives one interface as a dict, several as a list of {name: {...}}
    items = found.items() if isinstance(found, dict) else (
        kv for entry in found for kv in entry.items())
    rows = []
    for ifname, entry in items:
        for system, chassis in entry.get("chassis", {}).items():
            port = entry.get("port", {})
            rows.append({"interface": ifname, "system": system,
                         "chassis_id": chassis.get("id", {}).get("value", ""),
                         "port": port.get("id", {}).get("value", ""),
                         "port_descr": port.get("descr", "")})
    return sorted(rows, key=lambda r: (r["interface"], r["system"], r["port"]))


def wait_lldp_neighbors(lab: Lab, short: str, count: int, timeout: float = 15.0
                        ) -> list[dict[str, str]]:
    """Wait until the namespace's lldpd lists at least count neighbours; the table."""
    def probe() -> list[dict[str, str]] | None:
        rows = lldp_neighbors(lab, short)
        return rows if len(rows) >= count else None

    return wait_for(f"{count} LLDP neighbours in {short}", probe, timeout, step=0.5)


# --- BIND ---------------------------------------------------------------------------------------


def check_zone(zone: str, text: str, timeout: float = RUN_S) -> tuple[bool, str]:
    """`named-checkzone ZONE FILE` on zone text (no daemon, no namespace): (ok, its output)."""
    with tempfile.TemporaryDirectory(prefix="netns-zone-") as tmp:
        path = Path(tmp) / "zone"
        path.write_text(text)
        done = _run([tool("named-checkzone"), zone, str(path)], timeout=timeout, check=False)
    return done.returncode == 0, done.stdout + done.stderr


def start_named(lab: Lab, short: str, zones: dict[str, str], address: str = "127.0.0.1",
                port: int = 53, timeout: float = 15.0) -> Path:
    """named in the foreground (-g, as root) in the namespace, authoritative for zones (name ->
    zone text, each written as given) on address:port; returns the run directory.

    named.conf is the harness's own: paths in the run directory, no recursion, no IPv6 listener,
    no control channel (`controls { };`), and a primary zone per given zone file."""
    rundir = lab.rundir(short, "named")
    listen = f"listen-on-v6 port {port} {{ {address}; }};" if ":" in address else \
        f"listen-on port {port} {{ {address}; }};\n  listen-on-v6 {{ none; }};"
    blocks = []
    for number, (zone, text) in enumerate(sorted(zones.items())):
        path = rundir / f"zone{number}.db"
        path.write_text(text)
        blocks.append(f'zone "{zone}" {{ type primary; file "{path}"; }};')
    conf = rundir / "named.conf"
    conf.write_text(
        f'options {{\n  directory "{rundir}";\n  pid-file "{rundir}/named.pid";\n'
        f'  session-keyfile "{rundir}/session.key";\n  managed-keys-directory "{rundir}";\n'
        f"  {listen}\n  recursion no;\n  dnssec-validation no;\n}};\ncontrols {{ }};\n"
        + "\n".join(blocks) + "\n")
    _run([tool("named-checkconf"), str(conf)], timeout=timeout)
    lab.start(short, "named", [tool("named"), "-g", "-c", str(conf)])
    wait_ready(lab, short, "named", lambda d: "running" in d.output(), timeout)
    # "running" can come before every zone is served: under a loaded machine (four xdist
    # workers) a query right after it got SERVFAIL. Ready is each zone's SOA answered.
    for zone in sorted(zones):
        wait_for(f"named in {short} serving {zone}",
                 lambda zone=zone: dig(lab, short, address, zone, "SOA", port).status
                 == "NOERROR", timeout)
    return rundir


@dataclass(frozen=True)
class DigAnswer:
    """dig's status (NOERROR, NXDOMAIN...) and answer records (name, ttl, class, type, data)."""

    status: str
    records: list[tuple[str, int, str, str, str]]

    def data(self) -> list[str]:
        return sorted(record[4] for record in self.records)


def dig(lab: Lab, short: str, server: str, name: str, rtype: str = "A", port: int = 53,
        timeout: float = 10.0) -> DigAnswer:
    """`dig @server -p port name rtype` from inside the namespace (one try, 2 s)."""
    argv = [tool("dig"), f"@{server}", "-p", str(port), name, rtype, "+noall", "+answer",
            "+comments", "+time=2", "+tries=1"]
    if rtype.upper() == "PTR" and not name.endswith((".arpa", ".arpa.")):
        argv[4:6] = ["-x", name]
    out = lab.run(short, *argv, timeout=timeout).stdout
    status = re.search(r"status: (\w+)", out)
    records = []
    for line in out.splitlines():
        if line and not line.startswith(";"):
            owner, ttl, klass, kind, data = line.split(None, 4)
            records.append((owner, int(ttl), klass, kind, data))
    return DigAnswer(status.group(1) if status else "", records)


# --- Kea and a DHCP client ----------------------------------------------------------------------


def _kea_env(rundir: Path) -> dict[str, str]:
    """Kea's pid and lock files go to the run directory (kea-dhcp4(8), ENVIRONMENT)."""
    return {"KEA_PIDFILE_DIR": str(rundir), "KEA_LOCKFILE_DIR": str(rundir)}


def check_kea(config: str, timeout: float = RUN_S) -> tuple[bool, str]:
    """`kea-dhcp4 -t FILE` on the config text as given (no daemon): (ok, its output)."""
    with tempfile.TemporaryDirectory(prefix="netns-kea-") as tmp:
        path = Path(tmp) / "kea-dhcp4.conf"
        path.write_text(config)
        done = _run([tool("kea-dhcp4"), "-t", str(path)], timeout=timeout, check=False,
                    env={**os.environ, **_kea_env(Path(tmp))})
    return done.returncode == 0, done.stdout + done.stderr


def kea_sandbox(config: dict[str, Any], rundir: Path) -> tuple[dict[str, Any], list[str]]:
    """The config with only the sandbox's paths changed, and what was changed: the memfile lease
    file and the control socket into rundir, every logger's output to stdout. Everything else
    (interfaces, subnets, reservations, options) is kept as given."""
    sandboxed = json.loads(json.dumps(config))
    dhcp4 = sandboxed["Dhcp4"]
    changed = []
    leases = dhcp4.setdefault("lease-database", {"type": "memfile"})
    if leases.get("type") == "memfile":
        leases["name"] = str(rundir / "kea-leases4.csv")
        changed.append("Dhcp4.lease-database.name")
    if "control-socket" in dhcp4:
        dhcp4["control-socket"]["socket-name"] = str(rundir / "kea4-ctrl-socket")
        changed.append("Dhcp4.control-socket.socket-name")
    for number, logger in enumerate(dhcp4.get("loggers", [])):
        for key in ("output_options", "output-options"):
            if key in logger:
                logger[key] = [{"output": "stdout"}]
                changed.append(f"Dhcp4.loggers[{number}].{key}")
    return sandboxed, changed


def start_kea(lab: Lab, short: str, config: dict[str, Any], timeout: float = 15.0) -> Path:
    """kea-dhcp4 in the namespace on the config (after ``kea_sandbox``), checked first with -t;
    waits for DHCP4_STARTED; returns the run directory (the lease file is kea-leases4.csv)."""
    rundir = lab.rundir(short, "kea")
    sandboxed, _ = kea_sandbox(config, rundir)
    path = rundir / "kea-dhcp4.conf"
    path.write_text(json.dumps(sandboxed, indent=2))
    _run([tool("kea-dhcp4"), "-t", str(path)], timeout=timeout, env={**os.environ,
                                                                       **_kea_env(rundir)})
    lab.start(short, "kea-dhcp4", [tool("kea-dhcp4"), "-c", str(path)], env=_kea_env(rundir))
    wait_ready(lab, short, "kea-dhcp4", lambda d: "DHCP4_STARTED" in d.output(), timeout)
    return rundir


# udhcpc runs this at each event ($1: deconfig, bound, renew, leasefail, nak) with the lease in
# its environment; it records the environment and leaves the interface alone.
UDHCPC_SCRIPT = """#!/bin/sh
out="$(dirname "$0")/events"
{ echo "event=$1"; env | grep -E '^(ip|subnet|router|dns|domain|hostname|siaddr|sname|\
boot_file|serverid|lease|mask|interface|opt[0-9]+)=' ; echo; } >> "$out"
"""


def dhcp_client(lab: Lab, short: str, ifname: str, timeout: float = 20.0,
                options: Sequence[str] = ()) -> dict[str, str]:
    """A DHCP exchange by busybox udhcpc on ifname (-q: exit once bound, -n: exit if none);
    the 'bound' event's variables: ip, subnet, router, siaddr (next-server), boot_file,
    sname, hostname, serverid, lease... LabError if no lease within timeout. ``options``:
    udhcpc's -x OPT:VAL, options the client sends (e.g. '0x5d:0007', option 93 x64 UEFI)."""
    rundir = lab.rundir(short, "udhcpc")
    script = rundir / "script"
    script.write_text(UDHCPC_SCRIPT)
    script.chmod(0o755)
    tries = max(1, int(timeout // 2) - 1)
    done = lab.run(short, tool("busybox"), "udhcpc", "-i", ifname, "-f", "-q", "-n", "-t",
                   str(tries), "-T", "1", "-A", "1", "-s", str(script),
                   *(arg for option in options for arg in ("-x", option)), timeout=timeout,
                   check=False)
    events = (rundir / "events").read_text() if (rundir / "events").exists() else ""
    for block in events.split("\n\n"):
        values = dict(line.split("=", 1) for line in block.splitlines() if "=" in line)
        if values.get("event") == "bound":
            return values
    raise LabError(f"udhcpc on {short} {ifname} got no lease (exit {done.returncode}):\n"
                   f"{done.stdout}{done.stderr}{events}")


# --- cloud-init ---------------------------------------------------------------------------------


def cloud_init_schema(user_data: str, timeout: float = RUN_S) -> tuple[bool, str]:
    """`cloud-init schema -c FILE` (cloud-init 22.4: -c/--config-file) on user-data text:
    (ok, its message). cloud-init 22.4 accepts unknown top-level keys; it rejects a file not
    starting with '#cloud-config', YAML errors and wrong types of the keys it knows."""
    with tempfile.TemporaryDirectory(prefix="netns-cloud-init-") as tmp:
        path = Path(tmp) / "user-data"
        path.write_text(user_data)
        done = _run([tool("cloud-init"), "schema", "-c", str(path)], timeout=timeout,
                    check=False)
    return done.returncode == 0, (done.stdout + done.stderr).strip()



# cloud-init's own reading of a network-config (version 2), as its init stage does before it
# renders the system's configuration: its YAML loader, the network state's parser with nothing
# broken skipped, and the netplan renderer's text; run by the Python cloud-init is installed for.
# One Python reads a list of them (a JSON list on stdin; out: [ok, text or traceback] per
# config): each config is parsed on its own, as a Python of its own would, and the interpreter
# starts and imports cloudinit once (about 0.25 s of CPU per start, 290 seeds in the examples)
CLOUD_INIT_NETWORK = """import json, sys, traceback
from cloudinit import util
from cloudinit.net import netplan, network_state
answers = []
for text in json.load(sys.stdin):
    try:
        config = util.load_yaml(text)
        state = network_state.parse_net_config_data(config["network"], skip_broken=False)
        answers.append([True, netplan.Renderer()._render_content(state)])
    except Exception:
        answers.append([False, traceback.format_exc()])
json.dump(answers, sys.stdout)
"""


def cloud_init_network_config(text: str, timeout: float = RUN_S) -> tuple[bool, str]:
    """cloud-init 22.4 parsing a network-config (its ``cloud-init schema`` has no network
    schema): (ok, the netplan text it would write, or its error)."""
    return cloud_init_network_configs([text], timeout)[0]


def cloud_init_network_configs(texts: Sequence[str], timeout: float | None = None
                               ) -> list[tuple[bool, str]]:
    """cloud_init_network_config for each text, in one run of cloud-init's Python (bounded by
    RUN_S and a second more per text unless ``timeout`` is given)."""
    timeout = RUN_S + len(texts) if timeout is None else timeout
    python = Path(tool("cloud-init")).read_text().splitlines()[0].removeprefix("#!").split()[0]
    done = subprocess.run([python, "-c", CLOUD_INIT_NETWORK], input=json.dumps(list(texts)),
                          capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode != 0:  # the reader itself failed: every config with its output
        return [(False, (done.stdout + done.stderr).strip())] * len(texts)
    return [(ok, message.strip()) for ok, message in json.loads(done.stdout)]


def netplan_generate(config: str, root: Path, timeout: float = RUN_S
                     ) -> tuple[bool, dict[str, str]]:
    """netplan (the renderer cloud-init hands a version 2 network-config to unchanged) reading
    ``config`` as /etc/netplan/50-cloud-init.yaml under ``root`` (``netplan generate
    --root-dir``: it writes under root only, applies nothing): (ok, the systemd-networkd
    files it wrote by name), or (False, {'error': its output})."""
    folder = root / "etc" / "netplan"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "50-cloud-init.yaml"
    path.write_text(config)
    path.chmod(0o600)  # netplan warns of a configuration others can read
    done = subprocess.run([tool("netplan"), "generate", "--root-dir", str(root)],
                          capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode != 0:
        return False, {"error": (done.stdout + done.stderr).strip()}
    out = root / "run" / "systemd" / "network"
    return True, {p.name: p.read_text() for p in sorted(out.iterdir())} if out.is_dir() else {}

# --- ifupdown2 ----------------------------------------------------------------------------------

# ifupdown2 3.0 (Debian 12) keeps a lock at the fixed path /run/network/.lock (taken without
# waiting: a second run anywhere on the machine fails "Another instance of this program is
# already running", also printed when /run/network is missing) and its interface state in
# state_dir=/var/tmp/network/ (ifupdown2.conf), one per machine: namespaces would share both.
# ifreload has no -i: it reads /etc/network/interfaces. So each run gets a private mount
# namespace in which the namespace's own run directory is bound over /run and /var/tmp and its
# interfaces file over /etc/network/interfaces; the machine's files are neither touched nor seen.
IFUPDOWN2_SANDBOX = ("mount --bind \"$1/run\" /run && mkdir -p /run/network && "
                     "mount --bind \"$1/var-tmp\" /var/tmp && "
                     "mount --bind \"$1/interfaces\" /etc/network/interfaces && "
                     "shift && exec \"$@\"")


def ifupdown2(lab: Lab, short: str, interfaces: str, *command: str, timeout: float = RUN_S
              ) -> subprocess.CompletedProcess[str]:
    """Apply an /etc/network/interfaces-style text in the namespace with ifupdown2:
    command is ('ifup', '-a') by default, or e.g. ('ifreload', '-a'), ('ifquery', '-a', '-c'),
    reading the text as /etc/network/interfaces. State persists between calls of one lab."""
    rundir = lab.rundir(short, "ifupdown2")
    for sub in ("run", "var-tmp"):
        (rundir / sub).mkdir(exist_ok=True)
    path = rundir / "interfaces"
    path.write_text(interfaces)
    program, *args = command or ("ifup", "-a")
    return lab.run(short, "unshare", "-m", "--propagation", "private", "sh", "-c",
                   IFUPDOWN2_SANDBOX, "ifupdown2", str(rundir), tool(program), *args,
                   timeout=timeout)
