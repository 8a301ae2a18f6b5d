"""The exported topology (render's opensm/<fabric>/topology.ibnetdiscover, one file per
InfiniBand fabric) read by real consumers: ibsim loads it as its fabric, the real
ibnetdiscover discovers that fabric, and `cluster-iac reconcile` against the discovery finds
no difference from the plan. Once the lock holds the delivered GUIDs (reconcile --accept on
a delivered fabric), the export carries them, and the fabric ibsim builds from it reports
exactly those GUIDs back."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from cluster_iac.cli.main import main
from cluster_iac.emit.subnet_manager import render
from cluster_iac.formats.ibnetdiscover import Topology, parse, topology_text
from cluster_iac.plan.subnet import infiniband_fabrics, topology
from tests.conftest import ROOT, example_build
from tests.real.ibsim_harness import Simulator
from tests.real.test_cabling_verify_real import _delivered

pytestmark = pytest.mark.real

CLEAN = "the delivered cluster matches the plan (1 ibnetdiscover judged)"


def _reconcile(spec: Path, found: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["reconcile", str(spec), str(found), *args])
    return result.exit_code, result.stdout, result.stderr


def _shape(top: Topology) -> tuple[dict[str, tuple[str, int]], set[tuple[tuple[str, int], ...]]]:
    """(description -> (kind, ports), links by description and port): what the plan says,
    whatever ids and GUIDs the file uses."""
    nodes = {n.description: (n.kind, n.ports) for n in top.nodes.values()}
    desc = {i: n.description for i, n in top.nodes.items()}
    links = {tuple(sorted(((desc[a.node_id], a.port), (desc[b.node_id], b.port))))
             for a, b in top.pairs()}
    return nodes, links


def _guids(top: Topology) -> dict[str, tuple[int, int | None]]:
    """description -> (node GUID, its port 1's GUID where the file gives one)."""
    from_ports = {end.node_id: guid for end, guid in top.port_guids.items()}
    return {n.description: (n.guid, from_ports.get(i)) for i, n in top.nodes.items()}


@pytest.mark.parametrize("name", ["dgx-h100-superpod-4su", "mixed-a100-h100"])
def test_each_fabrics_export_is_ibsims_fabric_and_reconciles_clean(name: str,
                                                                   tmp_path: Path) -> None:
    plan = example_build(name).plan
    files = render(plan)
    spec = ROOT / "examples" / f"{name}.yaml"
    fabrics = infiniband_fabrics(plan)
    assert fabrics and all(f"opensm/{n}/topology.ibnetdiscover" in files for n in fabrics)
    for network in fabrics:
        exported = files[f"opensm/{network}/topology.ibnetdiscover"]
        folder = tmp_path / network
        folder.mkdir()
        with Simulator(exported, folder) as sim:
            discovered = sim.discover()
        # ibsim built the whole fabric: every node and link of the file is discovered
        assert _shape(parse(discovered)) == _shape(parse(exported))
        found = folder / "discovered.txt"
        found.write_text(discovered)
        code, out, err = _reconcile(spec, found)
        assert code == 0, out + err
        assert out.splitlines() == [CLEAN], out


def test_accepted_guids_are_exported_and_discovered_back(tmp_path: Path) -> None:
    name = "seed-64gpu-h100"
    for suffix in (".yaml", ".lock"):
        shutil.copy(ROOT / "examples" / f"{name}{suffix}", tmp_path / f"{name}{suffix}")
    spec = tmp_path / f"{name}.yaml"
    plan = example_build(name).plan
    (tmp_path / "delivered").mkdir()
    with Simulator(topology_text(_delivered(topology(plan, "compute"))),
                   tmp_path / "delivered") as sim:
        found = tmp_path / "delivered.txt"
        found.write_text(sim.discover())
    code, out, err = _reconcile(spec, found, "--accept")
    assert code == 0 and "19 guid accepted" in err, out + err
    out_dir = tmp_path / "out"
    result = CliRunner().invoke(main, ["render", str(spec), "-o", str(out_dir)])
    assert result.exit_code == 0, result.output
    exported = (out_dir / "opensm" / "compute" / "topology.ibnetdiscover").read_text()
    assert "GUIDs are the delivered ones" in exported and "PLACEHOLDERS" not in exported
    (tmp_path / "export").mkdir()
    with Simulator(exported, tmp_path / "export") as sim:
        rediscovered = sim.discover()
    # the delivered fabric's GUIDs, as the lock accepted them, come back from the fabric
    # ibsim built out of the export: each switch's node GUID, each adapter's port GUID
    delivered = _guids(parse(found.read_text()))
    delivered_ports = {d: g[1] for d, g in delivered.items() if g[1] is not None}
    back = _guids(parse(rediscovered))
    switches = {d for d, n in _shape(parse(exported))[0].items() if n[0] == "Switch"}
    assert {d: back[d][0] for d in switches} == {d: delivered[d][0] for d in switches}
    ports = {d: g for d, g in back.items() if d not in switches}
    assert sorted(g[1] for g in ports.values()) == sorted(delivered_ports.values())
    assert all(g[0] + 1 == g[1] for g in ports.values()), "ibsim's port 1 is node GUID + 1"
    again = tmp_path / "rediscovered.txt"
    again.write_text(rediscovered)
    code, out, err = _reconcile(spec, again, "--accept")
    assert code == 0, out + err
    assert " accepted;" not in err and "does not hold" not in err, out + err
    assert out.splitlines() == [CLEAN], out


def test_the_benchmarks_discovery_is_what_ibnetdiscover_prints(tmp_path: Path) -> None:
    """tests/benchmarks/bench_commands.py reconciles 100,000 GPUs against a discovery it
    generates from the export (ibsim cannot hold that fabric): line for line, it is what the
    real ibnetdiscover prints for the fabric ibsim builds from the export (records in
    another order; its header comment aside)."""
    from collections import Counter

    from tests.benchmarks.bench_commands import discovery

    exported = render(example_build("mixed-a100-h100").plan)[
        "opensm/compute/topology.ibnetdiscover"]
    with Simulator(exported, tmp_path) as sim:
        real = sim.discover()

    def lines(text: str) -> Counter[str]:
        return Counter(line for line in text.splitlines() if line and line[0] != "#")

    assert lines(discovery(exported)) == lines(real)
    assert any(line.endswith(" lid 0 4xSDR") and '"S-' in line.split("\t")[1]
               for line in real.splitlines() if line.startswith("[")), "switch-switch links"
