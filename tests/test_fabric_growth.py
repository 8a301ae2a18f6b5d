"""Fabric growth findings through the CLI: FABRIC-GROWTH for a fabric whose spines have no
room for one more scalable unit (its figure of moved cables checked against the builder's
own wiring of the grown fabric), and FABRIC-SERVICE-SU for service hosts on the compute
fabric that push the GPU servers into a unit of their own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from click.testing import CliRunner
from ruamel.yaml import YAML

from cluster_iac.cli.main import main
from cluster_iac.render import build


def _spec(nodes: int, **fabric: Any) -> dict[str, Any]:
    """`init --platform dgx-h100` for ``nodes`` DGX, its compute fabric in scalable units
    of 4 (rail-optimized on 64-port QM9700: 8 rail leaves of 4 nodes, 4 uplinks each)."""
    text = CliRunner().invoke(main, ["init", "--platform", "dgx-h100", "--nodes",
                                     str(nodes)]).output
    data: dict[str, Any] = YAML(typ="safe").load(text)
    data["fabric"]["compute"].update({"scalable_unit_nodes": 4, **fabric})
    # up to 25 leaves and spines: three network racks hold them
    data["rows"][0]["racks"][2]["names"] = data["fabric"]["compute"]["racks"] = "net[1-3]"
    return data


def _write(tmp_path: Path, data: dict[str, Any], name: str = "c.yaml") -> Path:
    path = tmp_path / name
    with path.open("w") as stream:
        YAML().dump(data, stream)
    return path


def _validate(path: Path) -> str:
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code == 0, result.output
    return result.output


def test_a_full_spine_layer_is_a_growth_warning_with_the_cables_it_moves(
        tmp_path: Path) -> None:
    """Two units of 4 DGX: 16 leaves x 4 uplinks fill one 64-port spine. A third unit takes
    two spines, each leaf 2 links to each: 2 of each leaf's 4 uplinks move, 32 in all."""
    out = _validate(_write(tmp_path, _spec(8)))
    assert "warning[FABRIC-GROWTH] compute fabric has no room on its spines for one more " \
           "scalable unit of 4 nodes: its 1 spines (qm9700, 64 ports) have 0 free port(s)" in out
    assert "growing from 2 to 3 units takes 2 spines and moves 32 of its 64 leaf-spine " \
           "cables" in out
    assert "before the first render writes the lock, plan the growth: " \
           "fabric.compute.planned_scalable_units: N" in out


def test_the_moved_figure_is_the_builders_wiring_of_the_grown_fabric(tmp_path: Path) -> None:
    """Build 8 and 12 DGX and compare each leaf's uplink cables: a cable kept is the same
    leaf port on the same spine; 32 are not."""
    def uplinks(nodes: int) -> set[tuple[str, str, str]]:
        plan = build(_write(tmp_path, _spec(nodes), f"n{nodes}.yaml")).plan
        links = plan.links
        return {(a, ap, b) for net, tier, a, ap, b in zip(
            links.network, links.tier, links.a_device, links.a_port, links.b_device,
            strict=True) if net == "compute" and tier == "leaf-spine"}

    small, grown = uplinks(8), uplinks(12)
    assert len(small) == 64
    assert len(small - grown) == 32


def test_planned_units_the_hint_names_clear_it(tmp_path: Path) -> None:
    out = _validate(_write(tmp_path, _spec(8, planned_scalable_units=3)))
    assert "FABRIC-GROWTH" not in out


def test_spines_with_room_for_a_unit_are_no_finding(tmp_path: Path) -> None:
    """One unit: 8 leaves x 4 uplinks on a 64-port spine leave room for a second unit's 32."""
    out = _validate(_write(tmp_path, _spec(4)))
    assert "FABRIC-GROWTH" not in out


def test_the_policy_lowers_it(tmp_path: Path) -> None:
    data = _spec(8)
    data["policy"] = {"levels": {"FABRIC-GROWTH": "error"}}
    result = CliRunner().invoke(main, ["validate", str(_write(tmp_path, data))])
    assert result.exit_code == 1
    assert "error[FABRIC-GROWTH]" in result.output


def test_service_hosts_on_the_compute_fabric_that_add_a_unit(tmp_path: Path) -> None:
    """8 DGX fill two units of 4; two login servers with a compute HCA each come first on the
    fabric, so the DGX spill into a third unit: 8 more leaves, 1 more spine and the third
    unit's 32 uplinks plus the growth of the others (64 -> 96 leaf-spine cables)."""
    data = _spec(8, planned_scalable_units=4)
    data["node_types"]["login"] = {"platform": "mgmt-1u",
                                   "nics_add": [{"role": "compute", "model": "cx7-ndr"}]}
    data["node_groups"].append({"name": "login", "role": "login", "node_type": "login",
                                "count": 2, "hostname": "login#", "racks": "svc1"})
    out = _validate(_write(tmp_path, data))
    assert "warning[FABRIC-SERVICE-SU] compute fabric: 2 host(s) that are not compute " \
           "nodes (login[1-2]) take places of its scalable units of 4, so its 8 compute " \
           "nodes fill 3 units where they alone fill 2: 8 more leaves" in out
    assert "32 more switch-to-switch cables" in out
    del data["node_types"]["login"]["nics_add"]
    assert "FABRIC-SERVICE-SU" not in _validate(_write(tmp_path, data, "d.yaml"))
