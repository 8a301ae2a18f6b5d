"""Compute and storage fabrics: sizes against NVIDIA's published tables, wiring, port accounting."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from typing import Any

import pytest

from cluster_iac.base.errors import CompileError
from cluster_iac.plan import Plan
from cluster_iac.plan.fattree import size_fat_tree
from tests.conftest import example_build
from tests.facility_fixtures import compile_data, example_data


def superpod_spec(sus: int, nodes_per_su: int = 32, **fabric: Any) -> dict[str, Any]:
    """A DGX H100 SuperPOD of ``sus`` scalable units: four DGX per rack, switches in
    network racks, no management networks (they are not what these tests measure)."""
    nodes = sus * nodes_per_su
    racks = -(-nodes // 4)
    net_racks = 8
    compute = {"technology": "infiniband", "design": "rail-optimized", "leaf_switch": "qm9700",
               "scalable_unit_nodes": 32, "racks": f"net[1-{net_racks}]", **fabric}
    return {
        "cluster": {"name": "superpod", "slurm_version": "22.05"},
        "node_types": {"dgx": {"platform": "dgx-h100"}, "head": {"platform": "mgmt-1u"}},
        "node_groups": [{"name": "dgx", "node_type": "dgx", "count": nodes,
                         "hostname": "dgx-#####", "racks": f"r[1-{racks}]", "per_rack": 4},
                        {"name": "head", "role": "controller", "node_type": "head", "count": 1,
                         "hostname": "head#", "racks": "net1"}],
        "rows": [{"name": "a", "racks": [
            {"names": f"r[1-{racks}]", "height_u": 48, "pdu": "p"},
            {"names": f"net[1-{net_racks}]", "height_u": 52, "pdu": "p"}]}],
        "power": {"pdu_profiles": {"p": {"layout": "three", "voltage_v": 415, "phases": 3,
                                         "breaker_a": 32, "rated_100_percent": True,
                                         "outlets": 120}}},
        "fabric": {"compute": compute},
        "slurm": {"partitions": [{"name": "batch", "node_groups": ["dgx"]}]},
    }


# NVIDIA DGX SuperPOD reference architectures, "Compute fabric component count" tables:
# DGX H100 RA (1-4 SUs; its node-leaf column counts 31 nodes + the UFM's 4 ports in SU 1,
# here every SU is full: 32 nodes x 8 rails) and DGX B200 RA (same QM9700, 32-node SU,
# 8 rails; 8 and 16 SUs). SUs: (leaf, spine, core, node-leaf, leaf-spine, spine-core).
SUPERPOD = {
    1: (8, 4, 0, 256, 256, 0),
    2: (16, 8, 0, 512, 512, 0),
    3: (24, 16, 0, 768, 768, 0),
    4: (32, 16, 0, 1024, 1024, 0),
    8: (64, 32, 0, 2048, 2048, 0),
    16: (128, 128, 64, 4096, 4096, 4096),
}


@pytest.mark.parametrize("sus", sorted(SUPERPOD))
def test_superpod_counts_match_nvidia_reference(sus: int) -> None:
    plan = compile_data(superpod_spec(sus))
    fabric = plan.fabrics["compute"]
    leaf, spine, core, node_leaf, leaf_spine, spine_core = SUPERPOD[sus]
    assert fabric.switch_counts == {k: v for k, v in
                                    (("leaf", leaf), ("spine", spine), ("core", core)) if v}
    assert fabric.link_counts == {k: v for k, v in (("node-leaf", node_leaf),
                                                    ("leaf-spine", leaf_spine),
                                                    ("spine-core", spine_core)) if v}
    assert fabric.tiers == (3 if core else 2)
    graph = plan.fabric_wiring["compute"].graph
    by_tier: Counter[str] = Counter()
    for _u, _v, d in graph.edges(data=True):
        by_tier[d["tier"]] += d["links"]
    assert by_tier == fabric.link_counts
    links = plan.links
    assert Counter(t for n, t in zip(links.network, links.tier, strict=True)
                   if n == "compute") == by_tier
    _assert_ports_accounted(plan)
    _assert_uplinks_even(plan)
    _assert_rails(plan)


def test_127_node_superpod_leaves_the_missing_node_ports_spare() -> None:
    """The RA's 4-SU SuperPOD has 127 DGX: the fabric is still built for four whole SUs."""
    plan = example_build("dgx-h100-superpod-4su").plan
    fabric = plan.fabrics["compute"]
    assert fabric.switch_counts == {"leaf": 32, "spine": 16}
    assert fabric.link_counts == {"node-leaf": 127 * 8, "leaf-spine": 1024}
    assert fabric.spare_ports == 8  # one DGX position x 8 rails
    assert fabric.oversubscription("leaf") == 1.0


