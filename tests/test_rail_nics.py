"""Each RoCE rail bound to the NIC the OS sees (plan/host_rails.py ``netdev_glob``,
``rail_matches``): netplan's ``match: {name: ...}`` and ``set-name`` in each rail's entry,
the name from the node type's PCIe layout (a NIC's ``netdev``, or the systemd path name of
its bus id); the checks ROCE-NIC-NAME and ROCE-NIC-UNNAMED. tests/real/test_roce_hosts_real.py
and tests/real/test_playbook_real.py give the entries to real netplan and cloud-init."""

from __future__ import annotations

import fnmatch
import json
from io import StringIO
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from ruamel.yaml import YAML

from cluster_iac.catalog import builtin_catalog
from cluster_iac.cli.main import main
from cluster_iac.plan.host_rails import host_rails, netdev_glob, rail_config
from cluster_iac.render import build
from tests.conftest import example_build

EXAMPLE = "spectrum-x-roce"
ROOT = Path(__file__).parents[1]
SPEC = (ROOT / "examples" / f"{EXAMPLE}.yaml").read_text()
# NVIDIA DGX H100/H200 User Guide, Network Modules table: the compute NICs' netdevs in
# InfiniBand mode by GPU (OSFP4P2 GPU 0 ibp24s0 mlx5_0, OSFP3P2 GPU 1 ibp64s0 mlx5_3, ...)
DGX_GUIDE_IB_NAMES = ("ibp24s0", "ibp64s0", "ibp79s0", "ibp94s0", "ibp154s0", "ibp192s0",
                      "ibp206s0", "ibp220s0")


def test_the_path_name_of_a_bus_id() -> None:
    assert netdev_glob("0000:18:00.0") == "enp24s0*"
    assert netdev_glob("0000:dc:00.0") == "enp220s0*"
    assert netdev_glob("0000:18:02.1") == "enp24s2f1*"  # a second function keeps its f1
    assert netdev_glob("0001:9a:00.0") == "enP1p154s0*"  # a domain other than 0
    # two rails on one dual-port device: function 0 keeps its f0, so that its glob does not
    # also match function 1's netdev (enp24s0f1np1)
    assert netdev_glob("0000:18:00.0", shared=True) == "enp24s0f0*"


def test_the_dgx_layout_gives_the_guides_names() -> None:
    """The formula against NVIDIA's published names: the DGX H100's NICs in InfiniBand mode
    are the same path names with ``ib`` for ``en``."""
    platform = builtin_catalog().platforms["dgx-h100"]
    nics = sorted((d for numa in platform.pcie.numa_nodes for s in numa.switches
                   for d in s.devices if d.kind == "nic"), key=lambda d: d.index)
    assert tuple("ib" + netdev_glob(d.busid)[2:].rstrip("*") for d in nics) == \
        DGX_GUIDE_IB_NAMES


def test_each_rail_renames_its_nic_from_the_platforms_layout() -> None:
    built = example_build(EXAMPLE)
    rails = host_rails(built.plan)
    want = [netdev_glob(b) for b in ("0000:18:00.0", "0000:40:00.0", "0000:4f:00.0",
                                     "0000:5e:00.0", "0000:9a:00.0", "0000:c0:00.0",
                                     "0000:ce:00.0", "0000:dc:00.0")]
    for nics in rails.values():
        assert [r.port.match for r in nics] == want
        for rail in nics:
            entry = rail_config(rail)
            assert entry["match"] == {"name": rail.port.match}
            assert entry["set-name"] == rail.interface == f"rdma{rail.rail}"
    row = json.loads(built.files["cloud-init/seeds/h200.jsonl"].splitlines()[0])
    assert row["network-config"]["network"]["ethernets"]["rdma7"]["match"] == {
        "name": "enp220s0*"}


def _platform(netdevs: dict[int, str], busids: dict[int, str]) -> dict[str, Any]:
    """The example's platform as the spec's own (catalog.platforms.my-hgx), its NICs given
    ``netdevs`` and ``busids`` by rail."""
    data = builtin_catalog().platforms["hgx-h200-8gpu"].model_dump(mode="json",
                                                                   exclude_none=True)
    for numa in data["pcie"]["numa_nodes"]:
        for switch in numa["switches"]:
            for dev in switch["devices"]:
                if dev["kind"] == "nic" and dev["index"] in netdevs:
                    dev["netdev"] = netdevs[dev["index"]]
                if dev["kind"] == "nic" and dev["index"] in busids:
                    dev["busid"] = busids[dev["index"]]
    return data


