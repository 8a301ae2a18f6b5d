"""The compute hosts' side of the routed RoCE fabric (plan/host_rails.py, emit/cloud_init.py),
brought up from what the tool writes: examples/spectrum-x-roce.yaml's GPU nodes' cloud-init
network-config (cloud-init/seeds/h200.jsonl, one host a line).

- netplan, the renderer cloud-init hands a version 2 network-config to unchanged, reads every
  node's network-config and writes each RoCE NIC's systemd-networkd file: its /31, MTU, the
  route in the rail's own table and the source rule; a misspelt key is refused (so it reads
  what it is given, not around it).
- In network namespaces (tests/real/netns.py): two GPU nodes of different scalable units, so
  each rail's NIC of one is on another leaf than the other's, the leaves of two rails of both
  units and every spine, a veth pair per planned cable among them; the switches run their
  generated ifupdown2 interfaces and frr.conf. Each host namespace is configured from its
  generated network-config alone (parsed: addresses, MTU, routes with their table, rules),
  never from harness-made addresses. Then a ping from each tested rail's address of one node
  to the other node's same rail crosses leaf, spine and leaf (a full 9000-byte frame); the
  kernel sends what rail N's address sends out NIC N, by rail N's table, whatever the
  destination, and a packet sent from rail 1's address to the other node's rail 0 leaves
  by rail 1 and is answered.
"""

from __future__ import annotations

import fnmatch
import json
from io import StringIO
from ipaddress import IPv4Network
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from cluster_iac.render import build
from tests.real import netns
from tests.real.netns import Lab

pytestmark = pytest.mark.real

EXAMPLE = Path(__file__).parents[2] / "examples" / "spectrum-x-roce.yaml"
SEEDS = "cloud-init/seeds/h200.jsonl"
RAILS = ("rdma0", "rdma1")  # the rails the lab cables: two, so one can reach the other's
# all a RoCE NIC's entry holds
RAIL_KEYS = {"match", "set-name", "addresses", "mtu", "routes", "routing-policy"}
# what the OS names the lab's rails before the entries rename them: the DGX H100/H200 user
# guide's InfiniBand names of the same NICs (ibp24s0, ibp64s0) in Ethernet mode, with the
# port name mlx5 gives (systemd.net-naming-scheme(7): en, path, n<phys_port_name>)
OS_NAMES = {"rdma0": "enp24s0np0", "rdma1": "enp64s0np0"}


@pytest.fixture(scope="module")
def built() -> Any:
    return build(EXAMPLE, lock_file=EXAMPLE.with_suffix(".lock"))


