"""The GPU nodes' side of a routed RoCE fabric (plan/host_rails.py): each RoCE NIC the odd end
of its leaf port's /31, its own routing table and source rule, in the node's cloud-init
network-config (emit/cloud_init.py); the checks ROCE-HOST-OVERLAP and ROCE-HOST-UNCONFIGURED.
tests/real/test_roce_hosts_real.py brings them up with netplan and over real FRR."""

from __future__ import annotations

import json
from ipaddress import IPv4Address, IPv4Network
from pathlib import Path

from click.testing import CliRunner

from cluster_iac.checks import run_checks
from cluster_iac.cli.main import main
from cluster_iac.lock.trailer import sealed, unsealed
from cluster_iac.plan.host_rails import MAIN_RULE, host_rails, rail_config
from cluster_iac.render import build
from tests.conftest import example_build

EXAMPLE = "spectrum-x-roce"
ROOT = Path(__file__).parents[1]
SPEC = (ROOT / "examples" / f"{EXAMPLE}.yaml").read_text()


def _spec(tmp_path: Path, old: str, new: str) -> Path:
    assert old in SPEC
    path = tmp_path / "c.yaml"
    path.write_text(SPEC.replace(old, new))
    return path


def test_each_rail_is_the_host_end_of_its_leaf_port() -> None:
    plan = example_build(EXAMPLE).plan
    rails = host_rails(plan)
    assert len(rails) == 32 and {len(r) for r in rails.values()} == {8}
    ports = {(p.peer, p.peer_port): (c.name, p) for c in plan.switch_configs.values()
             if c.role == "leaf" for p in c.host_ports}
    for host, nics in rails.items():
        assert [r.rail for r in nics] == list(range(8))
        assert [r.interface for r in nics] == [f"rdma{i}" for i in range(8)]
        assert [r.device for r in nics] == [f"mlx5_{i}" for i in range(8)]
        assert [r.table for r in nics] == list(range(101, 109))
        assert [r.priority for r in nics] == list(range(1010, 1090, 10))
        assert all(r.priority < MAIN_RULE for r in nics)
        for rail in nics:
            leaf, port = ports[host, rail.interface]
            assert (rail.leaf, rail.leaf_port, rail.mtu) == (leaf, port.name, 9000)
            # one /31: the leaf the even end, the host the odd one
            assert rail.address == f"{port.peer_address}/31"
            assert IPv4Network(rail.address, strict=False) == IPv4Network(port.address,
                                                                          strict=False)
            assert int(IPv4Address(rail.gateway)) % 2 == 0
            assert rail.gateway == port.address.partition("/")[0]
            assert IPv4Network(rail.address, strict=False).subnet_of(IPv4Network(rail.fabric))
    # rail-optimized: a node's eight NICs on eight leaves
    assert all(len({r.leaf for r in nics}) == 8 for nics in rails.values())
    addresses = [r.address for nics in rails.values() for r in nics]
    assert len(set(addresses)) == len(addresses) == 256


def test_the_network_config_holds_every_rail() -> None:
    built = example_build(EXAMPLE)
    rails = host_rails(built.plan)
    rows = [json.loads(line) for line in built.files["cloud-init/seeds/h200.jsonl"].splitlines()]
    assert len(rows) == 32
    for row in rows:
        ethernets = row["network-config"]["network"]["ethernets"]
        nics = rails[row["hostname"]]
        assert sorted(ethernets) == sorted(["eth0", *(r.interface for r in nics)])
        for rail in nics:
            assert ethernets[rail.interface] == rail_config(rail)
    gpu01 = rows[0]["network-config"]["network"]["ethernets"]["rdma1"]
    assert gpu01 == {"match": {"name": "enp64s0*"}, "set-name": "rdma1",  # test_rail_nics.py
                     "addresses": ["10.254.1.1/31"], "mtu": 9000,
                     "routes": [{"to": "10.254.0.0/15", "via": "10.254.1.0", "table": 102}],
                     "routing-policy": [{"from": "10.254.1.1", "table": 102, "priority": 1020}]}
    # the controller is on no leaf: its network-config has no rail
    head = json.loads(built.files["cloud-init/seeds/head.jsonl"].splitlines()[0])
    assert list(head["network-config"]["network"]["ethernets"]) == ["eth0"]


