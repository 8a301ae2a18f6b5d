"""A declared GPU power cap through the CLI: node_types.*.gpu_power_limit_w lowers the node's
draw in the power model (and the PSUs it needs), is a located warning (POWER-GPU-CAP) with
the predicted speed and its formula, report.md states the effect on the busbw and goodput
predictions with the sources, and the hint (the GPU's maximum) clears it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from ruamel.yaml import YAML

from cluster_iac.cli.main import main
from tests.check_fixtures import cli_on_spec


def _spec(platform: str) -> dict[str, Any]:
    text = CliRunner().invoke(main, ["init", "--platform", platform, "--nodes", "4"]).output
    data: dict[str, Any] = YAML(typ="safe").load(text)
    return data


def test_a_cap_is_a_warning_with_its_speed_and_the_report_states_it(tmp_path: Path) -> None:
    data = _spec("dgx-h100")
    data["node_types"]["gpu"]["gpu_power_limit_w"] = 600
    result = cli_on_spec(tmp_path, data, "a.yaml", "validate")
    assert result.exit_code == 0, result.output
    # (600 / 700)^(1/3) = 0.9499: 1 / 0.9499 - 1 = 5.3 %; 10,200 W - 8 x 100 W = 9,400 W
    assert re.search(r"a\.yaml:\d+:\d+: warning\[POWER-GPU-CAP\] node type gpu: each of its 8 "
                     r"NVIDIA H100 [^:]*GPUs is capped at 600 W of the 700 W the catalog gives "
                     r"it \(86 %\), so a compute-bound step runs at least \(600 / 700\)\^\(1/3\) "
                     r"= 0\.950 of full speed, up to 5\.3 % slower \(the clock falls as the cube "
                     r"root of the power\); the node draws at most 9400 W of the platform's "
                     r"10200 W", result.output), result.output
    assert "gpu_power_limit_w: 700 (the GPU's maximum)" in result.output
    out = tmp_path / "out"
    assert cli_on_spec(tmp_path, data, "a.yaml", "render", "-o", str(out)).exit_code == 0
    report = (out / "report.md").read_text()
    assert "A GPU power cap leaves these figures as they are" in report  # busbw
    assert "a job on it takes up to 1.053 x as long to train" in report  # goodput
    assert "McDonald et al., Findings of NAACL 2022 (arXiv:2205.09646)" in report
    # the power model draws the capped node: 3 x 9.40 kW and a 0.30 kW switch in gpu01 (not
    # 3 x 10.20 kW), 9.40 + 0.30 kW in gpu02
    assert "| gpu01 | a | 28.50 |" in report and "| gpu02 | a | 9.70 |" in report
    # the hint followed: no cap, no finding
    data["node_types"]["gpu"]["gpu_power_limit_w"] = 700
    result = cli_on_spec(tmp_path, data, "b.yaml", "validate")
    assert result.exit_code == 0 and "POWER-GPU-CAP" not in result.output, result.output


def test_a_gpu_cap_sets_the_psus_a_node_needs(tmp_path: Path) -> None:
    """DGX B200 (6 x 3.3 kW at 5+1, 14.3 kW) on three PDUs: uncapped, a PDU down leaves 4
    PSUs for 14.3 kW; with each B200 held to 862 W (what init writes) the node draws
    13,196 W, which 4 carry."""
    data = _spec("dgx-b200")
    assert data["node_types"]["gpu"].pop("gpu_power_limit_w") == 862
    result = cli_on_spec(tmp_path, data, "a.yaml", "validate")
    assert result.exit_code != 0 and "error[POWER-PSU-FAILOVER]" in result.output
    data["node_types"]["gpu"]["gpu_power_limit_w"] = 862
    result = cli_on_spec(tmp_path, data, "b.yaml", "validate")
    assert result.exit_code == 0, result.output
    assert "POWER-PSU-FAILOVER" not in result.output
    assert "warning[POWER-GPU-CAP] node type gpu: each of its 8 NVIDIA B200" in result.output
    assert "up to 5.1 % slower" in result.output