def test_seed_cluster_is_one_hdr_switch_with_eight_links() -> None:
    """Eight GPU nodes' HCAs and the Lustre servers' (1 MDS + 4 OSS, two HDR HCAs each)."""
    plan = example_build("seed-64gpu-h100").plan
    fabric = plan.fabrics["compute"]
    assert fabric.tiers == 1 and fabric.design == "single-switch"
    assert fabric.switch_counts == {"leaf": 1}
    assert fabric.link_counts == {"node-leaf": 8 + 5 * 2}
    (switch,) = [s for s in plan.switches if s.network == "compute"]
    assert switch.model == "qm8700" and switch.port_speed_gbps == 200
    assert fabric.spare_ports == 40 - 18


def test_three_tier_pods_reach_their_core_group() -> None:
    plan = compile_data(superpod_spec(16))
    graph = plan.fabric_wiring["compute"].graph
    cores_of: dict[str, set[str]] = {}
    for spine in (n for n, d in graph.nodes(data=True) if d.get("tier") == "spine"):
        cores_of[spine] = {n for n in graph.neighbors(spine)
                           if graph.nodes[n]["tier"] == "core"}
    groups = {frozenset(cores) for cores in cores_of.values()}
    assert len(groups) == 8 and all(len(g) == 8 for g in groups)  # spine j -> core group j
    assert all(not (a & b) for a in groups for b in groups if a != b)


def test_two_to_one_oversubscription_halves_uplinks() -> None:
    plan = compile_data(superpod_spec(4, oversubscription="2:1"))
    fabric = plan.fabrics["compute"]
    assert fabric.link_counts["leaf-spine"] == 512
    assert fabric.oversubscription("leaf") == 2.0
    assert fabric.switch_counts == {"leaf": 32, "spine": 8}


def test_plain_fabric_puts_all_nics_of_a_node_on_one_leaf() -> None:
    data = superpod_spec(2, design="plain")
    plan = compile_data(data)
    graph = plan.fabric_wiring["compute"].graph
    for node in plan.compute_nodes:
        assert len({v for _u, v in graph.edges(node.hostname)}) == 1
    fabric = plan.fabrics["compute"]
    assert fabric.switch_counts["leaf"] == 16  # 64 nodes x 8 NICs / 32 downlinks
    _assert_ports_accounted(plan)
    _assert_uplinks_even(plan)


def test_storage_fabric_of_the_superpod_example() -> None:
    plan = example_build("dgx-h100-superpod-4su").plan
    storage = plan.fabrics["storage"]
    graph = plan.fabric_wiring["storage"].graph
    hosts = {n for n, d in graph.nodes(data=True) if d["kind"] == "node"}
    expected = {n.hostname for n in plan.nodes
                if plan.node_types[n.node_type].nic_count("storage")}
    assert hosts == expected
    assert storage.link_counts["node-leaf"] == sum(
        plan.node_types[n.node_type].nic_count("storage") for n in plan.nodes)
    _assert_ports_accounted(plan, "storage")


def test_mixed_speeds_use_the_slower_end() -> None:
    plan = example_build("mixed-a100-h100").plan
    graph = plan.fabric_wiring["compute"].graph
    speeds = {(u if u.startswith(("a100", "h100")) else v)[:4]: d["speed_gbps"]
              for u, v, d in graph.edges(data=True) if d["tier"] == "node-leaf"}
    assert speeds == {"a100": 200, "h100": 400}


