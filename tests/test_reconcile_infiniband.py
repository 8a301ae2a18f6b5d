"""The InfiniBand reader's judgement of a discovery against the plan's cables: switches
named as NVIDIA's managed switches name themselves, a port judged by its own name on its
own fabric, a switch not seen reported once, a known host located where the plan puts it."""

from __future__ import annotations

from pathlib import Path

from cluster_iac.formats.ibnetdiscover import IbEnd, IbNode, Topology
from cluster_iac.plan.subnet import topology
from cluster_iac.reconcile.infiniband import describe, fabric_of, verify
from cluster_iac.render import build
from tests.conftest import ROOT, example_build

EXAMPLE = "mixed-a100-h100"


def _renamed(top: Topology, rename) -> Topology:
    """The same fabric with each node's description passed through ``rename``."""
    out = Topology(nodes={i: IbNode(n.kind, n.node_id, n.guid, n.ports, rename(n))
                          for i, n in top.nodes.items()})
    out.links = dict(top.links)
    return out


def test_managed_switch_descriptions_are_recognised() -> None:
    """'MF0;NAME:MODEL/U1' (NVIDIA's managed switches) names the switch NAME; the fabric
    is picked by it and a correct fabric gives no difference."""
    plan = example_build(EXAMPLE).plan
    top = _renamed(topology(plan, "compute"), lambda n: (
        f"MF0;{n.description}:MQM9700/U1" if n.kind == "Switch" else n.description))
    assert fabric_of(plan, top) == "compute"
    assert verify(plan, "compute", top) == []


def test_docs_example_description_is_matched_when_the_fabric_is_picked() -> None:
    """docs/subnet-manager.md's 'ib-leaf-1;MQM9700/U1' form, with no --network."""
    plan = example_build(EXAMPLE).plan
    top = _renamed(topology(plan, "compute"), lambda n: (
        f"{n.description};MQM9700/U1" if n.kind == "Switch" else n.description))
    assert fabric_of(plan, top) == "compute"
    assert verify(plan, "compute", top) == []


# The SuperPOD example with its storage fabric back on InfiniBand (as NVIDIA's reference
# architecture builds it; the example runs it on Ethernet): a host on two InfiniBand fabrics
INFINIBAND_STORAGE = (("technology: ethernet\n    leaf_switch: sn4700", "technology: infiniband\n"
                       "    leaf_switch: qm9700"), ("    underlay: {bgp: unnumbered}\n", ""),
                      ("model: cx7-200gbe", "model: cx7-200g-ib"),
                      ("model: cx7-400gbe", "model: cx7-ndr"))


def test_storage_port_where_the_compute_port_belongs_is_miswired(tmp_path: Path) -> None:
    text = (ROOT / "examples" / "dgx-h100-superpod-4su.yaml").read_text()
    for old, new in INFINIBAND_STORAGE:
        assert old in text, old
        text = text.replace(old, new)
    spec = tmp_path / "superpod.yaml"
    spec.write_text(text)
    plan = build(spec, lock_file=tmp_path / "none.lock", emit=False).plan
    assert plan.fabrics["storage"].technology == "infiniband"
    top = topology(plan, "compute")
    host = next(c for c in plan.cables.rows() if c.network == "storage"
                and any(d.a_device == c.a_device for d in plan.cables.rows()
                        if d.network == "compute")).a_device
    node_id = next(i for i, n in top.nodes.items() if n.description == f"{host} ib0")
    node = top.nodes[node_id]
    top.nodes[node_id] = node._replace(description=f"{host} stor0")
    found = verify(plan, "compute", top)
    assert [m.kind for m in found] == ["miswired"], found
    assert found[0].planned is not None and found[0].planned.a_port == "ib0"
    line = describe(plan, found[0])
    assert f"{host} stor0" in line and "?/?/?" not in line, line


def test_a_switch_not_seen_is_one_line() -> None:
    plan = example_build(EXAMPLE).plan
    top = topology(plan, "compute")
    leaf = next(i for i, n in top.nodes.items()
                if n.kind == "Switch" and "leaf" in n.description)
    name = top.nodes[leaf].description
    cables = sum(1 for c in plan.cables.rows() if c.network == "compute"
                 and name in (c.a_device, c.b_device))
    for end in [e for e in top.links if e.node_id == leaf]:
        del top.links[top.links[end]], top.links[end]
    del top.nodes[leaf]
    found = verify(plan, "compute", top)
    assert [m.kind for m in found] == ["unseen"], found
    device = next(d for d in plan.devices if d.name == name)
    assert describe(plan, found[0]) == (
        f"NOT-SEEN switch {name} (rack {device.rack} {device.position}) not seen: "
        f"its {cables} cables are missing")


def test_a_known_hosts_port_on_the_wrong_fabric_is_located() -> None:
    """A storage-only host's adapter on the compute fabric: shown at its planned rack/U."""
    plan = example_build("dgx-h100-superpod-4su").plan
    top = topology(plan, "compute")
    host = next(c for c in plan.cables.rows() if c.network == "storage"
                and not any(d.a_device == c.a_device for d in plan.cables.rows()
                            if d.network == "compute"))
    leaf, free = next((i, p) for i, n in top.nodes.items() if n.kind == "Switch"
                      for p in range(n.ports, 0, -1) if IbEnd(i, p) not in top.links)
    top.nodes["H-stray"] = IbNode("Ca", "H-stray", 7, 1, f"{host.a_device} {host.a_port}")
    top.add_link(IbEnd("H-stray", 1), IbEnd(leaf, free))
    found = verify(plan, "compute", top)
    assert [m.kind for m in found] == ["extra"]
    device = next(d for d in plan.devices if d.name == host.a_device)
    line = describe(plan, found[0])
    assert f"{device.row}/{device.rack}/{device.position} {host.a_device} {host.a_port}" in line


def test_a_missing_cable_is_the_plans_whole_row() -> None:
    """A cable not found is reported with the plan's whole row (its id, its ends' rack and
    U), made for it alone from the fabric's columns (FabricCables), as Cables.rows makes
    every row; the other cables of the fabric are found."""
    plan = example_build(EXAMPLE).plan
    top = topology(plan, "compute")
    host = next(i for i, n in top.nodes.items() if n.kind == "Ca")
    end = next(e for e in top.links if e.node_id == host)
    del top.links[top.links[end]], top.links[end]
    found = verify(plan, "compute", top)
    assert [m.kind for m in found] == ["missing"], found
    device, _, port = top.nodes[host].description.partition(" ")
    planned = [c for c in plan.cables.rows() if c.network == "compute"
               and (c.a_device, c.a_port) == (device, port)]
    assert [m.planned for m in found] == planned and planned[0].a_rack, planned
