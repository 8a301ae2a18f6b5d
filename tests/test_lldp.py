"""LLDP tables (the real lldpd's, tests/data/lldp/) against the RoCE sample's Ethernet cables:
`fabric verify` and `reconcile` find nothing in them as saved, and name by label and place
each difference planted in a copy; hostile or foreign files are located errors."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cluster_iac.cli.main import main
from cluster_iac.formats.lldpcli import LldpError, detect, line_numbers, parse
from cluster_iac.reconcile.ethernet import silent_end
from cluster_iac.reconcile.sources import detect as kind_of
from tests.conftest import ROOT, example_build
from tests.lldp_fixtures import DATA, edit, entries, sample_spec, saved_tables


@pytest.fixture(scope="module")
def spec(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sample_spec(tmp_path_factory.mktemp("spec"))


def _verify(spec: Path, *args: str) -> tuple[int, list[str], str]:
    result = CliRunner().invoke(main, ["fabric", "verify", str(spec), *args])
    return result.exit_code, result.stdout.splitlines(), result.stderr


def _reconcile(spec: Path, *paths: Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["reconcile", str(spec), *map(str, paths)])
    return result.exit_code, result.stdout, result.stderr


def _kinds(lines: list[str]) -> list[str]:
    return [line.split(":")[0] for line in lines]


def test_both_forms_read_alike() -> None:
    """`-f json` and `-f json0` of one table give the same rows, each at its record's line."""
    plain = parse((DATA / "gpu-01.lldp.json").read_text())
    zero = parse((DATA / "json0" / "gpu-01.lldp.json").read_text())
    rows = [(r.interface, r.system, r.port_id, r.port_type, r.port_descr)
            for r in plain.neighbors]
    assert rows == [(r.interface, r.system, r.port_id, r.port_type, r.port_descr)
                    for r in zero.neighbors]
    # a switch port with an alias: its name as the id, the alias as the description
    assert rows == [("rdma0", "eth-leaf-su1-r1", "p1s1", "ifname",
                     "gpu-01:rdma0 CF-r01.U01.rdma0"),
                    ("rdma1", "eth-leaf-su1-r2", "p1s1", "ifname",
                     "gpu-01:rdma1 CF-r01.U01.rdma1"),
                    ("eth0", "mgmt-r01-1", "swp4", "ifname", "gpu-01:eth0 MG-r01.U01.eth0")]
    # a host's port (no alias): its MAC as the id, its name as the description
    leaf = parse((DATA / "eth-leaf-su1-r1.lldp.json").read_text()).neighbors[0]
    assert (leaf.interface, leaf.system, leaf.port_type, leaf.port_descr) == (
        "p1s1", "gpu-01", "mac", "rdma0")
    text = (DATA / "gpu-01.lldp.json").read_text().splitlines()
    assert all('"via"' in text[r.line - 1] for r in plain.neighbors)


def test_the_saved_tables_match_the_plan(spec: Path, tmp_path: Path) -> None:
    tables = saved_tables(tmp_path)
    code, out, err = _verify(spec, str(tables))
    assert code == 0, out + [err]
    assert out == [f"{tables}: the Ethernet cabling matches the plan (42 of 54 cables seen "
                   "from 14 LLDP table(s); 12 cable(s) to PDUs or BMCs, which send no LLDP, "
                   "not judged)"]
    code, out, err = _verify(spec, str(tables), "--network", "compute")
    assert code == 0 and "the compute cabling matches the plan (24 of 24 cables" in out[0]
    code, out, err = _reconcile(spec, *sorted(tables.iterdir()))
    assert code == 0 and "error[" not in out + err
    assert "(14 lldp judged)" in out
    assert _reconcile(spec, tables)[1] == out  # a folder stands for its files


def test_a_removed_cable_is_missing_by_its_label(spec: Path, tmp_path: Path) -> None:
    """The leaf-spine cable p57 <-> p1 gone from both ends' tables: MISSING, located."""
    tables = saved_tables(tmp_path)
    edit(tables / "eth-leaf-su1-r1.lldp.json", keep=lambda name, _: name != "p57")
    edit(tables / "eth-spine-1.lldp.json", keep=lambda name, _: name != "p1")
    code, out, err = _verify(spec, str(tables))
    assert code == 1
    assert out == ["MISSING CF-net1.U37.p57: planned a/net1/U37 eth-leaf-su1-r1 p57 <-> "
                   "a/net1/U39 eth-spine-1 p1"]
    assert err.strip().endswith("1 missing, 0 miswired, 0 extra")
    code, out, _ = _reconcile(spec, *sorted(tables.iterdir()))
    assert code == 1
    assert out.startswith(f"{tables / 'eth-leaf-su1-r1.lldp.json'}: "
                          "error[RECONCILE-LLDP-MISSING] CF-net1.U37.p57: MISSING")
    assert "fix: plug in the cable by its label" in out


