"""Real OpenSM on every example's InfiniBand fabrics, simulated by ibsim: the generated
topology loads, OpenSM brings the subnet up with the generated opensm.conf and partitions.conf
using the routing engine the file asks for and logs no ERR; routes read back with ibtracert
for sampled pairs of same-rail hosts cross the planned number of switches; and a broken
fabric (a missing uplink, a leaf cabled to the wrong spine) fails the check."""

from __future__ import annotations

from pathlib import Path

import pytest

from cluster_iac.emit.subnet_manager import render
from cluster_iac.formats.ibnetdiscover import IbEnd, Topology, parse, topology_text
from cluster_iac.plan import Plan
from cluster_iac.plan.subnet import infiniband_fabrics, routing, topology
from tests.conftest import EXAMPLE_IDS, example_build
from tests.real.ibsim_harness import Simulator, lids, log_problems, pkeys

pytestmark = pytest.mark.real

FABRICS = [(name, network) for name in EXAMPLE_IDS
           for network in infiniband_fabrics(example_build(name).plan)]


def _planned_switches(plan: Plan, network: str, a: str, b: str, nic: int) -> int:
    """Switches on a minimal route between NIC ``nic`` of hosts a and b (same rail): one
    when they share the leaf, three through a spine both leaves reach, five through a core."""
    up = plan.fabric_wiring[network].up
    ports = _host_ports(plan, network)
    leaf_a, leaf_b = ports[a][nic][1], ports[b][nic][1]
    if leaf_a == leaf_b:
        return 1
    return 3 if set(up[leaf_a]) & set(up[leaf_b]) else 5


def _host_ports(plan: Plan, network: str) -> dict[str, list[tuple[str, str]]]:
    """Each host's ports on the fabric, with the leaf each is cabled to, in NIC order."""
    ports: dict[str, list[tuple[str, str]]] = {}
    wiring = plan.fabric_wiring[network]
    for link in plan.links.rows():
        if link.network == network and wiring.tier.get(link.a_device) == "node":
            ports.setdefault(link.a_device, []).append((link.a_port, link.b_device))
    return ports


def _samples(plan: Plan, network: str) -> list[tuple[str, str, int]]:
    """Pairs of hosts with the same NIC count: the first with its neighbour (same leaf), with
    the middle one and with the last (other leaves, other scalable units), on the first and
    last NIC."""
    ports = _host_ports(plan, network)
    hosts = [h for h in ports if len(ports[h]) == len(ports[next(iter(ports))])]
    first = hosts[0]
    nics = sorted({0, len(ports[first]) - 1})
    return [(first, other, nic) for other in dict.fromkeys(hosts[1:2] + hosts[len(hosts) // 2:
                                                            len(hosts) // 2 + 1] + hosts[-1:])
            for nic in nics if other != first]


@pytest.mark.parametrize(("name", "network"), FABRICS, ids=[f"{n}-{f}" for n, f in FABRICS])
def test_opensm_brings_the_fabric_up_as_planned(name: str, network: str,
                                                tmp_path: Path) -> None:
    plan = example_build(name).plan
    files = render(plan)
    folder = f"opensm/{network}"
    engine = routing(plan, network).engine
    assert f"routing_engine {engine}\n" in files[f"{folder}/opensm.conf"]
    with Simulator(files[f"{folder}/topology.ibnetdiscover"], tmp_path) as sim:
        log = sim.opensm(files[f"{folder}/opensm.conf"], files[f"{folder}/partitions.conf"])
        assert log_problems(log, engine) == []
        found = lids(sim.discover())
        ports = _host_ports(plan, network)
        samples = _samples(plan, network)
        assert samples
        for a, b, nic in samples:
            route = sim.trace(found[f"{a} {ports[a][nic][0]}"], found[f"{b} {ports[b][nic][0]}"])
            assert len(route) == _planned_switches(plan, network, a, b, nic), (a, b, nic, route)
        _assert_partitions(plan, network, sim, found)


def _assert_partitions(plan: Plan, network: str, sim: Simulator, found: dict[str, int]) -> None:
    """OpenSM put each declared partition key (full member: 0x8000 set) in the P_Key table
    of every adapter of the Slurm partition's nodes, and in no other adapter's; every
    adapter has the default partition's 0xffff."""
    manager = getattr(plan.settings.fabric, network).subnet_manager
    keys = dict(manager.partition_keys) if manager is not None else {}
    nodes = {part.name: set(part.nodes) for part in plan.partitions}
    for description, lid in sorted(found.items())[:: max(1, len(found) // 24)]:
        table = pkeys(sim, lid)
        host = description.partition(" ")[0]
        want = {0xFFFF} | {0x8000 | key for name, key in keys.items() if host in nodes[name]}
        assert table == want, (description, sorted(map(hex, table)))


def _small_fat_tree() -> tuple[Plan, str]:
    for name, network in FABRICS:
        plan = example_build(name).plan
        if routing(plan, network).engine == "ftree":
            return plan, network
    raise AssertionError("no example has a fat tree")


def _uplinks(top: Topology) -> list[tuple[IbEnd, IbEnd]]:
    switch = {i for i, n in top.nodes.items() if n.kind == "Switch"}
    return [(a, b) for a, b in top.pairs() if a.node_id in switch and b.node_id in switch]


def _missing_uplink(top: Topology) -> Topology:
    a, b = _uplinks(top)[0]
    del top.links[a], top.links[b]
    return top


def _leaf_to_wrong_spine(top: Topology) -> Topology:
    """Two leaves' cables to two spines crossed: leaf 1's to spine 1 lands on spine 2's port,
    and leaf 2's to spine 2 on spine 1's (every port still used once)."""
    ups = _uplinks(top)
    first = ups[0]
    leaf_1, spine_1 = sorted(first, key=lambda e: top.nodes[e.node_id].description)
    for a, b in ups:
        leaf_2, spine_2 = sorted((a, b), key=lambda e: top.nodes[e.node_id].description)
        if leaf_2.node_id != leaf_1.node_id and spine_2.node_id != spine_1.node_id:
            break
    for end in (leaf_1, spine_1, leaf_2, spine_2):
        del top.links[end]
    top.add_link(leaf_1, spine_2)
    top.add_link(leaf_2, spine_1)
    return top


@pytest.mark.parametrize("broken", [_missing_uplink, _leaf_to_wrong_spine])
def test_a_broken_fat_tree_fails_the_check(broken: object, tmp_path: Path) -> None:
    plan, network = _small_fat_tree()
    files = render(plan)
    folder = f"opensm/{network}"
    top = broken(parse(topology_text(topology(plan, network))))  # type: ignore[operator]
    with Simulator(topology_text(top), tmp_path) as sim:
        log = sim.opensm(files[f"{folder}/opensm.conf"], files[f"{folder}/partitions.conf"])
    problems = log_problems(log, "ftree")
    # OpenSM says the fabric is no fat tree and routes it with min-hop instead, exiting 0
    assert any("ERR AB0D" in line for line in problems), problems
    assert "asked for ftree, the log says ['minhop'] routed" in problems
