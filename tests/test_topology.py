"""topology.conf: the scheduler's view of the compute fabric and of the NVLink racks."""

from __future__ import annotations

import pytest
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from cluster_iac.base.hostlist import expand
from cluster_iac.emit import slurm, topology
from cluster_iac.plan import dump
from tests.conftest import EXAMPLE_IDS, example_build
from tests.facility_fixtures import compile_data
from tests.slurm_fixtures import retargeted
from tests.test_fabric import superpod_spec


class YamlFile(SingleFileSnapshotExtension):
    _write_mode = WriteMode.TEXT
    file_extension = "yaml"


def _parse(text: str) -> dict[str, dict[str, list[str]]]:
    """topology.conf lines -> {switch or block: {'Nodes'|'Switches': names}}."""
    parsed: dict[str, dict[str, list[str]]] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        fields = dict(part.split("=", 1) for part in line.split())
        if "BlockSizes" in fields:
            continue
        name = fields.pop("SwitchName", None) or fields.pop("BlockName")
        assert name not in parsed, f"{name} defined twice"
        parsed[name] = {k: expand(v) for k, v in fields.items()}
    return parsed


@pytest.mark.parametrize("name", ["seed-64gpu-h100", "dgx-h100-superpod-4su", "mixed-a100-h100"])
def test_tree_holds_every_slurm_node_once_under_one_root(name: str) -> None:
    result = example_build(name)
    conf = _parse(result.files["slurm/topology.conf"])
    placed = [n for entry in conf.values() for n in entry.get("Nodes", [])]
    assert sorted(placed) == sorted(n.hostname for n in result.plan.compute_nodes)
    children = [s for entry in conf.values() for s in entry.get("Switches", [])]
    assert len(children) == len(set(children))  # each switch has one parent
    roots = set(conf) - set(children)
    assert len(roots) == 1
    assert "TopologyPlugin=topology/tree" in result.files["slurm/slurm.conf"]


def test_rail_optimized_first_level_is_the_scalable_unit() -> None:
    plan = example_build("dgx-h100-superpod-4su").plan
    conf = _parse(example_build("dgx-h100-superpod-4su").files["slurm/topology.conf"])
    graph = plan.fabric_wiring["compute"].graph
    for su in range(1, 5):
        in_graph = sorted(n for n, d in graph.nodes(data=True)
                          if d["kind"] == "node" and d["su"] == su)
        assert conf[f"ib-su{su}"]["Nodes"] == in_graph
        # the SU's nodes reach each other through that SU's rail leaves alone
        leaves = {v for n in in_graph for _u, v in graph.edges(n)}
        assert {graph.nodes[leaf]["su"] for leaf in leaves} == {su}
    assert conf["ib-spines"]["Switches"] == [f"ib-su{i}" for i in range(1, 5)]


def test_plain_fabric_first_level_is_the_leaf() -> None:
    plan = example_build("seed-64gpu-h100").plan
    conf = _parse(example_build("seed-64gpu-h100").files["slurm/topology.conf"])
    (leaf,) = [s.name for s in plan.switches if s.network == "compute"]
    slurm_nodes = {n.hostname for n in plan.compute_nodes}  # not the Lustre servers beside them
    graph = plan.fabric_wiring["compute"].graph
    assert conf == {leaf: {"Nodes": sorted(n for n in graph.neighbors(leaf) if n in slurm_nodes)}}


def test_three_tier_fabric_has_pods_under_the_core() -> None:
    plan = compile_data(superpod_spec(16))
    levels = topology.tree_levels(plan)
    by_name = {name: children for name, _kind, children in levels}
    pods = by_name["ib-core"]
    assert len(pods) == 16  # one pod per SU at this size
    graph = plan.fabric_wiring["compute"].graph
    for pod in pods:
        (su_switch,) = by_name[pod]
        su = int(su_switch.rsplit("su", 1)[1])
        leaves = [n for n, d in graph.nodes(data=True) if d.get("tier") == "leaf" and d["su"] == su]
        spines = {v for n in leaves for v in graph.neighbors(n)
                  if graph.nodes[v].get("tier") == "spine"}
        assert len(spines) == 8


def test_nvl72_racks_are_blocks_when_slurm_has_topology_block() -> None:
    result = example_build("gb200-nvl72")
    conf = _parse(result.files["slurm/topology.conf"])
    domains = [d for d in result.plan.nvlink_domains if d.kind == "rack"]
    assert conf == {d.name: {"Nodes": sorted(d.nodes)} for d in domains}
    assert "TopologyPlugin=topology/block" in result.files["slurm/slurm.conf"]


def test_older_slurm_gets_the_tree_for_nvl72() -> None:
    plan, files = retargeted("gb200-nvl72", "23.02")
    assert topology.plugin(plan) == "topology/tree"
    text = files["slurm/topology.conf"]
    assert "no topology/block" in text and "SwitchName=" in text
    assert ("TopologyPlugin", "topology/tree") in slurm.parameters(plan)


def test_no_fabric_no_topology() -> None:
    result = example_build("minimal")
    assert "slurm/topology.conf" not in result.files
    assert "TopologyPlugin" not in result.files["slurm/slurm.conf"]


@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_plan_dump_matches_golden(name: str, snapshot) -> None:  # type: ignore[no-untyped-def]
    assert dump.to_yaml(example_build(name).plan) == snapshot(extension_class=YamlFile)


def test_plan_dump_counts_agree_with_the_graphs() -> None:
    plan = example_build("dgx-h100-superpod-4su").plan
    counts = dump.counts(plan)
    assert counts["switches"]["compute"] == {"leaf": 32, "spine": 16}
    assert counts["links"]["compute"] == {"leaf-spine": 1024, "node-leaf": 1016}
    assert counts["gpus"] == 1016 and counts["nodes"] == len(plan.nodes)
    assert counts["racks"] == len(plan.racks)