def test_fabric_too_large_for_three_tiers_is_a_located_error() -> None:
    data = superpod_spec(1, nodes_per_su=40)
    data["node_groups"][0]["count"] = 2000
    data["rows"][0]["racks"][0]["names"] = "r[1-500]"
    data["node_groups"][0]["racks"] = "r[1-500]"
    data["fabric"]["compute"]["leaf_switch"] = "qm8700"  # 40 ports: 16,000 node ports is too many
    data["fabric"]["compute"].pop("scalable_unit_nodes")
    with pytest.raises(CompileError) as caught:
        compile_data(data)
    (diag,) = caught.value.diagnostics
    assert diag.code == "FABRIC-SIZE"
    assert diag.path == ("fabric", "compute", "leaf_switch")
    assert "more than three tiers of 40-port switches" in diag.message


def test_ethernet_nics_on_an_infiniband_fabric_are_rejected() -> None:
    data = example_data("gb200-nvl72")
    data["fabric"]["storage"] = {"technology": "infiniband", "leaf_switch": "qm9700"}
    with pytest.raises(CompileError) as caught:
        compile_data(data)
    codes = {d.code for d in caught.value.diagnostics}
    assert codes == {"FABRIC-LINK-LAYER"}
    assert "node type 'gb200' has ethernet storage NICs" in caught.value.diagnostics[0].message


def test_unknown_fabric_rack_suggests_a_name() -> None:
    data = superpod_spec(1)
    data["fabric"]["compute"]["racks"] = "nte[1-8]"
    with pytest.raises(CompileError) as caught:
        compile_data(data)
    (diag,) = caught.value.diagnostics
    assert diag.code == "SPEC-UNKNOWN-RACK" and "net1" in (diag.hint or "")


@pytest.mark.parametrize(("sus", "leaves", "spines", "leaf_spine"), [
    # NVIDIA DGX SuperPOD with DGX B300 (XDR) RA, Table 3: Quantum-X800 Q3400 (144 ports),
    # 72-node SUs, 8 rails.
    (1, 8, 4, 576), (2, 16, 8, 1152), (4, 32, 18, 2304), (8, 64, 36, 4608),
    (18, 144, 72, 10368),
])
def test_xdr_superpod_sizes(sus: int, leaves: int, spines: int, leaf_spine: int) -> None:
    tree = size_fat_tree(72 * sus, 8, 144, 144, 144, Fraction(1), "rail-optimized", su_nodes=72)
    assert (tree.tiers, tree.leaves, tree.spines, tree.leaf_spine_cables) == (
        2, leaves, spines, leaf_spine)


def test_nvlink_domains() -> None:
    nvl = example_build("gb200-nvl72").plan
    racks = [d for d in nvl.nvlink_domains if d.kind == "rack"]
    assert [(d.name, d.gpus, len(d.nodes), len(d.switch_trays)) for d in racks] == [
        (f"nvl{i}", 72, 18, 9) for i in range(1, 5)]
    graph = nvl.graphs["nvlink"]
    # every GPU has 18 NVLink 5 links: a 4-GPU tray sends 72 links over 9 switch trays
    assert all(sum(d["links"] for _u, _v, d in graph.edges(host, data=True)) == 72
               for host in racks[0].nodes)
    dgx = example_build("dgx-h100-superpod-4su").plan
    boards = [d for d in dgx.nvlink_domains if d.kind == "board"]
    assert len(boards) == 127 and {d.gpus for d in boards} == {8}


# -- helpers -----------------------------------------------------------------------------