def test_a_cable_seen_from_one_end_is_found(spec: Path, tmp_path: Path) -> None:
    """lldpd on the spine hears nothing on p1, the leaf hears the spine: the cable is there."""
    tables = saved_tables(tmp_path)
    edit(tables / "eth-spine-1.lldp.json", keep=lambda name, _: name != "p1")
    assert _verify(spec, str(tables))[0] == 0


def _swap(tables: Path) -> None:
    """gpu-01 rdma0 and gpu-02 rdma0 swapped at the leaf, as every table then shows it."""
    def neighbour(name: str, record: dict[str, Any]) -> None:
        swap = {"p1s1": ("gpu-02", "rdma0"), "p1s2": ("gpu-01", "rdma0")}
        if name in swap:
            system, port = swap[name]
            record["chassis"] = {system: next(iter(record["chassis"].values()))}
            record["port"]["descr"] = port

    edit(tables / "eth-leaf-su1-r1.lldp.json", change=neighbour)
    # the hosts now hear the other leaf port: its name, and its alias (the switch's config)
    for host, port, alias in (("gpu-01", "p1s2", "gpu-02:rdma0 CF-r01.U09.rdma0"),
                              ("gpu-02", "p1s1", "gpu-01:rdma0 CF-r01.U01.rdma0")):
        edit(tables / f"{host}.lldp.json",
             change=lambda name, record, port=port, alias=alias: name == "rdma0" and
             record["port"].update(id={"type": "ifname", "value": port}, descr=alias))


def test_two_swapped_cables_are_both_miswired(spec: Path, tmp_path: Path) -> None:
    tables = saved_tables(tmp_path)
    _swap(tables)
    code, out, err = _verify(spec, str(tables))
    assert code == 1 and _kinds(out) == ["MISWIRED CF-r01.U01.rdma0", "MISWIRED CF-r01.U09.rdma0"]
    assert out[0].startswith("MISWIRED CF-r01.U01.rdma0: planned a/r01/U01 gpu-01 rdma0 <-> "
                             "a/net1/U37 eth-leaf-su1-r1 p1s1; found ")
    assert "a/r01/U01 gpu-01 rdma0 <-> a/net1/U37 eth-leaf-su1-r1 p1s2" in out[0]
    assert "a/r01/U09 gpu-02 rdma0 <-> a/net1/U37 eth-leaf-su1-r1 p1s1" in out[0]
    assert "0 missing, 2 miswired, 0 extra" in err
    code, out_text, _ = _reconcile(spec, *sorted(tables.iterdir()))
    assert re.findall(r"error\[(\S+)\] (\S+):", out_text) == [
        ("RECONCILE-LLDP-MISWIRED", "CF-r01.U01.rdma0"),
        ("RECONCILE-LLDP-MISWIRED", "CF-r01.U09.rdma0")]
    assert "fix: move the cable to gpu-01 rdma0 <-> eth-leaf-su1-r1 p1s1 (label " \
           "CF-r01.U01.rdma0)" in out_text


def test_a_device_not_seen_is_one_line(spec: Path, tmp_path: Path) -> None:
    """gpu-04 off: no table of it, none lists it: one NOT-SEEN line, not 3 MISSING ones."""
    tables = saved_tables(tmp_path)
    (tables / "gpu-04.lldp.json").unlink()
    for path in tables.iterdir():
        edit(path, keep=lambda _, record: "gpu-04" not in record["chassis"])
    code, out, err = _verify(spec, str(tables))
    assert code == 1
    assert out == ["NOT-SEEN node gpu-04 (rack r02 U09) not seen: its 3 cables are missing"]
    assert "1 device(s) not seen" in err
    code, out_text, _ = _reconcile(spec, *sorted(tables.iterdir()))
    # filed under the table of a device cabled to it (gpu-04 has none)
    assert out_text.startswith(f"{tables / 'eth-leaf-su1-r1.lldp.json'}: error[RECONCILE-LLDP-"
                               "UNSEEN] gpu-04: NOT-SEEN node gpu-04"), out_text


def test_an_unplanned_link_is_extra(spec: Path, tmp_path: Path) -> None:
    """A neighbour on a leaf port the plan leaves free (a laptop on p30): EXTRA."""
    tables = saved_tables(tmp_path)
    path = tables / "eth-leaf-su1-r1.lldp.json"
    document = json.loads(path.read_text())
    name, record = entries(document)[0]
    record = json.loads(json.dumps(record))
    record["chassis"] = {"laptop.example": next(iter(record["chassis"].values()))}
    record["port"]["descr"] = "enp0s31f6"
    document["lldp"]["interface"].append({"p30": record})
    path.write_text(json.dumps(document))
    code, out, _ = _verify(spec, str(tables))
    assert code == 1
    assert out == ["EXTRA (no planned cable): found a/net1/U37 eth-leaf-su1-r1 p30 <-> ?/?/? "
                   "laptop.example enp0s31f6"]


