"""Placement: every device in a rack unit, no overlaps, rack limits; invalid specs as data."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from cluster_iac.base.errors import CompileError
from cluster_iac.checks.facility import rack_power, rack_weight, rack_weights_kg
from cluster_iac.compile import compile_plan
from cluster_iac.load.loader import load_spec_file
from cluster_iac.lock.path import lock_path
from cluster_iac.lock.trailer import sealed, unsealed
from cluster_iac.plan import Plan
from cluster_iac.plan.power import rack_loads_w
from cluster_iac.render import build
from cluster_iac.spec.parse import parse_spec
from tests.conftest import ROOT, example_build

INVALID = sorted((Path(__file__).parent / "data" / "invalid" / "facility").glob("*.yaml"))


def test_every_device_is_placed(example: str) -> None:
    plan = example_build(example).plan
    names = {n.hostname for n in plan.nodes} | {s.name for s in plan.switches}
    assert names <= set(plan.placements)
    pdus = [d.name for d in plan.power_devices if d.kind == "pdu"]
    assert pdus and all(plan.placements[p].u == 0 and plan.placements[p].height_u == 0
                        for p in pdus)


def test_no_two_devices_share_a_unit(example: str) -> None:
    plan = example_build(example).plan
    heights = {r.name: r.height_u for r in plan.racks}
    used: dict[tuple[str, int], str] = {}
    for name, place in plan.placements.items():
        for u in range(place.u, place.u + place.height_u):
            assert 1 <= u <= heights[place.rack], f"{name} at U{u} outside {place.rack}"
            assert (place.rack, u) not in used, f"{name} and {used[(place.rack, u)]} share U{u}"
            used[(place.rack, u)] = name


def test_nodes_bottom_up_switches_top_down() -> None:
    plan = example_build("dgx-h100-superpod-4su").plan
    rack = [n for n in plan.nodes if n.rack == "su1-r1"]
    assert [plan.placements[n.hostname].u for n in rack] == [1, 9, 17, 25]
    top = [s for s in plan.switches if s.rack == "su1-r1"]
    assert plan.placements[top[0].name].u + top[0].height_u - 1 == 48


# The NVL72 rack as delivered, from U1 up (catalog platforms.yaml rack_layout, with its
# sources: NVIDIA DGX GB200 User Guide "Rack Configuration", NVIDIA BCM "Power Shelf
# Integration", SemiAnalysis and ServeTheHome on the Oberon rack's order): written out here
# so that a change of the catalog's layout, or of the placement, fails this test.
NVL72_FRONT = ["shelf"] * 4 + ["tray"] * 8 + ["nvswitch"] * 9 + ["tray"] * 10 + ["shelf"] * 4


def _rack_front(plan: Plan, rack: str) -> dict[int, str]:
    """Unit -> the kind of device there, in one rack."""
    kinds = {n.hostname: "tray" for n in plan.nodes}
    kinds.update((s.name, "nvswitch" if s.tier == "nvswitch-tray" else s.tier)
                 for s in plan.switches)
    kinds.update((d.name, "shelf") for d in plan.power_devices if d.kind == "power-shelf")
    return {place.u: kinds[name] for name, place in plan.placements.items()
            if place.rack == rack and place.height_u}


def test_nvl72_trays_switch_trays_and_shelves_sit_at_the_catalog_units() -> None:
    plan = example_build("gb200-nvl72").plan
    layout = plan.catalog.platforms["gb200-nvl72-tray"].rack_layout
    kind = {"power-shelf": "shelf", "compute-tray": "tray", "nvlink-switch-tray": "nvswitch"}
    front = [kind[run.part] for run in layout for _ in range(run.count)]
    assert front == NVL72_FRONT
    for rack in ("nvl1", "nvl2", "nvl3", "nvl4"):
        units = _rack_front(plan, rack)
        assert [units.get(u) for u in range(1, 36)] == NVL72_FRONT, rack
        # the rack's own management switches stack from the top, above the layout
        assert {units[47], units[48]} == {"access"} and set(units) == {*range(1, 36), 47, 48}
    # each tray at its own slot, in name order from the bottom: 8 below the switch trays
    trays = [n.hostname for n in plan.nodes if n.rack == "nvl1"]
    assert [plan.placements[t].u for t in trays] == [*range(5, 13), *range(22, 32)]
    assert [plan.placements[f"nvl1-nvsw{k}"].u for k in range(1, 10)] == list(range(13, 22))
    assert [plan.placements[f"nvl1-ps{k}"].u for k in range(1, 9)] == [1, 2, 3, 4, 32, 33, 34, 35]


def test_nvl72_switch_trays_sit_between_compute_trays() -> None:
    plan = example_build("gb200-nvl72").plan
    for domain in plan.nvlink_domains:
        if domain.kind != "rack":
            continue
        trays = [plan.placements[h].u for h in domain.nodes]
        switches = [plan.placements[s].u for s in domain.switch_trays]
        below = [u for u in trays if u < min(switches)]
        above = [u for u in trays if u > max(switches)]
        assert (len(below), len(above)) == (8, 10), domain.name
        # the switch trays are one unbroken run (the NVLink spine's cartridges)
        assert sorted(switches) == list(range(min(switches), min(switches) + 9))
        assert max(below) + 1 == min(switches) and max(switches) + 1 == min(above)


def test_nvl72_partial_rack_keeps_the_delivered_slots() -> None:
    """A rack of fewer trays (no lock) keeps the delivered slots; the rest stay empty."""
    data, _ = load_spec_file(ROOT / "examples" / "gb200-nvl72.yaml")
    data["node_groups"][0].update(count=64, per_rack=16)
    plan = compile_plan(parse_spec(data))
    trays = [n.hostname for n in plan.nodes if n.rack == "nvl1"]
    assert len(trays) == 16
    assert [plan.placements[t].u for t in trays] == [*range(5, 13), *range(22, 30)]
    assert [plan.placements[f"nvl1-nvsw{k}"].u for k in range(1, 10)] == list(range(13, 22))
    units = _rack_front(plan, "nvl1")
    assert 30 not in units and 31 not in units  # the two empty tray slots stay free


@pytest.mark.parametrize("case", INVALID, ids=lambda p: p.stem)
def test_invalid_facility_spec_is_located(case: Path) -> None:
    code, dotted = re.match(r"# expect: (\S+) (\S+)", case.read_text()).groups()  # type: ignore[union-attr]
    path = tuple(int(p) if p.isdigit() else p for p in dotted.split("."))
    data, source = load_spec_file(case)
    with pytest.raises(CompileError) as info:
        compile_plan(parse_spec(data))
    found = [(d.code, d.path) for d in info.value.diagnostics]
    assert (code, path) in found
    line = source.source_line(source.locate(path).line) or ""
    assert str(path[-1]) in line


def test_rack_height_message_has_needed_and_available() -> None:
    case = next(p for p in INVALID if p.stem == "rack_too_short")
    data, _ = load_spec_file(case)
    with pytest.raises(CompileError) as info:
        compile_plan(parse_spec(data))
    # 4 x 8U DGX + 1U controller + 1U management access switch = 34 U.
    message = info.value.diagnostics[0].message
    assert message == "rack r1 needs 34 U for its devices but is 24 U high"


def test_rack_power_check_cites_load_and_limit() -> None:
    plan = example_build("dgx-h100-superpod-4su").plan
    load_kw = rack_loads_w(plan)["su1-r1"] / 1000
    racks = tuple(dataclasses.replace(r, max_power_kw=40.0) if r.name == "su1-r1" else r
                  for r in plan.racks)
    findings = list(rack_power(dataclasses.replace(plan, racks=racks)))
    assert [f.code for f in findings] == ["FACILITY-RACK-POWER"]
    assert findings[0].message == (f"rack su1-r1 draws {load_kw:.1f} kW at maximum, "
                                   f"{100 * load_kw / 40:.0f}% of its 40 kW limit")
    assert findings[0].path == ("rows", 0, "racks", 0, "max_power_kw")
    assert list(rack_power(plan)) == []


def test_rack_weight_check_cites_weight_and_rating() -> None:
    plan = example_build("dgx-h100-superpod-4su").plan
    kg = rack_weights_kg(plan)["su1-r1"]
    assert kg >= 4 * 130.45  # four DGX H100 at 130.45 kg each, plus switches
    racks = tuple(dataclasses.replace(r, max_weight_kg=500.0) if r.name == "su1-r1" else r
                  for r in plan.racks)
    findings = list(rack_weight(dataclasses.replace(plan, racks=racks)))
    assert [f.code for f in findings] == ["FACILITY-RACK-WEIGHT"]
    assert findings[0].message == (f"rack su1-r1 holds {kg:.0f} kg of devices, "
                                   f"{100 * kg / 500:.0f}% of its 500 kg rating")
    assert list(rack_weight(plan)) == []


def _links(plan, network: str) -> list:  # type: ignore[no-untyped-def]
    return [link for link in plan.links.rows() if link.network == network]


def test_management_switch_per_rack_with_hosts() -> None:
    plan = example_build("seed-64gpu-h100").plan
    access = sorted((s.network, s.rack) for s in plan.switches if s.tier == "access")
    assert access == [("bmc", "r01"), ("bmc", "r02"), ("bmc", "s01"), ("management", "r01"),
                      ("management", "r02"), ("management", "s01")]
    # 14 hosts, one cable each, plus each of the three access switches' two uplinks to the
    # aggregation pair that a third rack brings, and the pair's two-cable MLAG peer link.
    links = _links(plan, "management")
    assert len(links) == 14 + 3 * 2 + 2
    assert [link.tier for link in links].count("peer-link") == 2
    assert all(link.a_port and link.b_port for link in links)


def test_management_aggregation_sized_from_ports() -> None:
    plan = example_build("dgx-h100-superpod-4su").plan
    access = [s for s in plan.switches if s.network == "management" and s.tier == "access"]
    agg = [s for s in plan.switches if s.network == "management" and s.tier == "aggregation"]
    # 44 downlinks per 48-port aggregation switch (two ports uplink, two the MLAG peer link):
    # one pair per 44 racks.
    assert len(agg) == 2 * -(-len(access) // 44)
    agg_names = {a.name for a in agg}
    links = _links(plan, "management")
    for sw in access:
        assert sum(1 for k in links if k.a_device == sw.name and k.b_device in agg_names) == 2
    for sw in plan.switches:
        if sw.network in ("management", "bmc"):
            used = [k.a_port if k.a_device == sw.name else k.b_port
                    for k in _links(plan, sw.network) if sw.name in (k.a_device, k.b_device)]
            assert len(used) == len(set(used)) <= sw.ports


def test_adding_racks_switches_stack_in_bands() -> None:
    """Top of rack: the rack's own management switches, then upper tiers, then leaves."""
    plan = example_build("dgx-h100-superpod-4su").plan
    net = sorted((s for s in plan.switches if s.rack == "net-r1"),
                 key=lambda s: -plan.placements[s.name].u)
    tiers = [s.tier for s in net]
    assert tiers[0] == "access"
    assert tiers.index("leaf") > max(i for i, t in enumerate(tiers) if t in ("spine", "core",
                                                                              "aggregation"))


def test_a_locked_nvl72_tray_keeps_its_units(tmp_path: Path) -> None:
    """The lock wins over the layout: a tray pinned elsewhere (a delivery drawing's unit)
    stays there, the other devices keep their slots."""
    spec = tmp_path / "nvl72.yaml"
    spec.write_text((ROOT / "examples" / "gb200-nvl72.yaml").read_text())
    first = build(spec)
    text = unsealed(first.lock.after)
    assert "place gb-001 nvl1 5 1\n" in text
    lock_path(spec).write_text(sealed(text.replace("place gb-001 nvl1 5 1\n",
                                                   "place gb-001 nvl1 40 1\n")))
    plan = build(spec).plan
    assert plan.placements["gb-001"].u == 40
    assert plan.placements["gb-002"].u == 6 and plan.placements["nvl1-nvsw1"].u == 13
