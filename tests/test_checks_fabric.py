"""Fabric checks and the busbw model: radix, oversubscription, rails, connectivity, busbw."""

from __future__ import annotations

from dataclasses import replace

import pytest

from cluster_iac.base.errors import Severity
from cluster_iac.plan import Plan
from cluster_iac.plan.collectives import predictions
from cluster_iac.plan.collectives.constants import EFFICIENCY, NETWORK_EFFICIENCY
from tests.busbw_references import ROCE_400G, hgx
from tests.check_fixtures import errors_of, findings_of, messages
from tests.conftest import example_build
from tests.facility_fixtures import compile_data, example_data


def _whole(plan):  # type: ignore[no-untyped-def]
    [whole] = [p for p in predictions(plan) if p.job == "partition"]
    return whole


def test_seed_partition_is_bound_by_its_one_hca_per_node() -> None:
    p = _whole(example_build("seed-64gpu-h100").plan)
    assert (p.shape.gpus, p.shape.domains, p.shape.net_line_gbs) == (64, 8, 25.0)
    assert p.chosen is not None and p.chosen.limit == "network"
    assert p.busbw_gbs == pytest.approx(25 * NETWORK_EFFICIENCY["infiniband"], rel=0.01)


def test_superpod_runs_nvls_tree_on_eight_ndr_nics_per_node() -> None:
    p = _whole(example_build("dgx-h100-superpod-4su").plan)
    assert (p.shape.gpus, p.shape.net_line_gbs, p.shape.oversubscription) == (1016, 400, 1.0)
    assert p.chosen is not None and p.chosen.algorithm == "nvls_tree"
    assert 8 * 46 <= p.busbw_gbs <= 8 * 48  # NVIDIA: 46-48 GB/s per NDR NIC (nccl-tests #290)


def test_single_node_and_nvl72_rack_are_nvlink_bound() -> None:
    data = example_data("minimal")
    data["node_groups"][0]["count"] = 1
    [p] = predictions(compile_data(data))
    assert (p.job, p.shape.domains, p.chosen and p.chosen.algorithm) == ("partition", 1, "nvls")
    assert p.busbw_gbs == pytest.approx(450 * EFFICIENCY["hopper"].nvls * 2 * 7 / 8, rel=0.01)
    data = example_data("gb200-nvl72")
    data["node_groups"][0].update(count=18, racks="nvl1")
    whole = _whole(compile_data(data))
    assert (whole.shape.gpus, whole.shape.domains) == (72, 1)
    assert whole.chosen is not None and whole.chosen.algorithm == "nvls"


def test_oversubscribed_fabric_halves_the_network_bound_beyond_one_scalable_unit() -> None:
    data = example_data("dgx-h100-superpod-4su")
    data["fabric"]["compute"]["oversubscription"] = "2:1"
    plan = compile_data(data)
    jobs = {p.job: p for p in predictions(plan)}
    assert jobs["partition"].shape.oversubscription == 2.0
    assert jobs["partition"].shape.net_gbs == pytest.approx(
        400 * NETWORK_EFFICIENCY["infiniband"] / 2)
    assert jobs["scalable_unit"].shape.oversubscription == 1.0  # 32 nodes under one leaf set
    assert jobs["scalable_unit"].busbw_gbs > 1.9 * jobs["partition"].busbw_gbs


def _two_to_one() -> dict:  # type: ignore[type-arg]
    data = example_data("dgx-h100-superpod-4su")
    data["fabric"]["compute"]["oversubscription"] = "2:1"
    del data["policy"]["min_allreduce_busbw_gbs"]
    return data


def test_two_to_one_rejected_by_default_and_accepted_when_allowed() -> None:
    data = _two_to_one()
    found = findings_of(data, "FABRIC-OVERSUBSCRIPTION")
    assert [f.message for f in found] == [
        "compute fabric leaf tier is 2:1 oversubscribed (12800 Gb/s down, 6400 Gb/s up per "
        "leaf); the policy allows 1:1 (policy.max_oversubscription), which needs 6400 Gb/s more "
        "uplink per leaf"]
    assert found[0].path == ("fabric", "compute", "oversubscription")
    assert [f.code for f in errors_of(data)] == ["FABRIC-OVERSUBSCRIPTION"]
    data["policy"]["max_oversubscription"] = "2:1"
    assert errors_of(data) == []