def test_switch_style_names_and_fqdn_are_known(spec: Path, tmp_path: Path) -> None:
    """A switch sends its port name as the id (subtype ifname) and a description of its own;
    a host's system name is its FQDN: the cable is still the planned one."""
    tables = saved_tables(tmp_path)

    def switch_style(name: str, record: dict[str, Any]) -> None:
        if name == "rdma0":
            chassis = next(iter(record["chassis"].values()))
            record["chassis"] = {"eth-leaf-su1-r1.fabric.example": chassis}
            record["port"] = {"id": {"type": "ifname", "value": "p1s1"},
                              "descr": "to gpu-01 rdma0"}

    edit(tables / "gpu-01.lldp.json", change=switch_style)
    edit(tables / "eth-leaf-su1-r1.lldp.json", keep=lambda name, _: name != "p1s1")
    assert _verify(spec, str(tables), "--network", "compute")[0] == 0


def test_whose_table_from_the_local_chassis(spec: Path, tmp_path: Path) -> None:
    """A file named after no device holding `show chassis` then `show neighbors` output is
    the local chassis' table; without it, the file is of no planned device: an error."""
    neighbors = (DATA / "gpu-01.lldp.json").read_text()
    chassis = (DATA / "chassis" / "gpu-01.chassis.json").read_text()
    both = tmp_path / "table-17.json"
    both.write_text(chassis + neighbors)
    assert parse(both.read_text()).local == "gpu-01"
    assert _verify(spec, str(both))[0] == 0
    alone = tmp_path / "table-18.json"
    alone.write_text(neighbors)
    code, out, err = _verify(spec, str(alone))
    assert code == 1 and f"{alone}: error[FABRIC-DISCOVERY] whose table is this?" in err
    code, out_text, _ = _reconcile(spec, alone)
    assert code == 1 and "error[RECONCILE-LLDP-DEVICE] table-18 (not in the plan)" in out_text


def test_a_broken_file_is_a_located_error(spec: Path, tmp_path: Path) -> None:
    tables = saved_tables(tmp_path)
    path = tables / "gpu-03.lldp.json"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:30]))  # cut short, as a lost ssh session leaves it
    code, out, err = _verify(spec, str(tables))
    assert code == 1 and out == []
    assert re.search(rf"^{re.escape(str(path))}:31: error\[FABRIC-DISCOVERY\] not JSON: ", err,
                     re.M), err
    assert "nothing judged" in err
    code, out_text, err = _reconcile(spec, *sorted(tables.iterdir()))
    assert code == 1
    assert f"{path}:31: error[RECONCILE-READ] not JSON: " in err
    assert "Traceback" not in out_text + err


def test_many_tables_in_one_file_each_record_at_its_line() -> None:
    """A file of many tables one after another (a whole fabric's, concatenated): each
    record's line is counted from the last one's (line_numbers), and is the line of its
    "via" key, as a count from the file's start gives it."""
    tables = [(DATA / name).read_text() for name in ("gpu-01.lldp.json", "head1.lldp.json",
                                                     "eth-leaf-su1-r1.lldp.json")] * 40
    text = "\n".join(tables)
    neighbors = parse(text).neighbors
    lines = text.splitlines()
    assert len(neighbors) == 40 * sum(len(parse(t).neighbors) for t in tables[:3])
    assert [r.line for r in neighbors] == sorted({r.line for r in neighbors})
    assert all('"via"' in lines[r.line - 1] for r in neighbors)
    offsets = [m.start() for m in re.finditer('"via"', text)]
    assert line_numbers(text, offsets) == [text.count("\n", 0, at) + 1 for at in offsets]


@pytest.mark.parametrize(("text", "line", "reason"), [
    ('{"lldp": {"interface": [{"swp1": 7}]}}', 1, "interface 'swp1' is not an object"),
    ('{"lldp": {"interface": {"swp1": {"via": "LLDP",\n "chassis": 3}}}}', 1,
     "chassis is not an object"),
    ('{"lldp": {"interface": {"swp1": {"via": "LLDP",\n "chassis": {}, "port": []}}}}', 1,
     "port of the neighbour on 'swp1' is not an object"),
    ('{"lldp": {}}\n[1, 2]\n', 2, "no \"lldp\""),
    ('', 0, "empty"),
])
def test_hostile_json_is_refused_at_its_line(text: str, line: int, reason: str) -> None:
    with pytest.raises(LldpError) as info:
        parse(text)
    assert info.value.line == line and reason in info.value.reason


