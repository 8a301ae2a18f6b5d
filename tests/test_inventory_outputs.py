"""Cabling, Ansible, Terraform and NetBox outputs agree with the plan and with each other."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import re
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from cluster_iac.catalog.cables import cable_catalog
from cluster_iac.compile.cable_media import allowed, choose_medium
from cluster_iac.emit import ansible, cabling, terraform
from cluster_iac.plan import Plan
from cluster_iac.plan.labels import label_columns
from tests.conftest import example_build
from tests.inventory_fixtures import wired_plan

# netbox/dcim/choices.py CableTypeChoices (the subset a cluster uses).
NETBOX_CABLE_TYPES = {"cat6", "dac-passive", "dac-active", "aoc", "mmf-om4", "smf-os2", "power"}


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def _plans() -> list[tuple[str, Plan]]:
    from tests.conftest import EXAMPLE_IDS

    return [(name, example_build(name).plan) for name in EXAMPLE_IDS] + [("wired", wired_plan())]


PLANS = _plans()
IDS = [name for name, _ in PLANS]


def _expected_cables(plan: Plan) -> int:
    """One cable per link the network builders planned, plus one per power cord; the
    fabric graphs count the same cables."""
    fabric = sum(d["links"] for g in ("compute", "storage") if g in plan.fabric_wiring
                 for _u, _v, d in plan.fabric_wiring[g].graph.edges(data=True))
    assert fabric == sum(1 for net in plan.links.network if net in ("compute", "storage"))
    return len(plan.links) + len(plan.power_cords)


def _hosts(plan: Plan) -> set[str]:
    names = {n.hostname for n in plan.nodes} | {s.name for s in plan.switches}
    # PDUs and NVL72 power shelves are racked devices with their own inventory entries.
    names |= {d.name for d in plan.power_devices}
    return names


@pytest.mark.parametrize(("name", "plan"), PLANS, ids=IDS)
def test_cabling_has_exactly_the_plans_links(name: str, plan: Plan) -> None:
    cables = _rows(cabling.render(plan)["cabling/cables.csv"])
    assert len(cables) == _expected_cables(plan)
    assert len({c["cable_id"] for c in cables}) == len(cables)
    ports = Counter((c[f"{s}_device"], c[f"{s}_port"]) for c in cables for s in "ab")
    assert [p for p, n in ports.items() if n > 1] == []
    label_ids = label_columns(plan.cables)[0]  # what `cluster-iac labels` prints
    assert Counter(label_ids) == {c["cable_id"]: 2 for c in cables}


@pytest.mark.parametrize(("name", "plan"), PLANS, ids=IDS)
def test_every_medium_is_allowed_at_its_length_and_speed(name: str, plan: Plan) -> None:
    catalog = cable_catalog()
    for c in _rows(cabling.render(plan)["cabling/cables.csv"]):
        medium = catalog.medium(c["medium"])
        length, estimate = float(c["length_m"]), float(c["estimated_m"])
        assert length >= estimate, c
        assert length in medium.stocked_m, c
        assert allowed(medium, int(c["speed_gbps"]), length), c


@pytest.mark.parametrize(("name", "plan"), PLANS, ids=IDS)
def test_bom_counts_every_cable_once(name: str, plan: Plan) -> None:
    files = cabling.render(plan)
    bom = _rows(files["cabling/bom.csv"])
    cables = _rows(files["cabling/cables.csv"])
    # a splitter cable is one item for its legs, each a row of cables.csv: a switch port of
    # the fabric's speed split into legs of the splitter's speed
    port = max((s.port_speed_gbps for s in plan.switches if s.network in ("compute", "storage")),
               default=0)
    legs = sum(int(r["quantity"]) * (port // int(r["speed_gbps"])) for r in bom
               if r["item"] == "splitter cable")
    assert sum(int(r["quantity"]) for r in bom if r["item"] == "cable") + legs == len(cables)
    assert sum(int(r["quantity"]) for r in bom
               if r["item"].startswith("transceiver")) == _modules(plan, cables)


def _modules(plan: Plan, cables: list[dict[str, str]]) -> int:
    """The optics a bill of materials buys, counted cable by cable from the cable table and
    the catalog: one multi-port module in each switch cage of a split port (breakout legs
    'p5s1', 'p5s2' share cage p5, and the table gives them one medium), a module per link
    end at single-port cages (the table's two a link), and
    ceil(links / k) per device, medium and rate where the catalog puts k ports in a cage
    (a switch model's cage_ports; a node type's NICs of the network's role)."""
    ends: Counter[tuple[str, str, str, str]] = Counter()
    split = {name for name, f in plan.fabrics.items() if f.breakout_legs > 1}
    cages: set[tuple[str, str]] = set()  # the switch cages of split ports, a module each
    for c in cables:
        if not int(c["transceivers"]):
            continue
        ends[(c["network"], c["medium"], c["speed_gbps"], c["a_device"])] += 1
        if c["network"] in split and re.fullmatch(r".*\ds\d+", c["b_port"]):
            cages.add((c["b_device"], c["b_port"].rpartition("s")[0]))
        else:
            ends[(c["network"], c["medium"], c["speed_gbps"], c["b_device"])] += 1
    devices = {d.name: d for d in plan.devices}
    total = len(cages)
    for (network, _medium, _speed, name), links in ends.items():
        d = devices[name]
        if d.kind == "switch":
            k = plan.catalog.switches[d.model].cage_ports
        else:
            k = max([n.cage_ports for n in plan.node_types[d.model].nics if n.role == network]
                    or [1])
        total += math.ceil(links / k)
    return total


def test_medium_follows_length_and_speed() -> None:
    """NDR: passive DAC to 1.5 m, active copper to 5 m, then multimode optics to 50 m."""
    catalog = cable_catalog()
    picks = [choose_medium(catalog, "infiniband", 400, 0, m) for m in (1.2, 2.6, 7.0, 45.0, 60.0)]
    assert [(m.key, length) for m, length in picks] == [
        ("dac-passive", 1.5), ("dac-active", 3), ("mmf-om4", 7), ("mmf-om4", 50),
        ("smf-os2", 70)]
    assert choose_medium(catalog, "ethernet", 1, 0, 42)[0].key == "cat6"


@given(st.sampled_from([("infiniband", 400, 0.0), ("infiniband", 800, 0.0), ("ethernet", 1, 0.0),
                        ("ethernet", 100, 0.0), ("power", 0, 2000.0), ("power", 0, 3300.0)]),
       st.one_of(st.floats(0.0, 400.0), st.sampled_from(sorted(
           {length + shift for medium in cable_catalog().media for length in medium.stocked_m
            for shift in (-2e-9, 0.0, 2e-9, 0.01)}))))
@settings(deadline=None)  # a correctness property; a busy machine must not fail it
def test_medium_choice_is_the_first_medium_in_reach(kind: tuple[str, int, float],
                                                    length: float) -> None:
    """The planner's shortcut (each medium's longest stocked length within reach) picks what
    trying every medium in order with its reach and stocked lengths picks."""
    catalog = cable_catalog()
    link, speed, psu_w = kind
    expected = None
    for medium in catalog.media:
        if link == "power":
            reach = math.inf if medium.link == "power" and (medium.max_psu_w or 0) >= psu_w \
                else None
        else:
            reach = medium.reach_at(speed) if medium.link in ("any", link) else None
        stocked = medium.stocked_length(length)
        if reach is not None and stocked is not None and stocked <= reach:
            expected = (medium, stocked)
            break
    if expected is None:
        with pytest.raises(ValueError, match="no cable medium"):
            choose_medium(catalog, link, speed, psu_w, length)
    else:
        assert choose_medium(catalog, link, speed, psu_w, length) == expected


def test_wired_plan_lengths_follow_rack_positions() -> None:
    """compute01 at U1 to the leaf at U48 of a 48U rack: 47 U up + slack; the other rack's
    management switch is reached over the tray."""
    g = cable_catalog().geometry
    cables = {c["cable_id"]: c for c in _rows(cabling.render(wired_plan())["cabling/cables.csv"])}
    first = cables["CF-r01.U01.ib0"]
    assert float(first["estimated_m"]) == pytest.approx(47 * g.u_height_mm / 1000 + g.slack_m,
                                                        abs=0.01)
    assert first["medium"] == "dac-passive" and first["length_m"] == "3"


@pytest.mark.parametrize(("name", "plan"), PLANS, ids=IDS)
def test_inventory_hosts_are_the_plans_devices(name: str, plan: Plan) -> None:
    text = ansible.render(plan)["ansible/inventory.yml"]
    inventory = YAML(typ="safe").load(text)
    hosts = inventory["all"]["hosts"]
    assert set(hosts) == _hosts(plan)
    for node in plan.nodes:
        assert hosts[node.hostname]["node_type"] == node.node_type
        assert hosts[node.hostname]["gpu_count"] == plan.node_types[node.node_type].gpu_count
        assert hosts[node.hostname]["rack"] == (plan.placements[node.hostname].rack
                                                if node.hostname in plan.placements else node.rack)
        for network, var in ansible.ADDRESS_VARS:
            assert hosts[node.hostname].get(var) == plan.addresses.get(network, {}).get(
                node.hostname)
    children = inventory["all"]["children"]
    assert set(children["compute"]["hosts"]) == {n.hostname for n in plan.compute_nodes}
    for part in plan.partitions:
        assert set(children[ansible.group_name("partition", part.name)]["hosts"]) == set(part.nodes)
    for group in children:
        assert group.replace("_", "").isalnum() and not group[0].isdigit(), group


def test_group_names_that_collide_are_refused() -> None:
    assert ansible.group_name("partition", "gpu-training") == "partition_gpu_training"
    assert ansible.group_name("rack", "1a.b") == "rack_1a_b"
    plan = wired_plan()
    twin = dataclasses.replace(plan.partitions[0], name="gpu_training")
    with pytest.raises(ValueError, match="both become 'partition_gpu_training'"):
        ansible.render(dataclasses.replace(plan, partitions=(*plan.partitions, twin)))


@pytest.mark.parametrize(("name", "plan"), PLANS, ids=IDS)
def test_terraform_tfvars_lists_nodes_and_racks(name: str, plan: Plan) -> None:
    text = terraform.render(plan)["terraform/cluster.auto.tfvars.json"]
    data = json.loads(text)
    assert set(data["nodes"]) == {n.hostname for n in plan.nodes}
    assert set(data["racks"]) == {r.name for r in plan.racks}
    assert text == json.dumps(data, indent=2, sort_keys=True) + "\n"


def test_cable_catalog_entries_cite_a_source() -> None:
    data = YAML(typ="safe").load(
        (Path(cabling.__file__).parent.parent / "catalog" / "cables.yaml").read_text())
    assert data["source"] and data["geometry"]["u_height_mm"] == 44.45
    for key, entry in data["media"].items():
        assert entry.get("source"), key
        assert entry["netbox_type"] in NETBOX_CABLE_TYPES, key


@pytest.mark.parametrize("name", ["seed-64gpu-h100", "dgx-h100-superpod-4su", "mixed-a100-h100",
                                  "gb200-nvl72", "minimal"])
def test_ansible_source_paths_name_rendered_files(name: str) -> None:
    """Every '*_src' variable points at a file (or folder) the same render wrote."""
    result = example_build(name)
    inventory = YAML(typ="safe").load(result.files["ansible/inventory.yml"])
    folders = {path.split("/", 1)[0] for path in result.files}
    sources: list[str] = []

    def walk(group: dict) -> None:  # type: ignore[type-arg]
        for key, value in (group.get("vars") or {}).items():
            if key.endswith("_src"):
                sources.append(value)
        for host_vars in (group.get("hosts") or {}).values():
            sources.extend(v for k, v in (host_vars or {}).items() if k.endswith("_src"))
        for child in (group.get("children") or {}).values():
            walk(child or {})

    walk(inventory["all"])
    assert sources
    for source in sources:
        assert source in result.files or source in folders, source
    gpu_types = {nt for nt, t in result.plan.node_types.items() if t.gpu_count}
    assert {s for s in sources if s.endswith(".nccl.conf")} == {
        f"nccl/{t}.nccl.conf" for t in gpu_types if t in result.plan.nccl
        and any(n.node_type == t for n in result.plan.compute_nodes)}


@pytest.mark.parametrize(("name", "plan"), PLANS, ids=IDS)
def test_the_legs_of_one_split_port_share_its_cage_s_medium(name: str, plan: Plan) -> None:
    """A split switch port's cage takes one plug: a copper splitter (one part, so one length)
    or one multi-port module with a fiber per leg. The cable table gives every leg of a cage
    the medium of its longest leg, each fiber its own stocked length; the RoCE example has
    cages where copper would reach one leg alone (before: 5 legs 'dac-active' beside a
    fiber, where the bill of materials bought fibers)."""
    split = {n for n, f in plan.fabrics.items() if f.breakout_legs > 1}
    cages: dict[tuple[str, str], list[dict[str, str]]] = {}
    for c in _rows(cabling.render(plan)["cabling/cables.csv"]):
        if c["network"] in split and re.fullmatch(r".*\ds\d+", c["b_port"]):
            cages.setdefault((c["b_device"], c["b_port"].rpartition("s")[0]), []).append(c)
    assert bool(cages) == bool(split)
    mixed = 0
    for legs in cages.values():
        assert len({leg["medium"] for leg in legs}) == 1, legs
        if int(legs[0]["transceivers"]):
            mixed += any(float(leg["estimated_m"]) <= 5 for leg in legs)
        else:
            assert len({leg["length_m"] for leg in legs}) == 1, legs
    if name == "spectrum-x-roce":
        assert mixed >= 5