def test_busbw_below_policy_minimum() -> None:
    data = example_data("seed-64gpu-h100")
    data["policy"] = {"min_allreduce_busbw_gbs": 30}
    found = findings_of(data, "FABRIC-BUSBW")
    assert [f.message for f in found] == [
        "partition gpu-training: predicted all_reduce busbw of the whole partition (64 GPUs) "
        "is 24.0 GB/s at 8 GiB, 80% of the policy's 30 GB/s (policy.min_allreduce_busbw_gbs), "
        "short by 6.0 GB/s; NCCL would run Ring, limited by the network: 25.0 GB/s of NICs "
        "per NVLink domain x 0.96 (infiniband), 1:1 oversubscribed on the job's path"]
    assert found[0].path == ("node_types", "h100-hdr", "nics")  # one HDR HCA per node
    assert found[0].details == {"measured": 23.98, "limit": 30, "unit": "GB/s"}
    # 2:1 on the SuperPOD halves the network bound below its 300 GB/s minimum: cite the ratio.
    data = example_data("dgx-h100-superpod-4su")
    data["fabric"]["compute"]["oversubscription"] = "2:1"
    data["policy"]["max_oversubscription"] = "2:1"
    [finding] = findings_of(data, "FABRIC-BUSBW")
    assert finding.path == ("fabric", "compute", "oversubscription")
    assert "predicted all_reduce busbw of the whole partition (1016 GPUs) is 191.2 GB/s" \
        in finding.message
    # ... which one scalable unit, under its own leaves, still meets.
    data["policy"]["min_allreduce_busbw_job"] = "scalable_unit"
    assert findings_of(data, "FABRIC-BUSBW") == []


def test_policy_names_the_job_one_node_or_a_gpu_count() -> None:
    data = example_data("seed-64gpu-h100")
    data["policy"] = {"min_allreduce_busbw_gbs": 400, "min_allreduce_busbw_job": "node"}
    assert findings_of(data, "FABRIC-BUSBW") == []  # one node: NVLS, 480 GB/s
    data["policy"]["min_allreduce_busbw_job"] = 16
    [finding] = findings_of(data, "FABRIC-BUSBW")
    assert finding.message.startswith(  # two nodes: tree and NVLS-tree send each byte once
        "partition gpu-training: predicted all_reduce busbw of 16 GPUs is 45.0 GB/s")
    data["policy"]["min_allreduce_busbw_job"] = 1000  # more than the partition holds
    [finding] = findings_of(data, "FABRIC-BUSBW")
    assert "of the whole partition (64 GPUs)" in finding.message


def test_nccl_environment_that_leaves_no_algorithm_is_cited() -> None:
    data = hgx("hgx-h100-8gpu", 2, nccl_env={"NCCL_ALGO": "NVLS"})  # NVLS across nodes: SHARP
    data["policy"] = {"min_allreduce_busbw_gbs": 100}
    [finding] = findings_of(data, "FABRIC-BUSBW")
    assert finding.path == ("nccl",)
    assert "is 0.0 GB/s" in finding.message
    assert finding.message.endswith("no algorithm NCCL may run reaches these GPUs (NCCL_ALGO, "
                                    "NCCL_NVLS_ENABLE or NCCL_COLLNET_ENABLE in the NCCL "
                                    "environment leave none; NCCL would fail)")


def test_sharp_needs_infiniband() -> None:
    data = hgx("hgx-h100-8gpu", 4)
    data["fabric"]["compute"]["sharp"] = True
    assert findings_of(data, "FABRIC-SHARP") == []
    data = hgx("hgx-h100-8gpu", 4, nics=ROCE_400G, technology="roce")
    data["fabric"]["compute"]["sharp"] = True
    [finding] = findings_of(data, "FABRIC-SHARP")
    assert finding.path == ("fabric", "compute", "sharp")
    assert finding.message.startswith("fabric.compute.sharp needs InfiniBand")


@pytest.mark.parametrize(("switch", "ports", "message"), [
    ("ib-leaf-1", 4,
     "compute leaf switch ib-leaf-1 (qm8700) has 18 cables but 4 ports; over by 14"),
    # a management switch's ports ('swp47') are no breakout legs: its cables count, each port
    # its own (the cage count once took every 'swp' port for one cage, 's' for a leg, and no
    # management switch was ever found over its radix)
    ("mgmt-r02-1", 2,
     "management access switch mgmt-r02-1 (sn2201) has 3 cables but 2 ports; over by 1"),
])
def test_radix_exceeded(switch: str, ports: int, message: str) -> None:
    plan = example_build("seed-64gpu-h100").plan
    switches = tuple(s._replace(ports=ports) if s.name == switch else s for s in plan.switches)
    found = findings_of(replace(plan, switches=switches), "FABRIC-RADIX")
    assert [f.message for f in found] == [message]


