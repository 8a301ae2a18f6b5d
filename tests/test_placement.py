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
from cluster_iac.plan.power import rack_loads_w
from cluster_iac.spec.parse import parse_spec
from tests.conftest import example_build

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


def test_nvl72_racks_get_power_shelves_at_both_ends() -> None:
    plan = example_build("gb200-nvl72").plan
    shelves = sorted((d.name for d in plan.power_devices
                      if d.kind == "power-shelf" and d.rack == "nvl1"),
                     key=lambda n: int(n.rsplit("ps", 1)[1]))
    # 18 trays x 5.9 kW need four 33 kW shelves per feed: N+N on A/B is eight.
    assert len(shelves) == 8
    units = [plan.placements[s].u for s in shelves]
    assert units[:4] == [1, 2, 3, 4] and units[4:] == [48, 47, 46, 45]


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
