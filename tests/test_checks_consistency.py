"""Consistency checks: what the compile passes leave open."""

from __future__ import annotations

from dataclasses import replace

import pytest

from cluster_iac.base.errors import CompileError, Severity
from cluster_iac.plan import PartitionPlan
from tests.check_fixtures import findings_of, messages
from tests.conftest import example_build
from tests.facility_fixtures import compile_data, example_data


def test_hostname_clashes_with_a_switch() -> None:
    data = example_data("seed-64gpu-h100")
    data["node_groups"].append({"name": "svc", "role": "service", "node_type": "head",
                                "count": 1, "hostname": "mgmt-r01-#", "racks": "r02"})
    found = findings_of(data, "CONSISTENCY-NAME-CLASH")
    assert [f.message for f in found] == [
        "device name mgmt-r01-1 is used by 2 devices (node, management switch); inventories "
        "need unique names"]
    assert found[0].path == ("node_groups", len(data["node_groups"]) - 1, "hostname")


def test_duplicate_address_in_one_network() -> None:
    plan = example_build("seed-64gpu-h100").plan
    management = dict(plan.addresses["management"])
    management["compute02"] = management["compute01"]
    plan = replace(plan, addresses={**plan.addresses, "management": management})
    assert messages(plan, "CONSISTENCY-DUPLICATE-ADDRESS") == [
        f"management address {management['compute01']} is given to 2 devices "
        f"(compute01, compute02)"]


def test_overlapping_subnets() -> None:
    data = example_data("seed-64gpu-h100")
    data["networks"]["bmc"]["cidr"] = "10.0.0.0/23"
    found = findings_of(data, "CONSISTENCY-SUBNET-OVERLAP")
    assert [f.message for f in found] == [
        "networks.bmc.cidr 10.0.0.0/23 overlaps networks.management.cidr 10.0.1.0/24; hosts "
        "on both would get clashing routes"]
    assert found[0].path == ("networks", "bmc", "cidr")


def test_unused_node_type() -> None:
    data = example_data("seed-64gpu-h100")
    data["node_types"]["spare"] = {"platform": "mgmt-1u"}
    found = findings_of(data, "CONSISTENCY-UNUSED-NODE-TYPE")
    assert [(f.severity, f.message) for f in found] == [
        (Severity.WARNING, "node type spare is defined but no node group uses it, so no rack "
                           "holds it")]


def test_compute_nodes_in_no_partition() -> None:
    data = example_data("seed-64gpu-h100")
    data["node_groups"].append({"name": "extra", "node_type": "head", "count": 2,
                                "hostname": "extra#", "racks": "r02"})
    assert messages(data, "CONSISTENCY-UNSCHEDULED") == [
        "2 compute node(s) of group extra (extra1...) are in no partition, so Slurm never runs "
        "jobs on them"]


def test_partition_lists_a_group_twice() -> None:
    data = example_data("seed-64gpu-h100")
    data["slurm"]["partitions"][0]["node_groups"] = ["compute", "compute"]
    assert messages(data, "CONSISTENCY-PARTITION-DUPLICATE") == [
        "partition gpu-training lists 8 node(s) more than once, e.g. compute01 (named twice: "
        "by a node group, a hostlist or a count)"]


def test_partition_with_unknown_or_no_nodes() -> None:
    plan = example_build("seed-64gpu-h100").plan
    bad = PartitionPlan("ghost", ("compute99",), False, "INFINITE", 1, False,
                        ("slurm", "partitions", 1))
    empty = PartitionPlan("void", (), False, "INFINITE", 1, False, ("slurm", "partitions", 2))
    plan = replace(plan, partitions=(*plan.partitions, bad, empty))
    assert messages(plan, "CONSISTENCY-PARTITION-NODES") == [
        "partition ghost names 1 unknown node(s), e.g. compute99"]
    assert messages(plan, "CONSISTENCY-PARTITION-EMPTY") == ["partition void has no nodes"]


def test_empty_rack() -> None:
    data = example_data("seed-64gpu-h100")
    # r03 takes both aggregation pairs (a third rack gets its own access switches); r04
    # holds nothing but its access switches. ('together': the default, apart, would put each
    # pair's second switch in r04, the other rack without hosts.)
    data["rows"][0]["racks"].append({"names": "r[03-04]", "pdu": "mgmt-208v"})
    for network in ("management", "bmc"):
        data["networks"][network]["aggregation_racks"] = "together"
    found = findings_of(data, "CONSISTENCY-EMPTY-RACK")
    assert [f.message for f in found] == [
        "rack r04 holds no node and no fabric or aggregation switch"]


def test_lustre_group_with_the_wrong_role() -> None:
    """Refused while compiling, at the key, before the servers' targets are laid out (issue
    29: the GPU group as mds_group was a drive-bays error on each GPU node)."""
    data = example_data("dgx-h100-superpod-4su")
    data["storage"]["lustre"]["mds_group"] = "oss"
    with pytest.raises(CompileError) as raised:
        compile_data(data)
    assert [(d.code, d.message, d.path, d.hint) for d in raised.value.diagnostics] == [
        ("CONSISTENCY-LUSTRE-ROLE",
         "storage.lustre.mds_group is node group oss, whose role is lustre_oss, not lustre_mds",
         ("storage", "lustre", "mds_group"),
         "did you mean 'mds', the node group of role lustre_mds?")]


def test_examples_are_consistent() -> None:
    for name in ("seed-64gpu-h100", "dgx-h100-superpod-4su", "gb200-nvl72", "mixed-a100-h100",
                 "minimal"):
        plan = example_build(name).plan
        assert [f for f in findings_of(plan) if f.code.startswith("CONSISTENCY")] == []