def _assert_ports_accounted(plan: Plan, network: str = "compute") -> None:
    """No switch beyond its radix, port names unique per switch, spare ports as reported,
    and the graph's cable counts those of the links."""
    graph = plan.fabric_wiring[network].graph
    switches = [s for s in plan.switches if s.network == network]
    names = {s.name for s in switches}
    used: dict[str, set[str]] = {}
    pairs: Counter[frozenset[str]] = Counter()
    for link in plan.links.rows():
        if link.network != network:
            continue
        pairs[frozenset((link.a_device, link.b_device))] += 1
        for end, port in ((link.a_device, link.a_port), (link.b_device, link.b_port)):
            if end in names:
                assert port not in used.setdefault(end, set()), (end, port)
                used[end].add(port)
    assert pairs == {frozenset((u, v)): d["links"] for u, v, d in graph.edges(data=True)}
    legs = plan.fabrics[network].breakout_legs
    for switch in switches:
        # a split port's legs ('p5s1', 'p5s2') are one port of the radix, each leg once
        cages = Counter(p.partition("s")[0] for p in used.get(switch.name, ()))
        assert len(cages) <= switch.ports
        assert all(1 <= int(p[1:]) <= switch.ports for p in cages)
        assert max(cages.values(), default=0) <= legs
    spare = sum(s.ports for s in switches) - sum(
        len({p.partition("s")[0] for p in ports}) for ports in used.values())
    assert spare == plan.fabrics[network].spare_ports


def _assert_uplinks_even(plan: Plan) -> None:
    """Each leaf reaches each spine it uses with the same number of links."""
    graph = plan.fabric_wiring["compute"].graph
    for leaf in (n for n, d in graph.nodes(data=True) if d.get("tier") == "leaf"):
        per_spine = {v: d["links"] for _u, v, d in graph.edges(leaf, data=True)
                     if graph.nodes[v]["kind"] == "switch"}
        assert len(set(per_spine.values())) <= 1, leaf


def _assert_rails(plan: Plan) -> None:
    """NIC i of every node goes to rail leaf i+1 of the node's scalable unit."""
    graph = plan.fabric_wiring["compute"].graph
    for host, data in graph.nodes(data=True):
        if data["kind"] != "node":
            continue
        for _u, leaf, edge in graph.edges(host, data=True):
            assert graph.nodes[leaf]["rail"] == edge["rail"] + 1
            assert graph.nodes[leaf]["su"] == data["su"]


@pytest.mark.parametrize(("technology", "leaf", "nic", "speed"), [
    ("roce", "sn5600", "cx7-400gbe", 400),  # RoCE v2: 400GbE NICs on 800GbE ports, split
    ("infiniband", "q3400", "cx8-xdr", 800),  # XDR end to end
    ("infiniband", "qm8700", "cx6-hdr", 200),  # HDR
])
def test_fabric_technologies(technology: str, leaf: str, nic: str, speed: int) -> None:
    data = superpod_spec(1, technology=technology, leaf_switch=leaf)
    data["node_types"]["dgx"]["nics"] = [{"role": "compute", "model": nic, "count": 8},
                                         {"role": "inband", "model": "eth-1g"},
                                         {"role": "bmc", "model": "eth-1g"}]
    data["fabric"]["compute"].pop("scalable_unit_nodes")
    plan = compile_data(data)
    graph = plan.fabric_wiring["compute"].graph
    link = "infiniband" if technology == "infiniband" else "ethernet"
    assert {(d["link"], d["speed_gbps"]) for _u, _v, d in graph.edges(data=True)
            if d["tier"] == "node-leaf"} == {(link, speed)}
    fabric = plan.fabrics["compute"]
    ports = plan.catalog.switches[leaf].ports
    # by default an SU fills a rail leaf's downlinks at 1:1 (half its ports), each split
    # into the catalog's legs at the NICs' rate (an SN5600's 800G cage: 2 x 400G)
    legs = {"sn5600": 2}.get(leaf, 1)
    assert fabric.breakout_legs == legs
    assert fabric.scalable_unit_nodes == ports // 2 * legs
    _assert_ports_accounted(plan)
    _assert_uplinks_even(plan)
    _assert_rails(plan)


