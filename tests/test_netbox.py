"""The NetBox files re-read as NetBox 4.x's import forms read them: columns, choices, every
reference between files, the components devices get from their types, and the power each
feed leg carries (NetBox's own per-leg sum) against the power plan's line currents."""

from __future__ import annotations

import csv
import io
import math
import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from cluster_iac.emit import netbox, netbox_cables, netbox_types
from cluster_iac.plan import Plan
from tests.conftest import EXAMPLE_IDS, ROOT, example_build
from tests.facility_fixtures import compile_data
from tests.inventory_fixtures import wired_plan
from tests.slurm_fixtures import example_data

# Each CSV's import form (netbox/dcim/forms/bulk_import.py, NetBox 4.5.8 and later): every field it
# accepts, and those it requires (a missing required column fails the whole file).
FORMS: dict[str, tuple[set[str], set[str]]] = {
    "sites": ({"name", "slug", "status", "region", "group", "tenant", "facility", "time_zone",
               "description", "physical_address", "shipping_address", "latitude", "longitude",
               "comments", "tags"}, {"name", "slug", "status"}),
    "locations": ({"site", "parent", "name", "slug", "status", "tenant", "facility",
                   "description", "tags"}, {"site", "name", "slug", "status"}),
    "manufacturers": ({"name", "slug", "description", "tags"}, {"name", "slug"}),
    "device_roles": ({"name", "slug", "color", "vm_role", "config_template", "description",
                      "tags"}, {"name", "slug"}),
    "racks": ({"site", "location", "name", "facility_id", "tenant", "status", "role",
               "form_factor", "serial", "asset_tag", "width", "u_height", "desc_units",
               "outer_width", "outer_depth", "outer_unit", "mounting_depth", "airflow",
               "weight", "max_weight", "weight_unit", "description", "comments", "tags"},
              {"site", "name", "status", "width"}),
    "devices": ({"name", "role", "tenant", "manufacturer", "device_type", "platform", "serial",
                 "asset_tag", "status", "site", "location", "rack", "position", "face",
                 "latitude", "longitude", "parent", "device_bay", "airflow", "virtual_chassis",
                 "vc_position", "vc_priority", "cluster", "description", "config_template",
                 "comments", "tags"}, {"role", "manufacturer", "device_type", "status", "site"}),
    "cables": ({"side_a_site", "side_a_device", "side_a_power_panel", "side_a_type",
                "side_a_name", "side_b_site", "side_b_device", "side_b_power_panel",
                "side_b_type", "side_b_name", "type", "status", "profile", "tenant", "label",
                "color", "length", "length_unit", "description", "owner", "comments", "tags"},
               {"side_a_type", "side_a_name", "side_b_type", "side_b_name"}),
    "power_panels": ({"site", "location", "name", "description", "comments", "tags"},
                     {"site", "name"}),
    "power_feeds": ({"site", "power_panel", "location", "rack", "name", "status", "type",
                     "mark_connected", "supply", "phase", "voltage", "amperage",
                     "max_utilization", "tenant", "description", "comments", "tags"},
                    {"site", "power_panel", "name", "status", "type", "supply", "phase"}),
}
FORMS["power_feed_cables"] = FORMS["cables"]
# DeviceTypeImportForm's fields, the component lists DeviceTypeImportView reads, and each
# template form's fields (name required in each).
TYPE_FIELDS = {"manufacturer", "default_platform", "model", "slug", "part_number", "u_height",
               "exclude_from_utilization", "is_full_depth", "subdevice_role", "airflow",
               "description", "weight", "weight_unit", "comments", "tags"}
