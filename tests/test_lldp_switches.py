"""A switch's own LLDP table read by cabling verify: Arista EOS's `show lldp neighbors detail |
json` (formats/eos_lldp.py, a real output in tests/data/lldp/eos/), and switch OS port names
(EOS 'Ethernet1/2', Cumulus 'swp1s1') found as the plan's ports (reconcile/port_names.py)."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cluster_iac.cli.main import main
from cluster_iac.emit.avd_inputs import eos_port
from cluster_iac.formats.eos_lldp import detect, parse
from cluster_iac.formats.lldpcli import LldpError
from cluster_iac.reconcile.port_names import candidates, plan_port
from tests.lldp_fixtures import DATA, entries, sample_spec, saved_tables

EOS = DATA / "eos" / "napalm-issue1153.json"
LEAF = "eth-leaf-su1-r1"


def test_the_real_eos_table_is_read() -> None:
    text = EOS.read_text()
    assert detect(text) and not detect((DATA / "gpu-01.lldp.json").read_text())
    table = parse(text)
    rows = [(n.interface, n.system, n.port_id, n.port_type, n.port_descr)
            for n in table.neighbors]
    assert rows == [
        ("Ethernet1/1", "some-server", "1ce7.1003.5413", "mac", "eth0"),
        ("Ethernet27/1", "some-switch", "et-0/0/20", "ifname", "et-0/0/20"),
        ("Ethernet26/1", "some-other-switch", "et-0/0/20", "ifname", "et-0/0/20")]
    lines = text.splitlines()
    for neighbor in table.neighbors:  # each at its interface's lldpNeighborInfo
        assert '"lldpNeighborInfo"' in lines[neighbor.line - 1]
        assert f'"{neighbor.interface}"' in lines[neighbor.line - 2]
    assert table.local == ""


def test_switch_port_names_are_the_plans() -> None:
    assert candidates("Ethernet1/2") == ["p1s2"]
    assert candidates("Ethernet57/1") == ["p57s1", "p57", "swp57"]
    assert candidates("Et57") == ["p57", "swp57"]
    assert candidates("swp1s0") == ["p1s1"] and candidates("swp57") == ["p57"]
    assert candidates("rdma0") == [] and candidates("Ethernet") == []
    assert plan_port("Ethernet47", {"swp47"}) == "swp47"
    assert plan_port("Ethernet57/1", {"p57"}) == "p57"
    assert plan_port("swp1s1", {"p1s1", "p1s2"}) == "p1s2"
    assert plan_port("Ethernet9", {"p1"}) == "Ethernet9"  # not planned: left as it is
    for port in ("p1s1", "p1s2", "p57", "swp47"):  # the AVD dialect's names come back
        assert plan_port(eos_port(port), {port}) == port


def _eos_table(lldpd: dict[str, Any], template: dict[str, Any]) -> dict[str, Any]:
    """The leaf's lldpd table (the real capture) as EOS would print it: each record a copy of
    a real EOS record with this neighbour's name and port, keyed by EOS's port name."""
    out: dict[str, Any] = {}
    for name, record in entries(lldpd):
        chassis = record["chassis"]
        port = record["port"]
        neighbor = copy.deepcopy(template)
        neighbor["systemName"] = next(iter(chassis))
        info = neighbor["neighborInterfaceInfo"]
        if port["id"]["type"] == "ifname":
            info["interfaceIdType"] = "interfaceName"
            info["interfaceId"] = f'"{port["id"]["value"]}"'
        else:
            mac = port["id"]["value"].replace(":", "")
            info["interfaceIdType"] = "macAddress"
            info["interfaceId"] = ".".join(mac[i:i + 4] for i in range(0, 12, 4))
        info["interfaceDescription"] = port.get("descr", "")
        key = eos_port(name) if re.fullmatch(r"p\d+(s\d+)?", name) else name
        out[key] = {"lldpNeighborInfo": [neighbor]}
    out["Ethernet30"] = {"lldpNeighborInfo": []}  # an unused port, as EOS lists it
    return {"lldpNeighbors": out}


def _verify(spec: Path, tables: Path) -> tuple[int, list[str], str]:
    result = CliRunner().invoke(main, ["fabric", "verify", str(spec), str(tables)])
    return result.exit_code, result.stdout.splitlines(), result.stderr


@pytest.fixture
def eos_tables(tmp_path: Path) -> tuple[Path, Path]:
    """The sample's saved tables with the leaf's replaced by its EOS form."""
    spec = sample_spec(tmp_path)
    tables = saved_tables(tmp_path)
    template = json.loads(EOS.read_text())["lldpNeighbors"]["Ethernet27/1"][
        "lldpNeighborInfo"][0]
    leaf = tables / f"{LEAF}.lldp.json"
    document = _eos_table(json.loads(leaf.read_text()), template)
    leaf.write_text(json.dumps(document, indent=2))
    return spec, tables


def test_an_eos_table_is_judged_as_lldpds(eos_tables: tuple[Path, Path]) -> None:
    spec, tables = eos_tables
    code, out, err = _verify(spec, tables)
    assert code == 0, out + [err]
    assert "the Ethernet cabling matches the plan (42 of 54 cables seen from 14 LLDP" in out[0]


def test_a_swap_seen_only_by_the_eos_switch_is_miswired(eos_tables: tuple[Path, Path]) -> None:
    """The EOS leaf alone says its p1s1 and p1s2 hear each other's hosts (the hosts' tables
    are dropped): both cables are miswired, named by their labels and the plan's ports."""
    spec, tables = eos_tables
    leaf = tables / f"{LEAF}.lldp.json"
    document = json.loads(leaf.read_text())
    ports = document["lldpNeighbors"]
    ports["Ethernet1/1"], ports["Ethernet1/2"] = ports["Ethernet1/2"], ports["Ethernet1/1"]
    leaf.write_text(json.dumps(document, indent=2))
    for host in ("gpu-01", "gpu-02"):
        (tables / f"{host}.lldp.json").unlink()
    code, out, err = _verify(spec, tables)
    assert code == 1, out
    miswired = [line for line in out if "MISWIRED" in line]
    assert len(miswired) == 2, out
    assert all(f"{LEAF} p1s" in line for line in miswired), miswired


