"""The Slurm version table drives the output: each release's choices, and the defects they fix."""

from __future__ import annotations

import typing

import pytest

from cluster_iac.base.errors import CompileError
from cluster_iac.base.hostlist import expand
from cluster_iac.catalog.slurm_releases import (
    MEASURED,
    SLURM_RELEASES,
    slurm_conf_keys,
    slurm_release,
)
from cluster_iac.emit import slurm
from cluster_iac.spec.cluster import SlurmVersion
from tests.conftest import EXAMPLE_IDS
from tests.facility_fixtures import compile_data
from tests.slurm_fixtures import example_data, retargeted

VERSIONS = list(SLURM_RELEASES)


def _codes(data: dict[str, typing.Any]) -> list[tuple[str, tuple[object, ...]]]:
    with pytest.raises(CompileError) as info:
        compile_data(data)
    return [(d.code, d.path) for d in info.value.diagnostics]


def _params(files: dict[str, str]) -> dict[str, str]:
    lines = [ln for ln in files["slurm/slurm.conf"].splitlines()
             if ln and not ln.startswith(("#", "NodeName=", "PartitionName="))]
    return dict(ln.split("=", 1) for ln in lines)


def _partition(files: dict[str, str], name: str) -> dict[str, str]:
    for line in files["slurm/slurm.conf"].splitlines():
        if line.startswith(f"PartitionName={name} "):
            return dict(f.split("=", 1) for f in line.split())
    raise AssertionError(f"no partition {name}")


# --- the table -----------------------------------------------------------------------------------


def test_the_spec_accepts_exactly_the_tables_releases() -> None:
    assert list(typing.get_args(SlurmVersion)) == VERSIONS
    assert VERSIONS == ["22.05", "23.02", "23.11", "24.05", "24.11", "25.05", "25.11", "26.05"]
    assert set(MEASURED) <= set(VERSIONS)


def test_features_arrive_once_and_stay() -> None:
    """Each capability, once a release has it, every later release has it too."""
    for name in ("topology_block", "block_sizes", "topology_yaml", "exclusive_node",
                 "cgroup_disabled"):
        flags = [getattr(SLURM_RELEASES[v], name) for v in VERSIONS]
        assert flags == sorted(flags), name
    assert [v for v in VERSIONS if slurm_release(v).topology_block][0] == "23.11"
    assert [v for v in VERSIONS if slurm_release(v).block_sizes][0] == "24.05"
    assert [v for v in VERSIONS if slurm_release(v).topology_yaml][0] == "25.05"


def test_key_table_knows_measured_releases_exactly() -> None:
    """At a measured release every key is 'yes' or 'no', never unsure; between them a key
    that came or went is unsure."""
    keys = slurm_conf_keys()
    for version in MEASURED:
        assert {slurm_release(version).key_status(k.name) for k in keys.values()} <= {"yes", "no"}
    assert slurm_release("22.05").key_status("TLSType") == "no"
    assert slurm_release("23.11").key_status("TLSType") == "unsure"
    assert slurm_release("24.11").key_status("TLSType") == "yes"
    assert slurm_release("26.05").key_status("FrontendName") == "no"
    assert slurm_release("22.05").key_status("schedulerparameters") == "yes"  # case-insensitive
    assert len(keys) > 200


@pytest.mark.parametrize("version", VERSIONS)
def test_every_generated_key_is_one_the_release_reads(version: str) -> None:
    """No release is sent a key its parser lacks (an unknown key is fatal to slurmctld)."""
    release = slurm_release(version)
    for name in EXAMPLE_IDS:
        _plan, files = retargeted(name, version)
        for key in _params(files):
            assert release.key_status(key) == "yes", (name, version, key)


# --- accounting noise ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_no_gathering_without_storage(name: str) -> None:
    """jobacct_gather/cgroup with accounting_storage/none logs 'Job accounting information
    gathered, but not stored' at every start: gather only where accounting stores."""
    _plan, files = retargeted(name, "26.05")
    params = _params(files)
    storing = params["AccountingStorageType"] != "accounting_storage/none"
    assert (params["JobAcctGatherType"] != "jobacct_gather/none") == storing


# --- topology ------------------------------------------------------------------------------------


def test_block_on_a_slurm_without_topology_block_is_a_located_error() -> None:
    data = example_data("gb200-nvl72", "23.02")
    data["slurm"]["topology"] = "block"
    assert _codes(data) == [("SLURM-TOPOLOGY-BLOCK", ("slurm", "topology"))]


def test_block_without_nvlink_racks_is_a_located_error() -> None:
    data = example_data("dgx-h100-superpod-4su", "24.11")
    data["slurm"]["topology"] = "block"
    assert _codes(data) == [("SLURM-TOPOLOGY-BLOCK", ("slurm", "topology"))]


def test_auto_never_writes_block_without_nvlink_racks() -> None:
    for version in VERSIONS:
        plan, files = retargeted("dgx-h100-superpod-4su", version)
        assert plan.slurm.topology == "tree"
        assert "BlockName" not in files["slurm/topology.conf"]


