"""`cluster-iac fabric verify` and `fabric guids` on fabrics discovered by the real
ibnetdiscover: the planned fabric loaded into ibsim with two cables swapped, one removed and
one added names exactly those cables; the fabric as planned names none; and the GUIDs read
from a delivered fabric make a partitions.conf that OpenSM enforces."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from ruamel.yaml import YAML

from cluster_iac.cli.main import main
from cluster_iac.emit.subnet_manager import render
from cluster_iac.formats.ibnetdiscover import IbEnd, IbNode, Topology, topology_text
from cluster_iac.plan import Plan
from cluster_iac.plan.subnet import topology
from cluster_iac.render import build
from tests.conftest import ROOT, example_build
from tests.facility_fixtures import example_data
from tests.real.ibsim_harness import Simulator, lids, log_problems, pkeys
from tests.superpod_fixtures import infiniband_storage

pytestmark = pytest.mark.real

EXAMPLE = "mixed-a100-h100"


def _verify(discovered: str, folder: Path) -> tuple[int, list[str]]:
    path = folder / "discovered.txt"
    path.write_text(discovered)
    result = CliRunner().invoke(main, ["fabric", "verify",
                                       str(ROOT / "examples" / f"{EXAMPLE}.yaml"), str(path)])
    return result.exit_code, result.stdout.splitlines()


def _described(top: Topology, end: IbEnd) -> tuple[str, str]:
    """(device, port) of an end in the plan's terms."""
    node = top.nodes[end.node_id]
    if node.kind == "Switch":
        return node.description, f"p{end.port}"
    host, _, port = node.description.partition(" ")
    return host, port


def _cable_of(plan: Plan, end: tuple[str, str]) -> str:
    for cable in plan.cables.rows():
        if end in ((cable.a_device, cable.a_port), (cable.b_device, cable.b_port)):
            return cable.cable_id
    raise AssertionError(f"no planned cable at {end}")


def _free_port(top: Topology, node_id: str) -> int:
    """The node's highest free port, or 0."""
    node = top.nodes[node_id]
    return next((p for p in range(node.ports, 0, -1) if IbEnd(node_id, p) not in top.links), 0)


def test_verify_names_exactly_the_changed_cables(tmp_path: Path) -> None:
    plan = example_build(EXAMPLE).plan
    top = topology(plan, "compute")
    switches = [i for i, n in top.nodes.items() if n.kind == "Switch"]
    host_links = [(a, b) for a, b in top.pairs()
                  if (a.node_id in switches) != (b.node_id in switches)]
    uplinks = [(a, b) for a, b in top.pairs() if a.node_id in switches and b.node_id in switches]
    # two host cables on one leaf swapped at the leaf
    (h1, s1), (h2, s2) = [sorted(pair, key=lambda e: e.node_id in switches)
                          for pair in host_links
                          if switches[0] in (pair[0].node_id, pair[1].node_id)][:2]
    for end in (h1, s1, h2, s2):
        del top.links[end]
    top.add_link(h1, s2)
    top.add_link(h2, s1)
    swapped = {_cable_of(plan, _described(top, h1)), _cable_of(plan, _described(top, h2))}
    # one leaf-spine cable removed
    ra, rb = uplinks[-1]
    removed = _cable_of(plan, _described(top, ra))
    del top.links[ra], top.links[rb]
    # one cable added between two switches' free ports
    spare = [i for i in switches if _free_port(top, i)][:2]
    assert len(spare) == 2, "two switches have a free port"
    added = (IbEnd(spare[0], _free_port(top, spare[0])), IbEnd(spare[1], _free_port(top, spare[1])))
    top.add_link(*added)
    with Simulator(topology_text(top), tmp_path) as sim:
        discovered = sim.discover()
    code, lines = _verify(discovered, tmp_path)
    assert code == 1
    named = {m.group(2): m.group(1) for line in lines
             if (m := re.match(r"(MISWIRED|MISSING) (\S+):", line))}
    assert set(named) == swapped | {removed}, lines
    assert {named[c] for c in swapped} == {"MISWIRED"} and named[removed] == "MISSING"
    extra = [line for line in lines if line.startswith("EXTRA")]
    want = [f"{_described(top, end)[0]} {_described(top, end)[1]}" for end in added]
    assert len(extra) == 1 and all(end in extra[0] for end in want), extra
    assert len(lines) == 4


def test_verify_passes_the_fabric_as_planned(tmp_path: Path) -> None:
    plan = example_build(EXAMPLE).plan
    with Simulator(topology_text(topology(plan, "compute")), tmp_path) as sim:
        discovered = sim.discover()
    code, lines = _verify(discovered, tmp_path)
    assert code == 0, lines
    assert lines[-1].endswith("the compute fabric matches the plan "
                              f"({sum(1 for n in plan.cables.network if n == 'compute')} cables)")