@pytest.mark.parametrize(("text", "line", "reason"), [
    ('{"lldpNeighbors": {\n "Ethernet1": {"lldpNeighborInfo": 3}}}', 2,
     "interface 'Ethernet1' has no \"lldpNeighborInfo\" list"),
    ('{"lldpNeighbors": {\n "Ethernet1": {\n "lldpNeighborInfo": [7]}}}', 3,
     "a neighbour of 'Ethernet1' is not an object"),
    ('{"lldpNeighbors": {"Ethernet1": {"lldpNeighborInfo": [{"systemName": "x"}]}}}', 1,
     "no \"neighborInterfaceInfo\" object"),
    ('{"lldpNeighbors": [1]}', 1, "no \"lldpNeighbors\" object"),
    ('{"lldpNeighbors": {\n "Ethernet1": {\n', 3, "not JSON"),
])
def test_hostile_eos_json_is_refused_at_its_line(text: str, line: int, reason: str) -> None:
    with pytest.raises(LldpError) as info:
        parse(text)
    assert info.value.line == line and reason in info.value.reason, info.value


def test_a_cut_eos_file_is_a_located_error(eos_tables: tuple[Path, Path]) -> None:
    spec, tables = eos_tables
    leaf = tables / f"{LEAF}.lldp.json"
    lines = leaf.read_text().splitlines(keepends=True)
    leaf.write_text("".join(lines[:20]))
    code, out, err = _verify(spec, tables)
    assert code == 1 and out == []
    assert re.search(rf"^{re.escape(str(leaf))}:21: error\[FABRIC-DISCOVERY\] not JSON: ", err,
                     re.M), err