@pytest.mark.parametrize("version", ["23.11", "24.05", "24.11", "25.05", "26.05"])
def test_uneven_racks_get_a_base_block_every_release_accepts(version: str) -> None:
    """18/18/18/16 nodes: 24.11 refuses a block smaller than the base block, which it takes
    from the first block unless BlockSizes says otherwise."""
    data = example_data("gb200-nvl72", version)
    data["node_groups"][0]["count"] = 70
    plan, files = _build(data)
    blocks = [dict(f.split("=", 1) for f in ln.split())
              for ln in files["slurm/topology.conf"].splitlines() if ln.startswith("BlockName=")]
    sizes = [len(expand(b["Nodes"])) for b in blocks]
    assert sorted(sizes) == [16, 18, 18, 18]
    text = files["slurm/topology.conf"]
    if slurm_release(version).block_sizes:
        assert "BlockSizes=16" in text.splitlines()
    else:
        assert "BlockSizes" not in text and "BlockLevels" not in text
        assert sizes[0] == 16


def _build(data: dict[str, typing.Any]) -> tuple[typing.Any, dict[str, str]]:
    from cluster_iac.emit import render_all

    plan = compile_data(data)
    return plan, render_all(plan)


def _mixed(version: str, topology: str = "auto") -> dict[str, typing.Any]:
    """Four GB200 racks beside eight H100 nodes, one partition each and one for all."""
    data = example_data("gb200-nvl72", version)
    data["node_types"]["h100"] = {"platform": "hgx-h100-8gpu"}
    data["node_groups"].insert(1, {"name": "h100", "node_type": "h100", "count": 8,
                                   "hostname": "h100-##", "racks": "hx[1-2]"})
    data["rows"][0]["racks"].append({"names": "hx[1-2]", "height_u": 48, "max_power_kw": 60,
                                     "cooling": "liquid", "liquid_capacity_kw": 60,
                                     "pdu": "nvl72-ab"})
    data["rows"][0]["racks"][2]["names"] = data["fabric"]["compute"]["racks"] = "net[1-2]"
    data["power"]["pdu_profiles"]["net-ab"]["outlets"] = 48
    data["slurm"]["partitions"] = [
        {"name": "gb200", "node_groups": ["gb200"], "default": True, "exclusive": True},
        {"name": "h100", "node_groups": ["h100"]},
        {"name": "all", "node_groups": ["gb200", "h100"]},
    ]
    data["slurm"]["topology"] = topology
    return data


@pytest.mark.parametrize("version", ["25.05", "25.11", "26.05"])
def test_mixed_cluster_gets_a_topology_per_partition(version: str) -> None:
    plan, files = _build(_mixed(version))
    assert "slurm/topology.conf" not in files and "slurm/topology.yaml" in files
    assert "TopologyPlugin" not in _params(files)
    assert _partition(files, "gb200").get("Topology") == "nvlink"
    assert "Topology" not in _partition(files, "h100")
    assert "Topology" not in _partition(files, "all")


@pytest.mark.parametrize("version", ["23.11", "24.05", "24.11"])
def test_mixed_cluster_before_25_05(version: str) -> None:
    """auto falls back to the tree, with the reason in topology.conf; 'block' is an error."""
    plan, files = _build(_mixed(version))
    assert plan.slurm.topology == "tree"
    assert "one topology for all partitions" in files["slurm/topology.conf"]
    assert _codes(_mixed(version, "block")) == [("SLURM-TOPOLOGY-BLOCK", ("slurm", "topology"))]


def test_exclusive_is_written_as_the_release_has_it() -> None:
    for version in VERSIONS:
        _plan, files = retargeted("gb200-nvl72", version) if version >= "23.11" \
            else retargeted("dgx-h100-superpod-4su", version)
        part = next(ln for ln in files["slurm/slurm.conf"].splitlines()
                    if ln.startswith("PartitionName="))
        if slurm_release(version).exclusive_node:
            assert " Exclusive=NODE " in part and "OverSubscribe" not in part
        else:
            assert " OverSubscribe=EXCLUSIVE " in part and "Exclusive=" not in part.replace(
                "OverSubscribe=EXCLUSIVE", "")


# --- partition time limits -----------------------------------------------------------------------


@pytest.mark.parametrize("limit", ["soon", "1-2-3", ":::", "7d", "1:2:3:4", "-5", "", "04:00 "])
def test_max_time_outside_slurms_formats_is_a_located_error(limit: str) -> None:
    data = example_data("minimal")
    data["slurm"]["partitions"][0]["max_time"] = limit
    assert _codes(data) == [("SLURM-TIME", ("slurm", "partitions", 0, "max_time"))]


@pytest.mark.parametrize("limit", ["90", "90:30", "04:00:00", "7-00", "7-00:00", "7-00:00:00",
                                   "INFINITE", "UNLIMITED", "infinite"])
def test_max_time_in_slurms_formats_is_written(limit: str) -> None:
    data = example_data("minimal")
    data["slurm"]["partitions"][0]["max_time"] = limit
    _plan, files = _build(data)
    assert _partition(files, "gpu")["MaxTime"] == limit


# --- the extension point ------------------------------------------------------------------------


def test_parameter_groups_are_the_only_source_of_global_keys() -> None:
    """Every global key of slurm.conf comes from a PARAMETER_GROUPS function or slurm.extra."""
    _plan, files = retargeted("dgx-h100-superpod-4su", "24.11")
    plan = _plan
    from_groups = {k for _h, group in slurm.PARAMETER_GROUPS for k, _v in group(plan)}
    assert set(_params(files)) == from_groups
