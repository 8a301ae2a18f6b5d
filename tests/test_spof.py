"""Single points of failure of the fabrics through the CLI: a storage fabric that is one
switch (SPOF-FABRIC-SWITCH) and a leaf-spine fabric with one spine (SPOF-FABRIC-SPINE),
each a located warning whose fix clears it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from click.testing import CliRunner
from ruamel.yaml import YAML

from cluster_iac.catalog import builtin_catalog
from cluster_iac.cli.main import main
from tests.check_fixtures import validate_spec as _validate


def _spec(nodes: int) -> dict[str, Any]:
    text = CliRunner().invoke(main, ["init", "--platform", "dgx-h100", "--nodes",
                                     str(nodes)]).output
    data: dict[str, Any] = YAML(typ="safe").load(text)
    data["rows"][0]["racks"][2]["names"] = data["fabric"]["compute"]["racks"] = "net[1-3]"
    return data


def test_a_storage_fabric_of_one_switch(tmp_path: Path) -> None:
    """8 DGX with two storage ports each and the head node's one: 17 ports on one QM9700."""
    data = _spec(8)
    data["fabric"]["storage"] = {"technology": "infiniband", "leaf_switch": "qm9700",
                                 "racks": "net[1-3]"}
    out = _validate(tmp_path, data, "a.yaml")
    assert "warning[SPOF-FABRIC-SWITCH] storage fabric is one switch, sib-leaf-1 (qm9700): " \
           "its 9 hosts' 17 ports are all on it" in out
    assert "a storage leaf_switch with fewer than 17 ports builds leaves and spines" in out
    # the hint: an 8-port model (a catalog entry of the spec) splits the fabric
    data["catalog"] = {"switches": {"ib8": _small_switch()}}
    data["fabric"]["storage"]["leaf_switch"] = "ib8"
    out = _validate(tmp_path, data, "b.yaml")
    assert "SPOF-FABRIC" not in out  # 5 leaves and 4 spines of 8 ports


def _small_switch() -> dict[str, Any]:
    """The built-in QM9700's entry with 8 ports."""
    entry: dict[str, Any] = builtin_catalog().switches["qm9700"].model_dump(
        mode="json", exclude_defaults=True)
    entry["ports"] = 8
    return entry


def test_one_spine_is_a_warning_and_planned_units_clear_it(tmp_path: Path) -> None:
    """8 DGX in units of 4: 16 rail leaves x 4 uplinks are one 64-port spine."""
    data = _spec(8)
    data["fabric"]["compute"]["scalable_unit_nodes"] = 4
    out = _validate(tmp_path, data, "a.yaml")
    assert "warning[SPOF-FABRIC-SPINE] compute fabric has one spine, ib-spine-1 (qm9700, 64 " \
           "ports): all traffic between its 16 leaves crosses it" in out
    data["fabric"]["compute"]["planned_scalable_units"] = 3
    assert "SPOF-FABRIC-SPINE" not in _validate(tmp_path, data, "b.yaml")


def test_a_loop_with_one_cdu(tmp_path: Path) -> None:
    """Two NVL72 racks (264.5 kW) on init's one 280 kW CDU: a warning at the loop; two CDUs
    clear it; two of 200 kW (400 kW together) keep 200 kW with one down, under the heat."""
    text = CliRunner().invoke(main, ["init", "--platform", "gb200-nvl72-tray", "--nodes",
                                     "36"]).output
    data: dict[str, Any] = YAML(typ="safe").load(text)
    (loop,) = data["cooling"]["loops"]
    out = _validate(tmp_path, data, "a.yaml")
    assert "warning[SPOF-CDU] loop cdu1 has one CDU for 2 rack(s) (gpu01, gpu02, 264.5 kW): " \
           "its failure stops the cooling of all of them" in out
    loop["cdus"] = 2
    assert "SPOF-CDU" not in _validate(tmp_path, data, "b.yaml")
    loop["cdu_capacity_kw"] = 200
    out = _validate(tmp_path, data, "c.yaml")
    assert "warning[SPOF-CDU] loop cdu1 with one of its 2 CDUs down: the others exchange " \
           "200 kW, less than the 264.5 kW of gpu01, gpu02" in out
    assert "COOLING-CDU" not in out  # 400 kW together carry it


def test_racks_on_one_feed(tmp_path: Path) -> None:
    """The service rack's PDU profile made 'single': one PDU, one feed for the head node and
    the rack's management switches; the init's 'ab' clears it."""
    data = _spec(8)
    data["power"]["pdu_profiles"]["svc-pdu"]["layout"] = "single"
    out = _validate(tmp_path, data, "a.yaml")
    assert "warning[SPOF-FEED] PDU profile svc-pdu is layout 'single': its 1 rack(s) (svc1) " \
           "each have one PDU on one feed" in out
    assert out.count("warning[SPOF-FEED]") == 1
    data["power"]["pdu_profiles"]["svc-pdu"]["layout"] = "ab"
    assert "SPOF-FEED" not in _validate(tmp_path, data, "b.yaml")