def test_infiniband_and_storage_only_fabrics_have_no_rails() -> None:
    assert host_rails(example_build("seed-64gpu-h100").plan) == {}
    # the SuperPOD's Ethernet fabric is storage: its compute fabric is InfiniBand
    assert host_rails(example_build("dgx-h100-superpod-4su").plan) == {}


def test_the_rails_follow_the_leaf_blocks_the_lock_keeps(tmp_path: Path) -> None:
    """A leaf's p2p line moved in the lock moves its hosts' addresses with it, and only
    theirs: the host side is the lock's identity read from the other end."""
    lock = (ROOT / "examples" / f"{EXAMPLE}.lock").read_text()
    line = "p2p compute eth-leaf-su1-r1 10.254.0.0\n"
    assert line in lock
    spec = tmp_path / "c.yaml"
    spec.write_text(SPEC)
    moved_line = "p2p compute eth-leaf-su1-r1 10.255.128.0\n"  # a free block of the pool
    (tmp_path / "c.lock").write_text(sealed(unsealed(lock).replace(line, moved_line)))
    before = host_rails(example_build(EXAMPLE).plan)
    after = host_rails(build(spec, lock_file=tmp_path / "c.lock").plan)
    moved = {(h, r.interface) for h, nics in after.items() for r in nics
             if r.address != next(b.address for b in before[h] if b.rail == r.rail)}
    assert moved == {(f"gpu-{n:02d}", "rdma0") for n in range(1, 17)}
    assert after["gpu-01"][0].address == "10.255.128.1/31"
    assert after["gpu-01"][0].gateway == "10.255.128.0"


def _where(spec: Path, value: str) -> tuple[int, int]:
    """The line and column (from 1) of the p2p_pool's value in the spec's text."""
    lines = spec.read_text().splitlines()
    line = next(n for n, text in enumerate(lines, 1) if "p2p_pool" in text)
    return line, lines[line - 1].index(value) + 1


def _validate(spec: Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["validate", str(spec)])
    return result.exit_code, result.output


def test_a_pool_overlapping_the_management_network_is_located(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "underlay: {bgp: unnumbered}",
                 "underlay: {bgp: unnumbered, p2p_pool: 10.60.0.0/16}")
    code, output = _validate(spec)
    line, column = _where(spec, "10.60.0.0/16")
    assert code == 1
    assert (f"{spec}:{line}:{column}: error[ROCE-HOST-OVERLAP] fabric.compute.underlay.p2p_pool "
            "10.60.0.0/16 overlaps networks.management.cidr 10.60.0.0/24 (256 address(es) in "
            "both)") in output, output
    assert "hint: give underlay.p2p_pool a range outside 10.60.0.0/24" in output
    # the hint works: a pool outside the management network validates
    fixed = _spec(tmp_path, "underlay: {bgp: unnumbered}",
                  "underlay: {bgp: unnumbered, p2p_pool: 10.62.0.0/16}")
    code, output = _validate(fixed)
    assert code == 0 and "ROCE-HOST" not in output, output


def test_no_management_network_leaves_the_rails_unconfigured(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "networks:\n  management: {cidr: 10.60.0.0/24}\n", "")
    code, output = _validate(spec)
    assert "warning[ROCE-HOST-UNCONFIGURED] 32 of 32 GPU node(s) on the RoCE fabric" in output
    assert not [f for f in run_checks(example_build(EXAMPLE).plan)
                if f.code.startswith("ROCE-HOST")]


def test_a_pool_too_small_for_the_host_links_is_located(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "underlay: {bgp: unnumbered}",
                 "underlay: {bgp: unnumbered, p2p_pool: 10.254.0.0/24}")
    code, output = _validate(spec)
    line, column = _where(spec, "10.254.0.0/24")
    assert code == 1
    assert (f"{spec}:{line}:{column}: error[FABRIC-POOL-EXHAUSTED] "
            "fabric.compute.underlay.p2p_pool 10.254.0.0/24 holds 1 block(s) of 256 "
            "address(es)") in output, output
    assert "hint: give underlay.p2p_pool a /20 or larger prefix" in output
