"""A rack too short for its devices still gets its power, cooling and fabric findings: the
compile stacks the devices past the top and the checks judge what does not depend on units."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from ruamel.yaml import YAML

from cluster_iac.cli.main import main


def test_six_dgx_h100_in_one_rack_report_height_power_and_cooling(tmp_path: Path) -> None:
    text = CliRunner().invoke(main, ["init", "--platform", "dgx-h100", "--nodes", "6"]).output
    data = YAML(typ="safe").load(text)
    group = data["node_groups"][0]
    group.update(racks="gpu01", per_rack=6)
    data["rows"][0]["racks"][0]["names"] = "gpu01"
    spec = tmp_path / "six.yaml"
    with spec.open("w") as stream:
        YAML().dump(data, stream)
    result = CliRunner().invoke(main, ["validate", str(spec)])
    assert result.exit_code == 1
    out = result.output
    assert "error[SPEC-RACK-HEIGHT] rack gpu01 needs 50 U" in out
    # 6 x 10.2 kW + switches: the heat and the breakers are judged too
    assert "error[COOLING-AIR] air-cooled rack gpu01 must shed 61.5 kW" in out
    assert "error[POWER-BREAKER] rack gpu01" in out
    assert "CABLE-" not in out and "Traceback" not in out
