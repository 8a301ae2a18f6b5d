"""What a new user meets writing a spec of their own: NIC lists that add to a platform's,
a node without the NICs its networks need, LUSTRE-NID's real cause, `plan` beside errors,
findings cited at the key that decides them, and the CLI's own words."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from ruamel.yaml import YAML

from cluster_iac.base.errors import CompileError
from cluster_iac.cli.main import main
from tests.check_fixtures import findings_of
from tests.conftest import ROOT
from tests.facility_fixtures import compile_data

STORAGE_HCA = {"role": "storage", "model": "cx7-ndr"}

# 32 H200 nodes (HGX H100 board with the H200 GPU) on NDR, Lustre on the built-in NVMe
# servers, as a new user writes it first: no storage fabric.
H200: dict[str, Any] = {
    "cluster": {"name": "h200"},
    "node_types": {"gpu": {"platform": "hgx-h100-8gpu", "gpu": {"model": "h200-sxm-141gb"}},
                   "head": {"platform": "mgmt-1u"},
                   "mds": {"platform": "lustre-server-2u"},
                   "oss": {"platform": "lustre-server-2u"}},
    "node_groups": [
        {"name": "gpu", "node_type": "gpu", "count": 32, "hostname": "gpu##",
         "racks": "r[01-16]"},
        {"name": "head", "role": "controller", "node_type": "head", "count": 1,
         "hostname": "head#", "racks": "s01"},
        {"name": "mds", "role": "lustre_mds", "node_type": "mds", "count": 2,
         "hostname": "mds#", "racks": "s01"},
        {"name": "oss", "role": "lustre_oss", "node_type": "oss", "count": 4,
         "hostname": "oss#", "racks": "s01"}],
    "rows": [{"name": "a", "racks": [
        {"names": "r[01-16]", "pdu": "p415", "cooling": "liquid", "liquid_capacity_kw": 60},
        {"names": "s01", "pdu": "p415"}]}],
    "power": {"pdu_profiles": {"p415": {"layout": "three", "voltage_v": 415, "phases": 3,
                                        "breaker_a": 63}}},
    "fabric": {"compute": {"technology": "infiniband", "leaf_switch": "qm9700"}},
    "networks": {"management": {"cidr": "10.0.0.0/22"}, "bmc": {"cidr": "10.1.0.0/22"},
                 "ipoib": {"cidr": "10.2.0.0/22", "interface": "ib0"}},
    "storage": {"lustre": {"fsname": "scratch", "mds_group": "mds", "oss_group": "oss",
                           "mdt": {"drive": "kioxia-cm6-r-3tb", "drives": 4, "raid": "raid10"},
                           "ost": {"drive": "samsung-pm1653-15tb", "drives": 10}}},
    "slurm": {"partitions": [{"name": "gpu", "node_groups": ["gpu"]}]},
}


def h200() -> dict[str, Any]:
    return copy.deepcopy(H200)


def _write(tmp: Path, data: dict[str, Any]) -> Path:
    path = tmp / "cluster.yaml"
    with path.open("w") as out:
        YAML().dump(data, out)
    return path


# --- LUSTRE-NID names the real cause ---------------------------------------------------------


def test_lustre_nid_says_the_servers_have_no_nic_on_the_declared_network() -> None:
    """networks.ipoib is declared: the cause is the servers' NICs (storage only), not it."""
    (found,) = findings_of(h200(), "LUSTRE-NID")
    assert found.message.startswith(
        "6 Lustre host(s) have no compute NIC (node type(s) mds, oss, platform(s) "
        "lustre-server-2u) and so no address on networks.ipoib:")
    assert "declare networks.ipoib" not in (found.hint or "")
    assert "fabric.storage" in found.hint and "nics_add" in found.hint
    assert "storage" in found.hint.split(":")[0]  # the NICs they have


def test_lustre_nid_without_the_network_still_says_declare_it() -> None:
    data = h200()
    del data["networks"]["ipoib"]
    (found,) = findings_of(data, "LUSTRE-NID")
    assert "have no address on networks.ipoib, so no NID" in found.message
    assert found.hint.startswith("declare networks.ipoib")


