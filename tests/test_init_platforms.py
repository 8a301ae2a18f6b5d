"""`cluster-iac init` for every GPU platform of the catalog writes a spec that validates, and
the PSU-failover hint names a fix that works."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from ruamel.yaml import YAML

from cluster_iac.catalog import builtin_catalog
from cluster_iac.cli.main import main

GPU_PLATFORMS = sorted(k for k, p in builtin_catalog().platforms.items()
                       if p.gpu_count > 0 and (p.psus is not None or p.kind == "compute-tray"))
"""Every GPU server and NVL72 tray: all but the cloud VM (azure-nd-h100-v5), which has no
power feed, PDU or BMC of its own to put in a rack."""


@pytest.mark.parametrize("platform", GPU_PLATFORMS)
def test_init_for_every_gpu_platform_validates(platform: str, tmp_path: Path) -> None:
    spec = tmp_path / "cluster.yaml"
    made = CliRunner().invoke(main, ["init", "--platform", platform, "-o", str(spec)])
    assert made.exit_code == 0, made.output
    checked = CliRunner().invoke(main, ["validate", str(spec)])
    assert checked.exit_code == 0, checked.output
    assert "error[" not in checked.output


@pytest.mark.parametrize("platform", GPU_PLATFORMS)
def test_init_with_lustre_for_every_gpu_platform_validates(platform: str,
                                                           tmp_path: Path) -> None:
    """--lustre puts the storage fabric on InfiniBand: a platform whose storage ports are
    Ethernet (DGX B200's ConnectX-7, DGX B300's and the NVL72 trays' BlueField-3) gets NDR
    HCAs in their place (FABRIC-LINK-LAYER otherwise, and init found no design)."""
    spec = tmp_path / "cluster.yaml"
    made = CliRunner().invoke(main, ["init", "--platform", platform, "--nodes", "8",
                                     "--lustre", "-o", str(spec)])
    assert made.exit_code == 0, made.output
    checked = CliRunner().invoke(main, ["validate", str(spec)])
    assert checked.exit_code == 0 and "error[" not in checked.output, checked.output
    data = YAML(typ="safe").load(spec.read_text())
    nics = builtin_catalog().nics
    gpu = data["node_types"]["gpu"]
    listed = gpu.get("nics") or [n.model_dump() for n in
                                 builtin_catalog().platforms[platform].nics]
    storage = [n["model"] for n in [*listed, *gpu.get("nics_add", [])]
               if n["role"] == "storage"]
    assert storage and all(nics[m].link == "infiniband" for m in storage), storage


@pytest.mark.parametrize("platform", ["gb200-nvl72-tray", "gb300-nvl72-tray"])
def test_nvl72_trays_fill_whole_racks(platform: str) -> None:
    """72 trays: four NVL72 racks of 18, each one NVLink domain, on liquid loops."""
    text = CliRunner().invoke(main, ["init", "--platform", platform, "--nodes", "72"]).output
    data = YAML(typ="safe").load(text)
    assert data["node_groups"][0]["per_rack"] == 18
    assert data["rows"][0]["racks"][0]["cooling"] == "liquid"
    assert [loop["racks"] for loop in data["cooling"]["loops"]] == ["gpu[01-02]", "gpu[03-04]"]


def _write(tmp_path: Path, data: dict, name: str) -> Path:  # type: ignore[type-arg]
    path = tmp_path / name
    with path.open("w") as stream:
        YAML().dump(data, stream)
    return path


def test_blackwell_5_plus_1_supplies_get_three_pdus_and_a_cap_they_carry(
        tmp_path: Path) -> None:
    """DGX B200: 6 x 3.3 kW at 5+1 for 14.3 kW. One of three PDUs down leaves 4 PSUs, 13.2 kW:
    init caps each B200 at 1,000 - ceil(1,100 / 8) = 862 W (the node: 13,196 W); without the
    cap validate fails and its hint is that cap; with it, POWER-GPU-CAP says its speed."""
    text = CliRunner().invoke(main, ["init", "--platform", "dgx-b200"]).output
    data = YAML(typ="safe").load(text)
    assert data["node_types"]["gpu"]["gpu_power_limit_w"] == 862
    assert "max_power_w" not in data["node_types"]["gpu"]
    assert data["power"]["pdu_profiles"]["gpu-pdu"]["layout"] == "three"
    del data["node_types"]["gpu"]["gpu_power_limit_w"]
    data["power"]["pdu_profiles"]["gpu-pdu"]["layout"] = "ab"
    failing = CliRunner().invoke(main, ["validate", str(_write(tmp_path, data, "a.yaml"))])
    assert failing.exit_code == 1
    assert "error[POWER-PSU-FAILOVER]" in failing.output
    assert "gpu_power_limit_w: 862 (of 1000 W)" in failing.output
    assert "layout 'three'" in failing.output
    # the hint, applied, is a working fix
    data["node_types"]["gpu"]["gpu_power_limit_w"] = 862
    data["power"]["pdu_profiles"]["gpu-pdu"]["layout"] = "three"
    fixed = CliRunner().invoke(main, ["validate", str(_write(tmp_path, data, "b.yaml"))])
    assert fixed.exit_code == 0, fixed.output
    assert "warning[POWER-GPU-CAP] node type gpu" in fixed.output
    assert "up to 5.1 % slower" in fixed.output


def test_4_plus_2_supplies_on_an_ab_pair_are_told_layout_three(tmp_path: Path) -> None:
    text = CliRunner().invoke(main, ["init", "--platform", "dgx-h100"]).output
    data = YAML(typ="safe").load(text)
    assert "max_power_w" not in data["node_types"]["gpu"]
    assert "gpu_power_limit_w" not in data["node_types"]["gpu"]
    data["power"]["pdu_profiles"]["gpu-pdu"]["layout"] = "ab"
    failing = CliRunner().invoke(main, ["validate", str(_write(tmp_path, data, "a.yaml"))])
    assert "error[POWER-PSU-FAILOVER]" in failing.output
    assert "layout 'three'" in failing.output and "max_power_w" not in failing.output
    assert "gpu_power_limit_w" not in failing.output


def test_blackwell_on_the_default_nccl_is_an_error_init_avoids(tmp_path: Path) -> None:
    """NCCL 2.21 (the default) has no Blackwell kernels: 2.25.1 added SM100 support."""
    text = CliRunner().invoke(main, ["init", "--platform", "hgx-b200-8gpu"]).output
    data = YAML(typ="safe").load(text)
    assert data["cluster"]["nccl_version"] == "2.25"
    del data["cluster"]["nccl_version"]
    result = CliRunner().invoke(main, ["validate", str(_write(tmp_path, data, "a.yaml"))])
    assert result.exit_code == 1
    assert "error[NCCL-GPU-GENERATION] node type gpu has blackwell GPUs" in result.output
    assert "supports from 2.25; cluster.nccl_version is 2.21" in result.output
    assert 'nccl_version: "2.25"' in result.output