TEMPLATE_FIELDS = {
    "interfaces": {"name", "label", "type", "enabled", "mgmt_only", "description", "bridge",
                   "poe_mode", "poe_type", "rf_role"},
    "power-ports": {"name", "label", "type", "maximum_draw", "allocated_draw", "description"},
    "power-outlets": {"name", "label", "type", "color", "power_port", "feed_leg",
                      "description"},
}
# Choice values, copied from netbox/dcim/choices.py (the subsets a cluster can use).
STATUS = {"planned", "staging", "active", "decommissioning", "retired"}  # Site/Location
CHOICES = {
    ("sites", "status"): STATUS,
    ("locations", "status"): STATUS,
    ("racks", "status"): {"reserved", "available", "planned", "active", "deprecated"},
    ("racks", "width"): {"10", "19", "21", "23"},
    ("devices", "status"): {"offline", "active", "planned", "staged", "failed", "inventory",
                            "decommissioning"},
    ("devices", "face"): {"front", "rear", ""},
    ("cables", "status"): {"connected", "planned", "decommissioning"},
    ("cables", "type"): {"cat6", "dac-passive", "dac-active", "aoc", "mmf-om4", "smf-os2",
                         "power"},
    ("cables", "length_unit"): {"km", "m", "cm", "mi", "ft", "in"},
    ("cables", "side_a_type"): {"dcim.interface", "dcim.powerport"},
    ("cables", "side_b_type"): {"dcim.interface", "dcim.poweroutlet"},
    ("power_feeds", "status"): {"offline", "active", "planned", "failed"},
    ("power_feeds", "type"): {"primary", "redundant"},
    ("power_feeds", "supply"): {"ac", "dc"},
    ("power_feeds", "phase"): {"single-phase", "three-phase"},
    ("power_feed_cables", "side_a_type"): {"dcim.powerfeed"},
    ("power_feed_cables", "side_b_type"): {"dcim.powerport"},
    ("power_feed_cables", "type"): {"power"},
    ("power_feed_cables", "status"): {"connected", "planned", "decommissioning"},
}
TEMPLATE_CHOICES = {
    ("interfaces", "type"): {"infiniband-edr", "infiniband-hdr", "infiniband-ndr",
                             "infiniband-xdr", "1000base-t", "25gbase-x-sfp28",
                             "100gbase-x-qsfp28", "200gbase-x-qsfp56", "400gbase-x-osfp",
                             "800gbase-x-osfp", "other"},
    ("power-ports", "type"): {"iec-60320-c14", "iec-60320-c20", "iec-60309-p-n-e-6h",
                              "iec-60309-3p-n-e-6h", "other"},
    ("power-outlets", "type"): {"iec-60320-c13", "iec-60320-c19", "iec-60309-p-n-e-6h",
                                "other"},
    ("power-outlets", "feed_leg"): {"A", "B", "C"},
}
PLANS = [(name, example_build(name).plan) for name in EXAMPLE_IDS] + [("wired", wired_plan())]
IDS = [name for name, _ in PLANS]


def _read(files: dict[str, str]) -> dict[str, Any]:
    """Every file as NetBox reads it: CSV tables (one-row vocabulary files joined per
    folder, as importing each would) and device type documents."""
    tables: dict[str, list[dict[str, str]]] = defaultdict(list)
    headers: dict[str, set[tuple[str, ...]]] = defaultdict(set)
    types = []
    folders = {"locations": "locations", "manufacturers": "manufacturers",
               "device-roles": "device_roles"}
    for path, text in files.items():
        parts = path.split("/")
        if parts[1] == "device-types":
            types.append((parts[2], YAML(typ="safe").load(text)))
            continue
        # a table's parts (cables/<row>/001.csv, racks-001.csv ...) are one table
        table = (folders[parts[1]] if parts[1] in folders
                 else parts[1] if len(parts) == 4  # netbox/<table>/<row of racks>/NNN.csv
                 else re.sub(r"-\d{3,}$", "", parts[1].removesuffix(".csv")))
        reader = csv.DictReader(io.StringIO(text))
        rows = list(reader)
        headers[table].add(tuple(reader.fieldnames or ()))
        tables[table] += rows
    return {"tables": tables, "headers": headers, "types": types}


def _netbox(plan: Plan) -> dict[str, str]:
    """Every NetBox file: the three families' (the cables and the device types, which read
    the cable table, are families of their own)."""
    return {**netbox.render(plan), **netbox_types.render(plan), **netbox_cables.render(plan)}