def test_the_storage_fabric_the_hint_names_is_the_fix() -> None:
    """Following the hint: a storage fabric and network, and a storage HCA added (not the
    whole list copied) to the GPU nodes: no LNet finding remains."""
    data = h200()
    data["fabric"]["storage"] = {"technology": "infiniband", "leaf_switch": "qm9700",
                                 "racks": "s01"}
    data["networks"]["storage"] = {"cidr": "10.3.0.0/22", "interface": "ib8"}
    data["node_types"]["gpu"]["nics_add"] = [STORAGE_HCA]
    assert [f.code for f in findings_of(data) if f.code.startswith("LUSTRE-")] == []


# --- nics_add and the NICs a network needs --------------------------------------------------


def test_nics_add_keeps_the_platforms_adapters() -> None:
    data = h200()
    data["node_types"]["gpu"]["nics_add"] = [STORAGE_HCA]
    nics = compile_data(data).node_types["gpu"].nics
    assert [(n.role, n.model, n.count) for n in nics] == [
        ("compute", "cx7-ndr", 8), ("inband", "cx6lx-25gbe", 1), ("bmc", "eth-1g", 1),
        ("storage", "cx7-ndr", 1)]


def test_nics_add_also_adds_to_a_nics_list_of_the_spec() -> None:
    data = h200()
    data["node_types"]["gpu"]["nics"] = [
        {"role": "compute", "model": "cx7-ndr", "count": 4},
        {"role": "inband", "model": "cx6lx-25gbe"}, {"role": "bmc", "model": "eth-1g"}]
    data["node_types"]["gpu"]["nics_add"] = [STORAGE_HCA]
    nics = compile_data(data).node_types["gpu"].nics
    assert [(n.role, n.count) for n in nics] == [
        ("compute", 4), ("inband", 1), ("bmc", 1), ("storage", 1)]


def test_nics_add_with_an_unknown_model_is_located() -> None:
    data = h200()
    data["node_types"]["gpu"]["nics_add"] = [{"role": "storage", "model": "cx7-ndrr"}]
    with pytest.raises(CompileError) as caught:
        compile_data(data)
    (diag,) = caught.value.diagnostics
    assert diag.path == ("node_types", "gpu", "nics_add", 0, "model")
    assert "cx7-ndr" in (diag.hint or "")


@pytest.mark.parametrize("dropped,network", [("inband", "management"), ("bmc", "bmc")])
def test_a_nics_list_without_the_adapter_a_network_needs_is_an_error(dropped: str,
                                                                    network: str) -> None:
    """Before: 0 findings, and the nodes were still cabled to eth0/BMC and given addresses."""
    data = h200()
    platform_nics = [{"role": "compute", "model": "cx7-ndr", "count": 8},
                     {"role": "inband", "model": "cx6lx-25gbe"},
                     {"role": "bmc", "model": "eth-1g"}]
    data["node_types"]["gpu"]["nics"] = [n for n in platform_nics if n["role"] != dropped]
    with pytest.raises(CompileError) as caught:
        compile_data(data)
    (diag,) = caught.value.diagnostics
    assert diag.code == "SPEC-NIC-MISSING"
    assert diag.path == ("node_types", "gpu", "nics")
    assert f"has no {dropped} NIC, but networks.{network} is declared" in diag.message
    assert "nics_add" in (diag.hint or "")


def test_a_platform_without_an_inband_nic_is_cited_at_its_platform() -> None:
    data = h200()
    data["node_types"]["gpu"] = {"platform": "azure-nd-h100-v5"}  # compute NICs only
    with pytest.raises(CompileError) as caught:
        compile_data(data)
    assert {(d.code, d.path) for d in caught.value.diagnostics} == {
        ("SPEC-NIC-MISSING", ("node_types", "gpu", "platform"))}


def test_without_the_networks_no_adapter_is_required() -> None:
    data = h200()
    data["node_types"]["gpu"]["nics"] = [{"role": "compute", "model": "cx7-ndr", "count": 8}]
    del data["networks"]["management"], data["networks"]["bmc"]
    compile_data(data)  # no SPEC-NIC-MISSING


# --- plan beside the errors --------------------------------------------------------------------


