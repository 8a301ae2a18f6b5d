"""The all_reduce model's parts: latency laws, NCCL's choice, what narrows it, job sizes."""

from __future__ import annotations

from dataclasses import replace

import pytest

from cluster_iac.emit.report import _busbw
from cluster_iac.plan.collectives import (
    JobShape,
    estimates,
    message_bytes,
    nccl_choice,
    predictions,
    size_text,
)
from cluster_iac.plan.collectives.algorithms import estimate
from cluster_iac.plan.collectives.constants import EFFICIENCY
from tests.busbw_references import hgx, nvl72, with_message
from tests.facility_fixtures import compile_data, example_data

GIB = 1 << 30


def _shape(gpus: int, domains: int, **changes: object) -> JobShape:
    base = JobShape(gpus=gpus, nodes=domains, domains=domains, domain_gpus=gpus // domains,
                    intra_gbs=450, intra_link="NVLink", efficiency=EFFICIENCY["hopper"],
                    nvlink_sharp=True, net_line_gbs=400, net_efficiency=0.96,
                    oversubscription=1.0, technology="infiniband",
                    enabled=frozenset({"ring", "tree", "nvls", "nvls_tree"}))
    return replace(base, **changes)  # type: ignore[arg-type]


def _jobs(data: dict) -> dict:  # type: ignore[type-arg]
    return {p.job: p for p in predictions(compile_data(data))}


def test_message_sizes_read_as_nccl_tests_reads_them() -> None:
    assert [message_bytes(s) for s in ("8G", "512M", "64K", 1000)] == [
        8 * GIB, 512 << 20, 64 << 10, 1000]
    assert [size_text(n) for n in (8 * GIB, 512 << 20, 133169160)] == [
        "8 GiB", "512 MiB", "133169160 B"]
    with pytest.raises(ValueError):
        message_bytes("8T")


def test_ring_latency_grows_with_ranks_tree_with_their_logarithm() -> None:
    def latency(algorithm: str, gpus: int, domains: int) -> float:
        found = estimate(_shape(gpus, domains), algorithm, GIB)
        assert found is not None
        return found.latency_us

    # ring: 8.4 + (2(n-1) - 2D) x 3.4 + 2D x 14 (NCCL's Simple-protocol step latencies)
    assert latency("ring", 64, 8) == pytest.approx(8.4 + (126 - 16) * 3.4 + 16 * 14)
    assert latency("ring", 1024, 128) > 15 * latency("ring", 64, 8)
    # tree: 8.4 + 2 ((g-1) x 4.0 + log2(D) x 14); NVLS-tree: 25 + 2 log2(D) x 20.9
    assert latency("tree", 64, 8) == pytest.approx(8.4 + 2 * (7 * 4.0 + 3 * 14))
    assert latency("tree", 1024, 128) - latency("tree", 64, 8) == pytest.approx(2 * 4 * 14)
    assert latency("nvls_tree", 1024, 128) == pytest.approx(25 + 2 * 7 * 20.9)


def test_nccl_picks_the_least_time_and_small_messages_flip_the_choice() -> None:
    big, small = estimates(_shape(1024, 128), 8 * GIB), estimates(_shape(1024, 128), 1 << 20)
    assert nccl_choice(big) == min(big, key=lambda e: e.time_us)
    assert {e.algorithm for e in big} == {"ring", "tree", "nvls_tree"}
    # 8 GiB: the NIC-bound NVLS-tree; 1 MiB: the tree, whose 2 log2(D) network steps cost
    # less than NVLS-tree's; ring's 2(n-1) steps outweigh its bandwidth.
    assert [nccl_choice(found).algorithm for found in (big, small)] == [  # type: ignore[union-attr]
        "nvls_tree", "tree"]
    ring = next(e for e in small if e.algorithm == "ring")
    assert ring.latency_us > 0.5 * ring.time_us


def test_nvl72_busbw_falls_with_racks_instead_of_staying_flat() -> None:
    busbw = [_jobs(with_message(nvl72(racks), "8G"))["partition"].busbw_gbs
             for racks in (1, 2, 20)]
    assert busbw[0] > busbw[1] > busbw[2]
    assert busbw[0] / busbw[2] > 2  # published: 834.6 -> 381.5 GB/s (coreweave/nccl-tests)