def _spec(tmp_path: Path, netdevs: dict[int, str], layout: bool = True,
          busids: dict[int, str] | None = None) -> Path:
    """The example on its platform as the spec's own: its NICs given ``netdevs`` (and
    ``busids``), or with no PCIe layout."""
    platform = _platform(netdevs, busids or {})
    if not layout:
        del platform["pcie"]
    out, yaml = StringIO(), YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    yaml.dump({"catalog": {"platforms": {"my-hgx": platform}}}, out)
    path = tmp_path / "c.yaml"
    path.write_text(SPEC.replace("platform: hgx-h200-8gpu", "platform: my-hgx")
                    + out.getvalue())
    return path


def _validate(spec: Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["validate", str(spec)])
    return result.exit_code, result.output


def test_two_rails_on_one_dual_port_device_match_one_function_each(tmp_path: Path) -> None:
    spec = _spec(tmp_path, {}, busids={1: "0000:18:00.1"})  # rail 1 beside rail 0
    plan = build(spec, lock_file=ROOT / "examples" / f"{EXAMPLE}.lock").plan
    matches = [r.port.match for r in host_rails(plan)["gpu-01"]]
    assert matches[:3] == ["enp24s0f0*", "enp24s0f1*", "enp79s0*"]
    assert not fnmatch.fnmatch("enp24s0f1np1", matches[0])


def test_a_nics_netdev_in_the_spec_is_its_match(tmp_path: Path) -> None:
    spec = _spec(tmp_path, {0: "ens1f0np0", 5: "gpu5_eth"})
    plan = build(spec, lock_file=ROOT / "examples" / f"{EXAMPLE}.lock").plan
    matches = [r.port.match for r in host_rails(plan)["gpu-01"]]
    assert matches[0] == "ens1f0np0" and matches[5] == "gpu5_eth"
    assert matches[1] == "enp64s0*"  # the others by their bus ids


def test_two_nics_of_one_netdev_are_located(tmp_path: Path) -> None:
    spec = _spec(tmp_path, {2: "ens1f0np0", 6: "ens1f0np0"})
    code, output = _validate(spec)
    lines = spec.read_text().splitlines()
    line = [n for n, text in enumerate(lines, 1) if "netdev: ens1f0np0" in text][1]
    column = lines[line - 1].index("ens1f0np0") + 1
    assert code == 1
    assert (f"{spec}:{line}:{column}: error[ROCE-NIC-NAME] NICs 2 and 6 of platform 'my-hgx' "
            "have the same netdev 'ens1f0np0'") in output, output
    assert "^" in output and "hint: give each NIC the name `ip -br link` shows" in output
    # the hint works: a name of its own (or none: its path name) validates
    code, output = _validate(_spec(tmp_path, {2: "ens1f0np0", 6: "ens2f0np0"}))
    assert code == 0 and "ROCE-NIC" not in output, output


def test_a_netdev_the_kernel_refuses_is_located(tmp_path: Path) -> None:
    for bad in ("eth 0", "rdma/0", "a-name-of-16-chr", ".", "eth0:1"):
        spec = _spec(tmp_path, {3: bad})
        code, output = _validate(spec)
        assert code == 1 and "error[SPEC-FORMAT]" in output and "netdev" in output, (bad,
                                                                                     output)
        assert "hint: it must match" in output, output


def test_a_platform_of_no_layout_leaves_the_rails_unnamed(tmp_path: Path) -> None:
    spec = _spec(tmp_path, {}, layout=False)
    code, output = _validate(spec)
    line = spec.read_text().splitlines().index("    platform: my-hgx") + 1
    assert code == 0
    assert (f"{spec}:{line}:5: warning[ROCE-NIC-UNNAMED] node type 'h200' (platform 'my-hgx') "
            "has no PCIe layout of its 8 compute NIC(s)") in output, output
    assert "hint: give platform 'my-hgx' a pcie layout" in output
    # the hint works: the same platform with its layout gives no warning
    code, output = _validate(_spec(tmp_path, {}))
    assert code == 0 and "ROCE-NIC" not in output, output