def test_plan_prints_what_it_built_beside_the_errors(tmp_path: Path) -> None:
    spec = _write(tmp_path, h200())
    result = CliRunner().invoke(main, ["plan", "--counts", str(spec)])
    assert result.exit_code == 1
    assert "nodes: 39" in result.stdout and "gpus: 256" in result.stdout
    assert "error[LUSTRE-NID]" in result.stderr and "error[LUSTRE-NID]" not in result.stdout
    assert result.stderr.rstrip().endswith(f"{spec}: 4 error(s)")  # NID + 3 UNREACHABLE


def test_plan_prints_beside_a_cable_no_medium_carries() -> None:
    spec = ROOT / "tests" / "data" / "invalid" / "cabling" / "far_racks.yaml"
    result = CliRunner().invoke(main, ["plan", "--counts", str(spec)])
    assert result.exit_code == 1
    assert "nodes: 3" in result.stdout and "error[CABLE-NO-MEDIUM]" in result.stderr


def test_plan_of_a_spec_that_does_not_compile_prints_only_the_errors(tmp_path: Path) -> None:
    data = h200()
    data["node_groups"][0]["node_type"] = "gpuu"
    result = CliRunner().invoke(main, ["plan", str(_write(tmp_path, data))])
    assert result.exit_code == 1 and result.stdout == ""
    assert "error[SPEC-UNKNOWN-REF] unknown node type 'gpuu'" in result.stderr
    assert "= hint: did you mean 'gpu'?" in result.stderr


# --- findings cited at the key that decides them --------------------------------------------


def test_fabric_none_is_cited_at_the_gpu_node_group() -> None:
    """minimal.yaml has no fabric: section; the finding was at 1:1 with no source line."""
    spec = ROOT / "examples" / "minimal.yaml"
    result = CliRunner().invoke(main, ["validate", str(spec)])
    assert result.exit_code == 0
    line = next(ln for ln in result.output.splitlines() if "info[FABRIC-NONE]" in ln)
    assert line.startswith(f"{spec}:14:5: ")
    assert '{name: gpu, node_type: gpu, count: 2, hostname: "gpu##"' in result.output
    assert "= hint: declare fabric.compute" in result.output


def test_phase_imbalance_is_cited_at_the_pdu_profile() -> None:
    """policy.max_phase_imbalance is a default the file leaves out: cite the PDU profile."""
    spec = ROOT / "tests" / "data" / "invalid" / "checks" / "fabric_2to1.yaml"
    result = CliRunner().invoke(main, ["validate", str(spec)])
    line = next(ln for ln in result.output.splitlines() if "[POWER-PHASE-IMBALANCE]" in ln)
    number = next(i for i, text in enumerate(spec.read_text().splitlines(), 1)
                  if text.strip().startswith("dgx-3pdu:"))
    assert line.startswith(f"{spec}:{number}:15: "), line
    assert "or set policy.max_phase_imbalance" in result.output  # the hint names the key


# --- the CLI's own words -----------------------------------------------------------------------


def test_render_help_names_the_output_option() -> None:
    result = CliRunner().invoke(main, ["render", "--help"])
    assert "into the folder given by -o/--output" in result.output
    assert "OUT_DIR" not in result.output


def test_validate_of_a_missing_file_does_not_say_nothing_written(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    result = CliRunner().invoke(main, ["validate", str(missing)])
    assert result.exit_code == 1
    assert "error[IO-READ]" in result.output
    assert result.output.rstrip().endswith(f"{missing}: 1 error(s)")
    assert "nothing written" not in result.output


CHECKED = sorted([*(ROOT / "examples").glob("*.yaml"),
                  *(ROOT / "tests" / "data" / "invalid" / "checks").glob("*.yaml")])


@pytest.mark.parametrize("spec", CHECKED, ids=lambda p: p.stem)
def test_no_finding_of_the_checks_is_cited_at_1_1(spec: Path) -> None:
    """Every finding of the checks points at a line of the file that decides it: none is
    left at 1:1 with no source line (a section the file leaves out, as FABRIC-NONE and
    POWER-PHASE-IMBALANCE were)."""
    result = CliRunner().invoke(main, ["validate", str(spec)])
    cited = [line for line in result.output.splitlines() if line.startswith(f"{spec}:1:1: ")]
    assert cited == []