@pytest.fixture(params=PLANS, ids=IDS, scope="module")
def read(request: pytest.FixtureRequest) -> tuple[Plan, dict[str, Any]]:
    plan = request.param[1]
    return plan, _read(_netbox(plan))


def test_columns_and_choices_are_the_forms(read: tuple[Plan, dict[str, Any]]) -> None:
    _plan, nb = read
    assert set(nb["headers"]) == set(FORMS)
    for table, headers in nb["headers"].items():
        allowed, required = FORMS[table]
        for header in headers:
            assert required <= set(header) <= allowed, (table, header)
        for row in nb["tables"][table]:
            assert all(row[c] for c in required if c in row), (table, row)
            for (t, column), values in CHOICES.items():
                if t == table:
                    assert row[column] in values, (table, column, row)
    for feed in nb["tables"]["power_feeds"]:
        assert int(feed["voltage"]) > 0 and int(feed["amperage"]) > 0
        assert 1 <= int(feed["max_utilization"]) <= 100


def test_device_types_are_template_documents(read: tuple[Plan, dict[str, Any]]) -> None:
    _plan, nb = read
    seen = Counter()
    for folder, doc in nb["types"]:
        assert folder == doc["manufacturer"]
        assert set(doc) - set(TEMPLATE_FIELDS) <= TYPE_FIELDS
        assert {"manufacturer", "model", "slug"} <= set(doc)
        seen[(doc["manufacturer"], doc["model"])] += 1
        for kind, fields in TEMPLATE_FIELDS.items():
            parts = doc.get(kind, [])
            assert len({p["name"] for p in parts}) == len(parts)
            for part in parts:
                assert "name" in part and set(part) <= fields, (kind, part)
                for (k, column), values in TEMPLATE_CHOICES.items():
                    if k == kind and column in part:
                        assert part[column] in values, (kind, part)
                for draw in ("maximum_draw", "allocated_draw"):
                    if draw in part:
                        assert isinstance(part[draw], int) and part[draw] >= 1, part
        ports = {p["name"] for p in doc.get("power-ports", [])}
        assert all(o["power_port"] in ports for o in doc.get("power-outlets", []))
    assert all(n == 1 for n in seen.values())


def _components(nb: dict[str, Any]) -> dict[tuple[str, str], dict[tuple[str, str], Any]]:
    """What NetBox creates with each device: its type's templates (Device.save())."""
    templates = {}
    for _folder, doc in nb["types"]:
        parts = {}
        for kind, model in (("interfaces", "dcim.interface"), ("power-ports", "dcim.powerport"),
                            ("power-outlets", "dcim.poweroutlet")):
            parts.update({(model, p["name"]): p for p in doc.get(kind, [])})
        templates[(doc["manufacturer"], doc["model"])] = parts
    return {(d["site"], d["name"]): templates[(d["manufacturer"], d["device_type"])]
            for d in nb["tables"]["devices"]}