def test_radix_counts_a_split_ports_cage_once() -> None:
    """The RoCE example's leaves split each cage in two legs ('p1s1', 'p1s2'): a leaf with 24
    fabric cables on 16 cages is within 16 ports and over 15 by one cage, not by 9 cables."""
    plan = example_build("spectrum-x-roce").plan
    for ports, expected in ((16, []), (15, [
            "compute leaf switch eth-leaf-su1-r1 (sn5600) has 16 cables but 15 ports; over "
            "by 1"])):
        switches = tuple(s._replace(ports=ports) if s.name == "eth-leaf-su1-r1" else s
                         for s in plan.switches)
        found = findings_of(replace(plan, switches=switches), "FABRIC-RADIX")
        assert [f.message for f in found] == expected


def test_examples_within_radix() -> None:
    for name in ("dgx-h100-superpod-4su", "gb200-nvl72", "mixed-a100-h100"):
        assert findings_of(example_build(name).plan, "FABRIC-RADIX") == []


def _with_wiring(plan: Plan, **tables: object) -> Plan:
    """The plan with some of its compute fabric's wiring tables replaced."""
    wiring = replace(plan.fabric_wiring["compute"], **tables)
    return replace(plan, fabric_wiring={**plan.fabric_wiring, "compute": wiring})


def test_rail_misaligned_cable() -> None:
    plan = example_build("dgx-h100-superpod-4su").plan
    up = plan.fabric_wiring["compute"].up
    leaves = list(up["dgx-005"])
    leaves[2], leaves[3] = leaves[3], leaves[2]  # NICs 2 and 3 in each other's rail leaf
    found = findings_of(_with_wiring(plan, up={**up, "dgx-005": tuple(leaves)}), "FABRIC-RAIL")
    assert [f.message for f in found] == [
        "rail-optimized compute fabric: dgx-005 NIC 2 on ib-leaf-su1-r4 (rail 4, SU 1) and 1 "
        "more; NIC i of every node must reach rail leaf i+1 of its own scalable unit"]
    assert found[0].details["measured"] == 2
    assert findings_of(plan, "FABRIC-RAIL") == []


def test_rail_cable_to_another_scalable_unit() -> None:
    plan = example_build("dgx-h100-superpod-4su").plan
    up = plan.fabric_wiring["compute"].up
    leaves = ("ib-leaf-su2-r1", *up["dgx-005"][1:])  # NIC 0 on the right rail of SU 2
    found = findings_of(_with_wiring(plan, up={**up, "dgx-005": leaves}), "FABRIC-RAIL")
    assert [f.message for f in found] == [
        "rail-optimized compute fabric: dgx-005 NIC 0 on ib-leaf-su2-r1 (rail 1, SU 2); NIC i "
        "of every node must reach rail leaf i+1 of its own scalable unit"]


def test_connectivity_node_cut_off_or_missing() -> None:
    plan = example_build("dgx-h100-superpod-4su").plan
    wiring = plan.fabric_wiring["compute"]
    # dgx-005's cables unplugged; dgx-006 not cabled at all
    up = {name: switches for name, switches in wiring.up.items() if name != "dgx-006"}
    tier = {name: tier for name, tier in wiring.tier.items() if name != "dgx-006"}
    found = findings_of(_with_wiring(plan, up={**up, "dgx-005": ()}, tier=tier),
                        "FABRIC-CONNECTIVITY")
    assert [f.message for f in found] == [
        "GPU node dgx-006 is not cabled to the compute fabric; 126 of 127 GPU nodes are "
        "connected",
        "GPU node dgx-005 cannot reach the rest of the compute fabric; 126 of 127 GPU nodes "
        "are connected"]


def test_gpu_nodes_without_fabric_is_info() -> None:
    found = findings_of(example_build("minimal").plan, "FABRIC-NONE")
    assert [(f.severity, f.message) for f in found] == [
        (Severity.INFO, "2 GPU nodes have no compute fabric: jobs spanning nodes fall back to "
                        "TCP over the management network")]


def test_messages_helper_sees_no_fabric_errors_in_examples() -> None:
    for name in ("seed-64gpu-h100", "dgx-h100-superpod-4su", "gb200-nvl72"):
        plan = example_build(name).plan
        assert [m for code in ("FABRIC-RAIL", "FABRIC-CONNECTIVITY", "FABRIC-BUSBW")
                for m in messages(plan, code)] == []
