"""NCCL-GUESSED-IFNAME and NCCL-GUESSED-HCA through the CLI: the NCCL files' device names that
the spec does not declare (the default eth0, mlx5_N where the catalog has no PCIe layout
naming the NICs) are warnings whose hint, applied, clears them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from click.testing import CliRunner
from ruamel.yaml import YAML

from cluster_iac.cli.main import main
from tests.check_fixtures import validate_spec as _validate


def _init(platform: str) -> dict[str, Any]:
    text = CliRunner().invoke(main, ["init", "--platform", platform]).output
    data: dict[str, Any] = YAML(typ="safe").load(text)
    return data


def test_the_default_eth0_is_a_guess_until_the_interface_is_declared(tmp_path: Path) -> None:
    data = _init("hgx-h100-8gpu")
    out = _validate(tmp_path, data, "a.yaml")
    assert "warning[NCCL-GUESSED-IFNAME] NCCL_SOCKET_IFNAME is =eth0 for node type(s) gpu: " \
           "the default of networks.management.interface" in out
    assert "networks: {management: {interface: enp170s0f0}}" in out
    # the platform's PCIe layout names its eight NICs: no HCA guess
    assert "NCCL-GUESSED-HCA" not in out
    data["networks"]["management"]["interface"] = "enp170s0f0"
    assert "NCCL-GUESSED" not in _validate(tmp_path, data, "b.yaml")


def test_a_declared_eth0_is_no_guess(tmp_path: Path) -> None:
    data = _init("hgx-h100-8gpu")
    data["networks"]["management"]["interface"] = "eth0"
    assert "NCCL-GUESSED" not in _validate(tmp_path, data, "a.yaml")


def test_hca_names_without_a_pcie_layout_are_a_guess(tmp_path: Path) -> None:
    """The GB200 tray's catalog entry has no PCIe layout: mlx5_0..3 is the enumeration order
    taken on trust."""
    data = _init("gb200-nvl72-tray")
    data["networks"]["management"]["interface"] = "enp1s0f0"
    out = _validate(tmp_path, data, "a.yaml")
    assert "warning[NCCL-GUESSED-HCA] node type gpu: NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2," \
           "mlx5_3 is a guess: its platform gb200-nvl72-tray has no PCIe layout in the " \
           "catalog" in out
    assert 'nccl: {node_types: {gpu: {NCCL_IB_HCA: "=mlx5_0,..."}}}' in out
    data["nccl"] = {"node_types": {"gpu": {"NCCL_IB_HCA": "=mlx5_0,mlx5_1,mlx5_3,mlx5_4"}}}
    assert "NCCL-GUESSED" not in _validate(tmp_path, data, "b.yaml")
