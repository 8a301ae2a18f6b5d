"""Fabric checks and the busbw model: radix, oversubscription, rails, connectivity, busbw."""

from __future__ import annotations

from dataclasses import replace

import pytest

from cluster_iac.errors import Severity
from cluster_iac.plan.busbw import NETWORK_EFFICIENCY, NVLINK_EFFICIENCY, predictions
from tests.check_fixtures import errors_of, findings_of, messages
from tests.conftest import example_build
from tests.facility_fixtures import compile_data, example_data

SEED_GUIDE_BUSBW_GBS = 25  # seed guide, 'Validate All-Reduce': 64 H100, 1 x HDR per node


def test_seed_busbw_within_15_percent_of_the_guide() -> None:
    [p] = predictions(example_build("seed-64gpu-h100").plan)
    assert (p.gpus, p.domains, p.nic_gbs) == (64, 8, 25.0)  # one 200 Gb/s HCA per node
    assert p.bottleneck == "network"
    assert abs(p.busbw_gbs - SEED_GUIDE_BUSBW_GBS) / SEED_GUIDE_BUSBW_GBS <= 0.15
    assert p.busbw_gbs == pytest.approx(25 * NETWORK_EFFICIENCY["infiniband"])


def test_dgx_superpod_busbw_is_node_nic_bound() -> None:
    """8 x 400 Gb/s per DGX H100 = 400 GB/s of NICs; NVIDIA expects 46-48 GB/s per NDR NIC."""
    [p] = predictions(example_build("dgx-h100-superpod-4su").plan)
    assert p.nic_gbs == 400
    assert 8 * 46 <= p.busbw_gbs <= 8 * 48
    assert p.nvlink_gbs == pytest.approx(450 * NVLINK_EFFICIENCY)


def test_dgx_a100_busbw_near_nvidias_measurement() -> None:
    """NVIDIA measures 192 GB/s all_reduce busbw on DGX A100 with 8 x HDR (NVIDIA/nccl #812)."""
    a100 = next(p for p in predictions(example_build("mixed-a100-h100").plan) if p.scope == "a100")
    assert a100.nic_gbs == 200
    assert abs(a100.busbw_gbs - 192) / 192 <= 0.15


def test_single_node_and_nvl72_rack_are_nvlink_bound() -> None:
    data = example_data("minimal")
    data["node_groups"][0]["count"] = 1
    [p] = predictions(compile_data(data))
    assert (p.domains, p.network_gbs, p.bottleneck) == (1, None, "nvlink")
    assert p.busbw_gbs == pytest.approx(450 * NVLINK_EFFICIENCY)
    [p] = predictions(example_build("gb200-nvl72").plan)
    assert (p.domains, p.bottleneck) == (4, "nvlink")  # 72 NICs per rack outrun NVLink
    data = example_data("gb200-nvl72")
    data["node_groups"][0].update(count=18, racks="nvl1")
    [p] = predictions(compile_data(data))
    assert (p.domains, p.network_gbs) == (1, None)


def test_oversubscribed_fabric_halves_the_network_bound() -> None:
    data = example_data("dgx-h100-superpod-4su")
    data["fabric"]["compute"]["oversubscription"] = "2:1"
    [p] = predictions(compile_data(data))
    assert p.oversubscription == 2.0
    assert p.busbw_gbs == pytest.approx(400 * NETWORK_EFFICIENCY["infiniband"] / 2)


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
        "partition gpu-training: predicted all_reduce busbw 23.0 GB/s over 64 GPUs is 77% of "
        "the policy's 30 GB/s, short by 7.0 GB/s (NVLink bound 369.0 GB/s, network bound "
        "23.0 GB/s (25.0 GB/s of NICs per NVLink domain, infiniband, 1:1 oversubscribed); the "
        "network limits it)"]
    # 2:1 on the SuperPOD halves the network bound below its 300 GB/s minimum: cite the ratio.
    data = example_data("dgx-h100-superpod-4su")
    data["fabric"]["compute"]["oversubscription"] = "2:1"
    data["policy"]["max_oversubscription"] = "2:1"
    [finding] = findings_of(data, "FABRIC-BUSBW")
    assert finding.path == ("fabric", "compute", "oversubscription")
    assert "predicted all_reduce busbw 184.0 GB/s over 1016 GPUs" in finding.message


def test_radix_exceeded() -> None:
    plan = example_build("seed-64gpu-h100").plan
    switches = tuple(replace(s, ports=4) if s.name == "ib-leaf-1" else s for s in plan.switches)
    found = findings_of(replace(plan, switches=switches), "FABRIC-RADIX")
    assert [f.message for f in found] == [
        "compute leaf switch ib-leaf-1 (qm8700) has 8 cables but 4 ports; over by 4"]


def test_examples_within_radix() -> None:
    for name in ("dgx-h100-superpod-4su", "gb200-nvl72", "mixed-a100-h100"):
        assert findings_of(example_build(name).plan, "FABRIC-RADIX") == []


def test_rail_misaligned_cable() -> None:
    plan = example_build("dgx-h100-superpod-4su").plan
    graph = plan.graphs["compute"].copy()
    for _a, _b, data in graph.edges("dgx-005", data=True):
        if data["rail"] == 2:
            data["rail"] = 3  # NIC 3 plugged where NIC 2 should be
    found = findings_of(replace(plan, graphs={**plan.graphs, "compute": graph}), "FABRIC-RAIL")
    assert [f.message for f in found] == [
        "rail-optimized compute fabric: dgx-005 NIC 3 on ib-leaf-su1-r3 (rail 3, SU 1); NIC i of "
        "every node must reach rail leaf i+1 of its own scalable unit"]
    assert findings_of(plan, "FABRIC-RAIL") == []


def test_connectivity_node_cut_off_or_missing() -> None:
    plan = example_build("dgx-h100-superpod-4su").plan
    graph = plan.graphs["compute"].copy()
    graph.remove_edges_from(list(graph.edges("dgx-005")))
    graph.remove_node("dgx-006")
    found = findings_of(replace(plan, graphs={**plan.graphs, "compute": graph}),
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