def _delivered(top: Topology) -> Topology:
    """The fabric as delivered hardware shows it: vendor GUIDs (not the plan's placeholders)
    and host adapters with the driver's node descriptions ('compute01 mlx5_0')."""
    renamed: dict[str, IbNode] = {}
    per_host: dict[str, int] = {}
    for i, node in enumerate(top.nodes.values()):
        guid = 0x0002_C903_00AB_0000 + 2 * i  # an NVIDIA (Mellanox) OUI, as real cards have
        desc = node.description
        if node.kind == "Ca":
            host = desc.split()[0]
            desc = f"{host} mlx5_{per_host.setdefault(host, 0)}"
            per_host[host] += 1
        renamed[node.node_id] = IbNode(node.kind, f"{node.kind[0]}-{guid:016x}", guid,
                                       node.ports, desc)
    out = Topology(nodes={n.node_id: n for n in renamed.values()})
    for a, b in top.pairs():
        out.add_link(IbEnd(renamed[a.node_id].node_id, a.port),
                     IbEnd(renamed[b.node_id].node_id, b.port))
    return out


def test_guids_from_a_delivered_fabric_drive_opensm_partitions(tmp_path: Path) -> None:
    """`fabric guids` reads the real GUIDs of a fabric whose adapters keep the driver's
    descriptions, and OpenSM, given the partitions.conf it writes, puts the partition key
    in the P_Key tables of exactly the Slurm partition's adapters."""
    name = "seed-64gpu-h100"
    plan = example_build(name).plan
    delivered = _delivered(topology(plan, "compute"))
    spec = ROOT / "examples" / f"{name}.yaml"
    files = render(plan)
    with Simulator(topology_text(delivered), tmp_path) as sim:
        (tmp_path / "discovered.txt").write_text(sim.discover())
        out = tmp_path / "site"
        result = CliRunner().invoke(main, ["fabric", "guids", str(spec),
                                           str(tmp_path / "discovered.txt"), "-o", str(out)])
        assert result.exit_code == 0, result.output
        partitions = (out / "partitions.conf").read_text()
        assert "PLACEHOLDERS" not in partitions and "0x0002c903" in partitions
        names = (out / "node-name-map").read_text()
        assert '"ib-leaf-1"' in names and '"compute01 ib0"' in names
        log = sim.opensm(files["opensm/compute/opensm.conf"], partitions)
        assert log_problems(log, "updn") == []
        found = {desc: lid for desc, lid in lids(sim.discover()).items()}
        members = set(next(p for p in plan.partitions if p.name == "gpu-training").nodes)
        for desc, lid in found.items():
            want = {0xFFFF} | ({0x8002} if desc.split()[0] in members else set())
            assert pkeys(sim, lid) == want, desc


def _as_managed(top: Topology) -> Topology:
    """The fabric with each switch describing itself as NVIDIA's managed switches do
    ('MF0;NAME:MODEL/U1'); ibsim serves the description the topology file gives."""
    out = Topology(nodes={i: n._replace(description=f"MF0;{n.description}:MQM9700/U1")
                          if n.kind == "Switch" else n for i, n in top.nodes.items()})
    out.links = dict(top.links)
    return out


def test_managed_switch_descriptions_on_a_correct_fabric(tmp_path: Path) -> None:
    plan = example_build(EXAMPLE).plan
    with Simulator(topology_text(_as_managed(topology(plan, "compute"))), tmp_path) as sim:
        discovered = sim.discover()
    assert "MF0;" in discovered and ":MQM9700/U1" in discovered
    code, lines = _verify(discovered, tmp_path)
    assert code == 0, lines[:5]


def test_a_dead_switch_is_one_line(tmp_path: Path) -> None:
    plan = example_build(EXAMPLE).plan
    top = _as_managed(topology(plan, "compute"))
    leaf = next(i for i, n in top.nodes.items() if n.kind == "Switch" and "leaf" in n.description)
    name = top.nodes[leaf].description.split(";")[1].split(":")[0]
    for end in [e for e in top.links if e.node_id == leaf]:
        del top.links[top.links[end]], top.links[end]
    del top.nodes[leaf]
    with Simulator(topology_text(top), tmp_path) as sim:
        discovered = sim.discover()
    code, lines = _verify(discovered, tmp_path)
    assert code == 1
    assert len(lines) == 1 and lines[0].startswith(f"NOT-SEEN switch {name} (rack "), lines


def test_storage_port_in_the_compute_ports_place(tmp_path: Path) -> None:
    """A host's storage adapter cabled where its ib0 belongs (ib0 left empty): miswired. The
    SuperPOD with its storage fabric on InfiniBand (tests/superpod_fixtures.py; the example
    runs it on Ethernet), where a storage port is an InfiniBand port too."""
    spec = tmp_path / "superpod-ib.yaml"
    YAML().dump(infiniband_storage(example_data("dgx-h100-superpod-4su")), spec)
    plan = build(spec, emit=False).plan
    top = topology(plan, "compute")
    node_id, node = next((i, n) for i, n in top.nodes.items()
                         if n.kind == "Ca" and n.description.endswith(" ib0"))
    host = node.description.split()[0]
    top.nodes[node_id] = node._replace(description=f"{host} stor0")
    with Simulator(topology_text(top), tmp_path) as sim:
        discovered = sim.discover()
    path = tmp_path / "discovered.txt"
    path.write_text(discovered)
    result = CliRunner().invoke(main, ["fabric", "verify", str(spec), str(path)])
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith("MISWIRED ") and f"{host} stor0" in lines[0]