def test_nvls_lifts_one_h100_node_above_ring_and_the_environment_can_turn_it_off() -> None:
    on = _jobs(hgx("hgx-h100-8gpu", 1))["partition"]
    off = _jobs(hgx("hgx-h100-8gpu", 1, nccl_env={"NCCL_NVLS_ENABLE": "0"}))["partition"]
    old = _jobs(hgx("hgx-h100-8gpu", 1, nccl_version="2.16"))["partition"]
    assert on.chosen is not None and on.chosen.algorithm == "nvls"
    assert on.busbw_gbs == pytest.approx(480, rel=0.01)
    for without in (off, old):
        assert [e.algorithm for e in without.estimates] == ["ring", "tree"]
        assert without.busbw_gbs == pytest.approx(450 * 0.82, rel=0.01)


@pytest.mark.parametrize(("value", "allowed"), [
    ("Ring", ["ring"]), ("^NVLS,NVLSTree", ["ring", "tree"]), ("Tree,Ring", ["ring", "tree"]),
    ("allreduce:tree;broadcast:ring", ["tree"]), ("broadcast:ring", ["ring", "tree", "nvls_tree"]),
])
def test_nccl_algo_narrows_the_choice(value: str, allowed: list[str]) -> None:
    whole = _jobs(hgx("hgx-h100-8gpu", 2, nccl_env={"NCCL_ALGO": value}))["partition"]
    assert [e.algorithm for e in whole.estimates] == allowed


def test_sharp_fabric_enables_collnet_and_nvls_across_nodes() -> None:
    data = hgx("hgx-h100-8gpu", 4)
    data["fabric"]["compute"]["sharp"] = True
    plan = compile_data(data)
    assert plan.nccl["gpu"].env()["NCCL_COLLNET_ENABLE"] == "1"
    [whole] = [p for p in predictions(plan) if p.job == "partition"]
    assert [e.algorithm for e in whole.estimates] == [
        "ring", "tree", "nvls", "nvls_tree", "collnet"]
    # IB SHARP sends each byte over the NICs once: NVLS-limited, above NVLS-tree's NIC bound.
    assert whole.chosen is not None and whole.chosen.algorithm == "nvls"
    nvls_tree = whole.of("nvls_tree")
    assert nvls_tree is not None and whole.busbw_gbs > 1.15 * nvls_tree.busbw_gbs
    data["nccl"] = {"env": {"NCCL_COLLNET_ENABLE": "0"}}
    [whole] = [p for p in predictions(compile_data(data)) if p.job == "partition"]
    assert "collnet" not in {e.algorithm for e in whole.estimates}


def test_job_sizes_per_partition() -> None:
    data = example_data("dgx-h100-superpod-4su")
    data["policy"]["allreduce_job_sizes"] = [16, 512, 100000]
    jobs = _jobs(data)
    assert [(job, p.shape.gpus) for job, p in jobs.items()] == [
        ("node", 8), ("16 GPUs", 16), ("scalable_unit", 256), ("512 GPUs", 512),
        ("partition", 1016)]


def test_job_size_labels_say_what_whole_nodes_hold_and_keep_unheld_asks() -> None:
    """100 GPUs on 8-GPU nodes is 13 nodes and 104 GPUs: the busbw table's label says 104 and
    that 100 was asked; an ask above the partition is a row of its own, not dropped."""
    data = example_data("dgx-h100-superpod-4su")
    data["policy"]["allreduce_job_sizes"] = [100, 100000]
    jobs = _jobs(data)
    label = "104 GPUs (100 asked, rounded up to whole nodes)"
    assert (jobs[label].shape.nodes, jobs[label].shape.gpus) == (13, 104)
    rows = [r for t in _busbw(compile_data(data))["tables"] for r in t["rows"]]
    assert [r["gpus"] for r in rows if r["job"] == label] == ["104"]
    [unheld] = [r for r in rows if r["job"].startswith("100,000 GPUs")]
    assert unheld["job"] == "100,000 GPUs (more than the partition's 1,016)"
    assert unheld["busbw"] == "-" and "GOODPUT-JOB-SIZE" in unheld["limit"]


def test_no_compute_fabric_leaves_multi_node_jobs_unpredicted() -> None:
    jobs = _jobs(example_data("minimal"))
    assert (jobs["node"].chosen is not None, jobs["node"].missing) == (True, "")
    whole = jobs["partition"]
    assert (whole.estimates, whole.busbw_gbs, whole.missing) == ((), 0.0, "no compute fabric")