def test_every_reference_resolves(read: tuple[Plan, dict[str, Any]]) -> None:
    plan, nb = read
    t = nb["tables"]
    sites = {s["name"] for s in t["sites"]}
    locations = {(loc["site"], loc["name"]) for loc in t["locations"]}
    assert all(loc["site"] in sites for loc in t["locations"])
    assert len(locations) == len(t["locations"])
    racks = {(r["site"], r["location"], r["name"]) for r in t["racks"]}
    assert len(racks) == len(t["racks"]) == len(plan.racks)
    assert all((r["site"], r["location"]) in locations for r in t["racks"])
    makers = {m["name"] for m in t["manufacturers"]}
    roles = {r["name"] for r in t["device_roles"]}
    types = {(doc["manufacturer"], doc["model"]) for _f, doc in nb["types"]}
    assert {m for m, _model in types} <= makers
    names = Counter((d["site"], d["name"]) for d in t["devices"])
    assert all(n == 1 for n in names.values())
    for d in t["devices"]:
        assert d["role"] in roles and (d["manufacturer"], d["device_type"]) in types
        # DeviceImportForm finds the rack among the racks of the row's site and location
        assert (d["site"], d["location"], d["rack"]) in racks, d
    panels = {(p["site"], p["name"]) for p in t["power_panels"]}
    assert all((p["site"], p["location"]) in locations for p in t["power_panels"])
    feeds = {(f["site"], f["power_panel"], f["name"]) for f in t["power_feeds"]}
    for f in t["power_feeds"]:
        assert (f["site"], f["power_panel"]) in panels
        assert (f["site"], f["location"], f["rack"]) in racks, f
    components = _components(nb)
    cabled: Counter[tuple[str, ...]] = Counter()
    for cable in t["cables"] + t["power_feed_cables"]:
        for side in "ab":
            kind, name = cable[f"side_{side}_type"], cable[f"side_{side}_name"]
            site = cable[f"side_{side}_site"]
            if kind == "dcim.powerfeed":
                end = (site, cable[f"side_{side}_power_panel"], name)
                assert end in feeds, cable
            else:
                device = (site, cable[f"side_{side}_device"])
                assert (kind, name) in components[device], cable
                end = (*device, kind, name)
            cabled[end] += 1
    assert [end for end, n in cabled.items() if n > 1] == []  # "already connected"
    assert len(t["power_feed_cables"]) == len(feeds) == len(plan.power_feeds)
    assert len(t["cables"]) == len(plan.cables)


@pytest.mark.parametrize("name,plan", PLANS, ids=IDS)
def test_large_tables_come_in_parts_that_import_inside_the_timeout(name: str,
                                                                    plan: Plan) -> None:
    """Each part holds at most what NetBox imports in IMPORT_SECONDS at the measured rate,
    half of the 120 s its gunicorn configuration allows a request; the parts, in order, are
    the whole table, each with the header."""
    files = _netbox(plan)
    assert netbox.IMPORT_SECONDS * 2 <= 120
    for table, rate in netbox.ROWS_PER_SECOND.items():
        pattern = rf"netbox/{table}((-\d{{3,}})?|/[^/]+/([a-z]+-)?\d{{3}})\.csv"
        paths = sorted(p for p in files if re.fullmatch(pattern, p))
        assert paths, table
        assert (len(paths) == 1 or all(re.search(r"-\d{3}\.csv$", p) for p in paths)
                or all(re.fullmatch(rf"netbox/{table}/[^/]+/([a-z]+-)?\d{{3}}\.csv", p)
                       for p in paths))
        rows: list[dict[str, str]] = []
        for path in paths:
            reader = csv.DictReader(io.StringIO(files[path]))
            part = list(reader)
            assert tuple(reader.fieldnames or ()) in {netbox.COLUMNS.get(table),
                                                      netbox_cables.COLUMNS}
            assert 1 <= len(part) <= netbox.rows_per_part(table)
            assert len(part) / rate <= netbox.IMPORT_SECONDS
            rows += part
        if table == "cables":
            assert len(rows) == len(plan.cables)
        if table == "devices":
            assert len(rows) == len(plan.devices)
    if name == "dgx-h100-superpod-4su":  # 4,287 cables (one POST took 813 s): 29 parts of
        # at most 300, each of one network in one row of racks (mgmt 9, each unit's row 5)
        assert len([p for p in files if p.startswith("netbox/cables/")]) == 29


def test_every_power_port_and_outlet_has_a_type(read: tuple[Plan, dict[str, Any]]) -> None:
    """The devicetype-library schema requires a type on each; NetBox's import accepts it."""
    _plan, nb = read
    untyped = [(doc["model"], part["name"]) for _f, doc in nb["types"]
               for kind in ("power-ports", "power-outlets") for part in doc.get(kind, [])
               if not part.get("type")]
    assert untyped == []


def test_outlets_take_the_profiles_outlet_type(read: tuple[Plan, dict[str, Any]]) -> None:
    """An outlet's type is its PDU profile's outlet_type, else 'other': from the spec alone,
    so adding a rack changes no device type (tests/test_growth.py)."""
    plan, nb = read
    profiles = plan.settings.power.pdu_profiles
    for _folder, doc in nb["types"]:
        for outlet in doc.get("power-outlets", []):
            assert outlet["type"] == (profiles[doc["model"]].outlet_type or "other")