def test_an_empty_table_and_detection() -> None:
    assert parse('{\n  "lldp": {}\n}\n').neighbors == ()
    assert parse('{"lldp": [{}]}').neighbors == ()  # json0 of no neighbour
    assert detect((DATA / "gpu-01.lldp.json").read_text())
    assert kind_of((DATA / "json0" / "gpu-01.lldp.json").read_text()) == "lldp"
    assert not detect('{"@odata.type": "#Power.v1_7_1"}')


def test_control_characters_in_a_name_stay_on_one_line(spec: Path, tmp_path: Path) -> None:
    """A neighbour calling itself 'x\\nMISSING ...' cannot forge a finding line."""
    tables = saved_tables(tmp_path)
    edit(tables / "eth-leaf-su1-r1.lldp.json", change=lambda name, record: name == "p1s1" and
         record.update(chassis={"evil\nMISSING CF-forged": {}}))
    code, out, _ = _verify(spec, str(tables), "--network", "compute")
    assert code == 1 and all(not line.startswith("MISSING CF-forged") for line in out)
    assert any("'evil\\nMISSING CF-forged'" in line for line in out), out


def _planned_tables(plan: Any, folder: Path, skip: frozenset[str] = frozenset()) -> Path:
    """Tables of every switch and node of a plan, as lldpd would print them for the cabling
    as planned: each record the saved real one of gpu-01 rdma0 with its names changed. The
    ends that send no LLDP (PDUs, nodes' BMC ports) and the devices in ``skip`` give none."""
    template = entries(json.loads((DATA / "gpu-01.lldp.json").read_text()))[0][1]
    kinds = {d.name: d.kind for d in plan.devices}
    rows: dict[str, list[dict[str, Any]]] = {}
    for cable in plan.cables.rows():
        if cable.link != "ethernet":
            continue
        for here, port, there, far in ((cable.a_device, cable.a_port, cable.b_device,
                                        cable.b_port), (cable.b_device, cable.b_port,
                                                        cable.a_device, cable.a_port)):
            if (silent_end(kinds, cable, there) or silent_end(kinds, cable, here)
                    or here in skip or there in skip):
                continue
            record = json.loads(json.dumps(template))
            record["chassis"] = {there: next(iter(record["chassis"].values()))}
            record["port"] = {"id": {"type": "ifname", "value": far}, "descr": "x"}
            rows.setdefault(here, []).append({port: record})
    folder.mkdir()
    for device, items in rows.items():
        (folder / f"{device}.lldp.json").write_text(json.dumps({"lldp": {"interface": items}}))
    return folder


@pytest.mark.parametrize("name", ["seed-64gpu-h100", "spectrum-x-roce"])
def test_whole_examples_as_planned(name: str, tmp_path: Path) -> None:
    """A whole example's tables as planned: no finding; the BMC network's node ports and the
    PDUs' are counted as not judged, not reported missing."""
    plan = example_build(name).plan
    tables = _planned_tables(plan, tmp_path / "t")
    code, out, err = _verify(ROOT / "examples" / f"{name}.yaml", str(tables))
    assert code == 0, out[:5] + [err]
    kinds = {d.name: d.kind for d in plan.devices}
    silent = sum(1 for c in plan.cables.rows() if c.link == "ethernet" and (
        silent_end(kinds, c, c.a_device) or silent_end(kinds, c, c.b_device)))
    assert f"{silent} cable(s) to PDUs or BMCs" in out[0], out


def test_a_bmc_port_on_another_bmc_port_is_miswired(tmp_path: Path) -> None:
    """A BMC that sends LLDP, plugged into the switch port planned for another node's BMC,
    is named; the BMCs that say nothing are not reported."""
    name = "seed-64gpu-h100"
    plan = example_build(name).plan
    tables = _planned_tables(plan, tmp_path / "t")
    one, two = [c for c in plan.cables.rows() if c.network == "bmc" and c.a_port == "bmc"][:2]
    path = tables / f"{one.b_device}.lldp.json"
    document = json.loads(path.read_text())
    record = json.loads(json.dumps(entries(document)[0][1]))
    record["chassis"] = {two.a_device: next(iter(record["chassis"].values()))}
    record["port"] = {"id": {"type": "mac", "value": "02:00:00:00:00:02"}, "descr": "bmc"}
    document["lldp"]["interface"].append({one.b_port: record})
    path.write_text(json.dumps(document))
    code, out, _ = _verify(ROOT / "examples" / f"{name}.yaml", str(tables))
    assert code == 1
    assert _kinds(out) == [f"MISWIRED {one.cable_id}", f"MISWIRED {two.cable_id}"], out
