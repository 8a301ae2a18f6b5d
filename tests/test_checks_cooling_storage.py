"""Cooling checks (air/liquid racks, facility heat) and storage checks (read, checkpoints)."""

from __future__ import annotations

import math

import pytest

from cluster_iac.base.errors import Severity
from cluster_iac.plan.checkpoint import daly_interval_s, storage_figures, young_interval_s
from tests.check_fixtures import findings_of, messages
from tests.conftest import example_build
from tests.facility_fixtures import example_data


def test_air_cooled_dgx_racks_over_the_default_40kw() -> None:
    data = example_data("dgx-h100-superpod-4su")
    del data["policy"]["air_cooled_rack_kw"]  # back to the 40 kW default
    found = findings_of(data, "COOLING-AIR")
    assert len(found) == 4  # one per rack group (su1..su4), each naming its first rack
    assert found[0].message == (
        "air-cooled rack su1-r1 must shed 41.1 kW of heat, 103% of the 40 kW an air-cooled rack "
        "can (policy.air_cooled_rack_kw); over by 1.1 kW: declare cooling: liquid with its "
        "liquid_capacity_kw (and 7 more rack(s) of this rack group)")
    assert found[0].path == ("rows", 0, "racks", 0, "cooling")


def test_liquid_rack_over_its_loop() -> None:
    data = example_data("seed-64gpu-h100")
    data["rows"][0]["racks"][0]["liquid_capacity_kw"] = 40
    assert messages(data, "COOLING-LIQUID") == [
        "liquid-cooled rack r01 must shed 45.1 kW of heat, 113% of its loop's 40 kW; "
        "over by 5.1 kW"]


def test_liquid_rack_without_capacity_warns() -> None:
    data = example_data("seed-64gpu-h100")
    del data["rows"][0]["racks"][0]["liquid_capacity_kw"]
    data["cooling"]["loops"] = []  # nor a loop that would check it
    found = findings_of(data, "COOLING-LIQUID-CAPACITY")
    assert [f.message for f in found] == [
        "liquid-cooled rack r01 sheds 45.1 kW but declares no liquid_capacity_kw and is in no "
        "cooling.loops entry, so its liquid cooling cannot be checked"]
    assert found[0].severity is Severity.WARNING


def test_facility_heat_rejection() -> None:
    data = example_data("gb200-nvl72")
    data["cooling"]["heat_rejection_kw"] = 500
    assert messages(data, "COOLING-FACILITY") == [
        "the cluster's 570.9 kW of heat is 114% of the facility's 500 kW heat rejection; "
        "over by 70.9 kW"]


def test_read_bandwidth_per_gpu() -> None:
    data = example_data("dgx-h100-superpod-4su")
    data["workload"]["read_gbs_per_gpu"] = 0.5
    found = findings_of(data, "STORAGE-READ")
    # 400 GB/s / 1016 GPUs = 0.394 GB/s; 1016 x 0.5 = 508 GB/s needed.
    assert [f.message for f in found] == [
        "Lustre reads 400.0 GB/s for 1016 GPUs = 0.394 GB/s per GPU, 79% of the workload's "
        "0.5 GB/s per GPU; short by 108.0 GB/s in aggregate"]
    assert found[0].path == ("workload", "read_gbs_per_gpu")


def test_read_need_without_lustre() -> None:
    data = example_data("seed-64gpu-h100")
    del data["storage"]
    data["workload"] = {"read_gbs_per_gpu": 1}
    assert messages(data, "STORAGE-READ") == [
        "the workload needs 1 GB/s per GPU but the spec declares no Lustre file system"]


def test_checkpoint_write_overhead() -> None:
    data = example_data("dgx-h100-superpod-4su")
    data["storage"]["lustre"]["write_gbs"] = 20  # 4500 GB / 20 GB/s = 225 s of 1800 s
    assert messages(data, "STORAGE-CHECKPOINT") == [
        "a 4500 GB checkpoint at 20.0 GB/s takes 225 s, 12.5% of the 30 min interval; the policy "
        "allows 10% (180 s), over by 45 s"]
    data["policy"]["max_checkpoint_overhead"] = 0.15
    assert findings_of(data, "STORAGE-CHECKPOINT") == []


def test_checkpoint_interval_far_from_optimum() -> None:
    data = example_data("dgx-h100-superpod-4su")
    data["workload"]["checkpoint_interval_min"] = 240
    data["workload"]["gpu_mtbf_hours"] = 50_000  # given: M from it, not from the parts
    found = findings_of(data, "STORAGE-CHECKPOINT-INTERVAL")
    # delta = 18 s, M = 50,000 h / 1008 (the largest job: 127 nodes less one spare) = 49.60 h,
    # the spec's measured per-GPU rate; Young sqrt(2 x 18 x 178,571 s) = 42.3 min.
    assert [f.message for f in found] == [
        "checkpoint interval 240 min is 5.7x the optimum: Daly 42.1 min, Young 42.3 min, for a "
        "18 s write and an MTTF of 49.60 h (the largest job, 1,008 GPUs of partition batch)"]
    assert found[0].severity is Severity.WARNING


def test_young_and_daly_formulas() -> None:
    mtbf = 50_000 / 1016 * 3600
    assert young_interval_s(18, mtbf) == pytest.approx(math.sqrt(2 * 18 * mtbf))
    assert young_interval_s(18, mtbf) / 60 == pytest.approx(42.09, abs=0.01)
    # Daly: sqrt(2 d M) (1 + sqrt(d/2M)/3 + d/(18 M)) - d, a little under Young when d << M.
    ratio = 18 / (2 * mtbf)
    expected = math.sqrt(2 * 18 * mtbf) * (1 + math.sqrt(ratio) / 3 + ratio / 9) - 18
    assert daly_interval_s(18, mtbf) == pytest.approx(expected)
    assert daly_interval_s(18, mtbf) < young_interval_s(18, mtbf)
    assert daly_interval_s(100, 40) == 40  # delta >= 2M: checkpoint every MTBF


def test_mtbf_from_the_parts_of_every_node() -> None:
    """Without workload.gpu_mtbf_hours, M = 1 / (the per-job term + the job's nodes x one node's
    failure rate at the expected end): a node's GPUs (gpu, hbm), itself (host, psu) and its
    compute NIC ports (nic, link); the job is the partition less its one default spare."""
    from cluster_iac.plan.failures import class_rates

    for name, nodes, gpus, nics in (("dgx-h100-superpod-4su", 126, 8, 8),
                                    ("seed-64gpu-h100", 7, 8, 1)):
        plan = example_build(name).plan
        rate = {r.key: r.ends[1] for r in class_rates(plan) if r.ends}
        per_node = (gpus * (rate["gpu"] + rate["hbm"]) + rate["host"]
                    + rate["psu"] + nics * (rate["nic"] + rate["link"]))
        fig = storage_figures(plan)
        assert fig.job_mtbf_h == pytest.approx(1e6 / (rate["software"] + nodes * per_node))
    superpod = storage_figures(example_build("dgx-h100-superpod-4su").plan)
    assert superpod.overhead == pytest.approx(18 / 1800)