def test_a_declared_outlet_type_receives_the_cords_of_its_plug() -> None:
    """The seed's HGX PSUs take C19-C20 cords; declared C19 outlets receive every one of them
    (the rack's management switches' C14 cords would want C13 outlets: a mixed PDU is not
    modelled, and nothing checks the declared type against the cords yet)."""
    data = example_data("seed-64gpu-h100")
    data["power"]["pdu_profiles"]["seed-415v"]["outlet_type"] = "iec-60320-c19"
    nb = _read(_netbox(compile_data(data)))
    components = _components(nb)
    cords = [c for c in nb["tables"]["cables"] if c["side_b_device"].startswith("r01-pdu")
             and c["side_a_device"].startswith("compute")]
    assert len(cords) == 8 * 6  # eight HGX nodes, six PSUs each
    for c in cords:
        psu = components[(c["side_a_site"], c["side_a_device"])][("dcim.powerport",
                                                                 c["side_a_name"])]
        outlet = components[(c["side_b_site"], c["side_b_device"])][("dcim.poweroutlet",
                                                                    c["side_b_name"])]
        assert (psu["type"], outlet["type"]) == ("iec-60320-c20", "iec-60320-c19"), c


def test_device_types_open_with_the_yaml_start_the_import_page_detects(
        read: tuple[Plan, dict[str, Any]]) -> None:
    """NetBox's import page reads its default 'auto' format as YAML only when the text
    starts with '---' (utilities/forms/bulk_import.py, BulkImportForm._detect_format)."""
    plan, _nb = read
    docs = {p: t for p, t in netbox_types.render(plan).items()}
    assert docs and all(text.startswith("---\n") for text in docs.values())


def _leg_draws(nb: dict[str, Any]) -> dict[str, dict[str, float]]:
    """NetBox's per-leg allocated draw of each feed (PowerPort.get_power_draw on the PDU's
    inlet that the feed is cabled to): the PSUs cabled to the inlet's outlets, by leg."""
    t = nb["tables"]
    components = _components(nb)
    psu_on = {}
    for c in t["cables"]:
        if c["side_b_type"] == "dcim.poweroutlet":
            psu = components[(c["side_a_site"], c["side_a_device"])][("dcim.powerport",
                                                                     c["side_a_name"])]
            psu_on[(c["side_b_site"], c["side_b_device"], c["side_b_name"])] = psu
    legs: dict[str, dict[str, float]] = {}
    for c in t["power_feed_cables"]:
        site, pdu, inlet = c["side_b_site"], c["side_b_device"], c["side_b_name"]
        by_leg: dict[str, float] = defaultdict(float)
        for (kind, name), outlet in components[(site, pdu)].items():
            if kind == "dcim.poweroutlet" and outlet["power_port"] == inlet:
                psu = psu_on.get((site, pdu, name))
                if psu:
                    by_leg[outlet.get("feed_leg", "")] += psu["allocated_draw"]
        legs[c["side_a_name"]] = dict(by_leg)
    return legs


@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_each_feed_leg_carries_the_plans_load(name: str) -> None:
    """Per leg of a wye feed: the PSUs' allocated draws on that leg's outlets add up to the
    plan's line current x the cord voltage x the power factor; a delta or single-phase
    feed's total to its load (NetBox rounds each draw to a whole watt: half a watt each).
    The examples only: their cords and feeds come from the power pass."""
    plan = example_build(name).plan
    nb = _read(_netbox(plan))
    legs = _leg_draws(nb)
    circuit = {c.feed: c for c in plan.power_circuits}
    cords = Counter((c.pdu, c.feed_leg) for c in plan.power_cords)
    checked = 0
    for feed in plan.power_feeds:
        got = legs[feed.name]
        c = circuit[feed.name]
        if feed.wiring == "wye":
            for line, amps in zip(feed.lines, feed.normal_a, strict=True):
                leg = {"L1": "A", "L2": "B", "L3": "C"}[line]
                want = amps * c.cord_v * c.power_factor
                assert math.isclose(got.get(leg, 0.0), want,
                                    abs_tol=0.5 * cords[(feed.pdu, leg)] + 1e-6), (feed, leg)
                checked += want > 0
        else:
            total = sum(got.values())
            assert math.isclose(total, feed.load_w,
                                abs_tol=0.5 * sum(n for (pdu, _), n in cords.items()
                                                  if pdu == feed.pdu) + 1e-6), feed
            checked += feed.load_w > 0
    assert checked  # a feed with load, so NetBox's feed view shows more than 0 %