def test_bad_fabric_rack_hostlist_is_a_located_error() -> None:
    data = superpod_spec(1)
    data["fabric"]["compute"]["racks"] = "net[8-1]"
    with pytest.raises(CompileError) as caught:
        compile_data(data)
    (diag,) = caught.value.diagnostics
    assert diag.code == "SPEC-HOSTLIST" and diag.path == ("fabric", "compute", "racks")


def test_planned_scalable_units_size_the_spines_not_the_leaves() -> None:
    """Four SUs built, eight planned: the 32 spines of the 8-SU SuperPOD, one link from each
    leaf to each; half of every spine's ports wait for the SUs to come."""
    tree = size_fat_tree(128, 8, 64, 64, 64, Fraction(1), "rail-optimized", su_nodes=32,
                         planned_sus=8)
    assert (tree.tiers, tree.sus, tree.leaves, tree.spines, tree.leaf_spine_links) == (
        2, 4, 32, 32, 1)
    plan = compile_data(superpod_spec(4, planned_scalable_units=8))
    fabric = plan.fabrics["compute"]
    assert fabric.switch_counts == {"leaf": 32, "spine": 32}
    assert fabric.link_counts == {"node-leaf": 1024, "leaf-spine": 1024}
    assert fabric.spare_ports == 32 * 32  # each spine: 32 ports for SUs 5-8
    _assert_ports_accounted(plan)
    _assert_uplinks_even(plan)


def test_planned_three_tiers_build_the_pods_there_are() -> None:
    """XDR, 72-node SUs: planned for 40 SUs (three tiers), 20 built: the cores of the whole
    plan, the spines of the pods the built SUs fill."""
    full = size_fat_tree(72 * 40, 8, 144, 144, 144, Fraction(1), "rail-optimized", su_nodes=72)
    half = size_fat_tree(72 * 20, 8, 144, 144, 144, Fraction(1), "rail-optimized", su_nodes=72,
                         planned_sus=40)
    assert full.tiers == half.tiers == 3
    assert half.cores == full.cores and half.sus_per_pod == full.sus_per_pod
    assert half.spines == -(-20 // full.sus_per_pod) * full.spines_per_pod < full.spines
    assert half.leaves == 20 * 8


def test_more_units_than_planned_is_a_located_error() -> None:
    with pytest.raises(CompileError) as caught:
        compile_data(superpod_spec(4, planned_scalable_units=3))
    (diag,) = caught.value.diagnostics
    assert diag.code == "FABRIC-PLANNED"
    assert diag.path == ("fabric", "compute", "planned_scalable_units")
    assert "128 nodes fill 4 scalable units of 32 but the fabric is planned for 3" in diag.message


@pytest.mark.parametrize("spec", [superpod_spec(16), superpod_spec(3), superpod_spec(
    4, oversubscription="2:1"), example_data("dgx-h100-superpod-4su")],
    ids=["3-tier", "2-tier", "2:1", "superpod-example"])
def test_uplinks_laid_at_once_are_the_uplinks_laid_block_by_block(
        spec: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """Disjoint sets of upper switches (pods' spines, core groups) are cabled all at once
    (fabric_cables._connect_sets); the same cables, ports and tables as block by block."""
    import sys

    fabric_cables = sys.modules["cluster_iac.compile.fabric_cables"]
    laid: list[bool] = []
    at_once = fabric_cables._connect_sets

    def counted(*args: Any) -> bool:
        laid.append(at_once(*args))
        return laid[-1]

    monkeypatch.setattr(fabric_cables, "_connect_sets", counted)
    quick = compile_data(spec)
    monkeypatch.setattr(fabric_cables, "_connect_sets", lambda *args: False)
    blocks = compile_data(spec)
    assert laid and all(laid)  # the shortcut was taken, for every tier of uplinks
    assert quick.links.columns() == blocks.links.columns()
    for network, wiring in quick.fabric_wiring.items():
        other = blocks.fabric_wiring[network]
        assert (wiring.up, wiring.uplinks, wiring.tier) == (other.up, other.uplinks, other.tier)
        assert quick.fabrics[network].tier_bandwidth_gbps == blocks.fabrics[
            network].tier_bandwidth_gbps