def _network_configs(files: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Each host's network-config, as the seed table holds it."""
    rows = [json.loads(line) for line in files[SEEDS].splitlines()]
    return {row["hostname"]: row["network-config"] for row in rows}


def _yaml(data: Any) -> str:
    out = StringIO()
    YAML(typ="safe", pure=True).dump(data, out)
    return out.getvalue()


def test_netplan_writes_every_rail_of_every_node(built: Any, tmp_path: Path) -> None:
    """Each node's network-config through netplan generate: one systemd-networkd file per RoCE
    NIC with its address, MTU, its table's route through its leaf and its source rule, and
    one link file renaming the NIC the OS names by its PCI path to the rail's name."""
    netns.require("netplan")
    configs = _network_configs(built.files)
    assert len(configs) == 32
    for number, (host, config) in enumerate(sorted(configs.items())):
        rails = {k: v for k, v in config["network"]["ethernets"].items() if k.startswith("rdma")}
        assert sorted(rails) == [f"rdma{i}" for i in range(8)], host
        ok, written = netns.netplan_generate(_yaml(config), tmp_path / str(number))
        assert ok, f"{host}: {written}"
        for name, rail in rails.items():
            text = written[f"10-netplan-{name}.network"]
            route, rule = rail["routes"][0], rail["routing-policy"][0]
            assert f"Address={rail['addresses'][0]}\n" in text
            assert (f"[Route]\nDestination={route['to']}\nGateway={route['via']}\n"
                    f"Table={route['table']}\n") in text, text
            assert (f"[RoutingPolicyRule]\nFrom={rule['from']}\nTable={rule['table']}\n"
                    f"Priority={rule['priority']}\n") in text, text
            link = written[f"10-netplan-{name}.link"]
            assert f"MTUBytes={rail['mtu']}\n" in link
            # the rename: udev gives the NIC the OS names so (its PCI path name) the rail's
            assert (f"[Match]\nOriginalName={rail['match']['name']}\n\n[Link]\n"
                    f"Name={name}\n") in link, link
    # netplan checks what it reads: the same file with one key misspelt is refused
    config = configs["gpu-01"]
    rail = config["network"]["ethernets"]["rdma0"]
    rail["routing-policies"] = rail.pop("routing-policy")
    ok, written = netns.netplan_generate(_yaml(config), tmp_path / "misspelt")
    assert not ok and "routing-policies" in written["error"], written


def test_cloud_init_hands_each_rails_rename_to_netplan(built: Any) -> None:
    """cloud-init 22.4's own network reader (its init stage's, before netplan renders) keeps
    each rail's match and set-name: the NIC the OS names by its PCI path is renamed."""
    netns.require("cloud-init")
    configs = _network_configs(built.files)
    ok, text = netns.cloud_init_network_config(_yaml(configs["gpu-01"]))
    assert ok, text
    ethernets = YAML(typ="safe").load(text)["network"]["ethernets"]
    rails = configs["gpu-01"]["network"]["ethernets"]
    for name in (f"rdma{i}" for i in range(8)):
        assert ethernets[name]["match"] == rails[name]["match"], ethernets[name]
        assert ethernets[name]["set-name"] == name
    assert ethernets["rdma0"]["match"] == {"name": "enp24s0*"}


def _apply(lab: Lab, host: str, config: dict[str, Any], cabled: set[str]) -> None:
    """A host's network-config applied with ip, each cabled RoCE NIC's entry whole: the
    lab's interface first given the name the OS gives the NIC, then found by the entry's
    match (netplan's shell glob, the only interface it matches) and renamed to its
    set-name, as netplan does."""
    for name in sorted(cabled):
        lab.ip(host, "link", "set", "dev", name, "down")
        lab.ip(host, "link", "set", "dev", name, "name", OS_NAMES[name])
    for name, entry in config["network"]["ethernets"].items():
        if name not in cabled:
            continue
        assert set(entry) == RAIL_KEYS, entry  # nothing in it left unapplied
        links = [link["ifname"] for link in json.loads(lab.ip(host, "-j", "link", "show"))]
        found = fnmatch.filter(links, entry["match"]["name"])
        assert found == [OS_NAMES[name]], (entry["match"], links)
        lab.ip(host, "link", "set", "dev", found[0], "name", entry["set-name"])
        lab.ip(host, "link", "set", "dev", entry["set-name"], "up")
        lab.mtu(host, name, entry["mtu"])
        for cidr in entry["addresses"]:
            lab.address(host, name, cidr)
        for route in entry["routes"]:
            lab.route(host, route["to"], "via", route["via"], "dev", name,
                      "table", str(route["table"]))
        for rule in entry["routing-policy"]:
            lab.ip(host, "rule", "add", "from", rule["from"], "table", str(rule["table"]),
                   "priority", str(rule["priority"]))


def _addresses(plan: Any, leaf: str) -> set[str]:
    return {p.address.partition("/")[0] for p in plan.switch_configs[leaf].host_ports}


def _wait_next_hops(lab: Lab, switch: str, prefix: str, want: int) -> None:
    """Until the kernel of switch has ``want`` next hops for prefix (BGP converged)."""
    netns.wait_for(f"{want} next hops for {prefix} on {switch}",
                   lambda: len(netns.kernel_next_hops(lab, switch, prefix)) >= want or None, 90)


def _route_get(lab: Lab, host: str, to: str, source: str) -> dict[str, Any]:
    routes: list[dict[str, Any]] = json.loads(lab.ip(host, "-j", "route", "get", to,
                                                     "from", source))
    return routes[0]


def test_hosts_reach_each_other_rail_by_rail_from_their_network_config(
        built: Any, tmp_path: Path) -> None:
    netns.require("ip", "zebra", "bgpd", "vtysh", "ifup", "unshare", "busybox")
    plan, files = built.plan, built.files
    wiring = plan.fabric_wiring["compute"]
    by_unit: dict[int, list[str]] = {}
    for name, tier in wiring.tier.items():
        if tier == "node":
            by_unit.setdefault(wiring.su[name], []).append(name)
    first, second = (sorted(by_unit[su])[0] for su in sorted(by_unit)[:2])
    configs = _network_configs(files)
    hosts = {first: configs[first], second: configs[second]}
    leaves = sorted({c.name for c in plan.switch_configs.values() if c.fabric == "compute"
                     and c.role == "leaf" and any(p.peer in hosts and p.peer_port in RAILS
                                                  for p in c.host_ports)})
    assert len(leaves) == 2 * len(RAILS)  # each rail of each node on its own leaf
    spines = sorted(n for n, c in plan.switch_configs.items()
                    if c.fabric == "compute" and c.role != "leaf")
    switches = [*leaves, *spines]
    inside = set(switches)
    cables = plan.cables
    links = [(a, a_port, b, b_port) for net, a, a_port, b, b_port in zip(
        cables.network, cables.a_device, cables.a_port, cables.b_device, cables.b_port,
        strict=True) if net == "compute" and b in inside and (a in inside or (
            a in hosts and a_port in RAILS))]
    with Lab([*switches, *hosts]) as lab:
        netns.start_fabric(lab, links, switches, files)
        for host, config in hosts.items():
            _apply(lab, host, config, set(RAILS))
        for name in switches:
            sessions = [n.interface for n in plan.switch_configs[name].bgp.neighbors
                        if n.peer in inside]
            netns.wait_bgp_established(lab, name, sessions, timeout=90)
        rails = {host: config["network"]["ethernets"] for host, config in hosts.items()}

        def address(host: str, rail: str) -> str:
            return str(rails[host][rail]["addresses"][0].partition("/")[0])

        for leaf in leaves:  # converged: every other leaf's host links over every uplink
            want = len(plan.switch_configs[leaf].uplinks)
            for host in hosts:
                for rail in RAILS:
                    prefix = str(IPv4Network(rails[host][rail]["addresses"][0], strict=False))
                    if rails[host][rail]["routes"][0]["via"] not in _addresses(plan, leaf):
                        _wait_next_hops(lab, leaf, prefix, want)
        for here, there in ((first, second), (second, first)):
            for rail in RAILS:
                table = rails[here][rail]["routes"][0]["table"]
                got = _route_get(lab, here, address(there, rail), address(here, rail))
                assert (got["dev"], got.get("table")) == (rail, str(table)), got
                assert got["gateway"] == rails[here][rail]["routes"][0]["via"], got
                # a full frame: the ICMP payload is the MTU less IPv4's 20 and ICMP's 8 bytes
                frame = rails[here][rail]["mtu"] - 28
                netns.resolve_neighbours(lab, here, address(here, rail), address(there, rail))
                ping = lab.run(here, "busybox", "ping", "-c", "2", "-W", "2", "-s", str(frame),
                               "-I", address(here, rail), address(there, rail), timeout=20)
                assert " 0% packet loss" in ping.stdout, (here, rail, ping.stdout)
        # rail 1's source decides, not the destination: to the other node's rail 0 it still
        # leaves by rdma1 (rail 1's leaf, a spine, then rail 0's leaf), and the answer returns
        got = _route_get(lab, first, address(second, "rdma0"), address(first, "rdma1"))
        assert got["dev"] == "rdma1", got
        netns.resolve_neighbours(lab, first, address(first, "rdma1"), address(second, "rdma0"))
        sent = _tx_packets(lab, first, "rdma1")
        ping = lab.run(first, "busybox", "ping", "-c", "2", "-W", "2",
                       "-I", address(first, "rdma1"), address(second, "rdma0"), timeout=20)
        assert " 0% packet loss" in ping.stdout, ping.stdout
        assert _tx_packets(lab, first, "rdma1") >= sent + 2  # the echo requests went by rdma1


def _tx_packets(lab: Lab, host: str, ifname: str) -> int:
    links = json.loads(lab.ip(host, "-j", "-s", "link", "show", ifname))
    return int(links[0]["stats64"]["tx"]["packets"])