def test_delta_outlets_have_no_leg_and_the_feed_its_load(tmp_path: Path) -> None:
    """A 208 V three-phase PDU is delta: its outlets sit on line pairs, which NetBox's legs
    (phases) cannot name, so they carry no feed_leg; the feed's total is still the plan's."""
    from cluster_iac.render import build

    text = (ROOT / "examples" / "minimal.yaml").read_text()
    spec = tmp_path / "delta.yaml"
    spec.write_text(text.replace("voltage_v: 415, phases: 3, breaker_a: 32",
                                 "voltage_v: 208, phases: 3, breaker_a: 60"))
    plan = build(spec).plan
    assert {f.wiring for f in plan.power_feeds} == {"delta"}
    nb = _read(_netbox(plan))
    outlets = [o for _f, doc in nb["types"] for o in doc.get("power-outlets", [])]
    assert outlets and all("feed_leg" not in o for o in outlets)
    legs = _leg_draws(nb)
    for feed in plan.power_feeds:
        n = sum(1 for c in plan.power_cords if c.pdu == feed.pdu)
        assert math.isclose(sum(legs[feed.name].values()), feed.load_w, abs_tol=0.5 * n + 1e-6)


def test_device_parts_hold_at_most_the_components_an_import_minute_creates() -> None:
    """Each devices part holds at most rows_per_part('devices') devices and
    COMPONENTS_PER_SECOND x IMPORT_SECONDS components of their types (issue 29: a part of
    120 switches, PDUs and servers, 5,988 components, took 103 s of NetBox's 120)."""
    plan = example_build("dgx-h100-superpod-4su").plan
    types = netbox_types.device_types(plan)
    components = {model: len(t.interfaces) + len(t.power_ports) + len(t.power_outlets)
                  for model, t in types.items()}
    devices = [plan.devices[i] for i in netbox.by_rack(plan, [d.rack for d in plan.devices])]
    parts = netbox.device_parts(plan, devices)
    bounds = [(start, stop) for _, start, stop in parts]
    assert bounds[0][0] == 0 and bounds[-1][1] == len(plan.devices)
    assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:], strict=False))
    most = netbox.COMPONENTS_PER_SECOND * netbox.IMPORT_SECONDS
    for path, start, stop in parts:
        assert stop - start <= netbox.rows_per_part("devices")
        assert {d.row for d in devices[start:stop]} == {path.split("/")[2]}  # one row of racks
        weight = sum(components[d.model] for d in devices[start:stop])
        assert weight <= most or stop - start == 1
    assert len(bounds) > -(-len(plan.devices) // netbox.rows_per_part("devices"))


def test_device_types_are_made_once_a_plan_and_let_go_with_it() -> None:
    """devices.csv and the device type files read one making of the types (the cache holds
    each plan weakly): once the plan is let go (the changes command frees its plan before it
    reads the trees), nothing holds it."""
    import gc
    import weakref

    from cluster_iac.render import build

    plan = build(ROOT / "examples" / "minimal.yaml", emit=False).plan
    first = netbox_types.device_types(plan)
    assert netbox_types.device_types(plan) is first
    netbox.render(plan)
    assert netbox_types.device_types(plan) is first
    gone = weakref.ref(plan)
    del plan
    gc.collect()
    assert gone() is None
