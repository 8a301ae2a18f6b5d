"""Public nccl-tests all_reduce results, each built as the spec a user would write for it."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from tests.facility_fixtures import example_data


@dataclass(frozen=True)
class Reference:
    """One published all_reduce_perf busbw and the configuration it was measured on."""

    name: str
    published_gbs: float
    message: int | str  # the size the figure is quoted at (nccl-tests' -e)
    source: str
    configuration: str
    spec: dict[str, Any] = field(repr=False, hash=False, compare=False)
    algorithm: str | None = None  # what NCCL ran, where the source says so
    calibrates: str = ""  # the constant this figure set ('' : a check the model was not fit to)


def hgx(platform: str, nodes: int, *, nics: list[dict[str, Any]] | None = None,
        gpu: str | None = None, technology: str = "infiniband", nccl_version: str = "2.21",
        nccl_env: dict[str, str] | None = None, leaf: str = "qm9700",
        per_rack: int = 4) -> dict[str, Any]:
    """A cluster of ``nodes`` 8-GPU servers on one compute fabric, as a spec."""
    data = example_data("minimal")
    node_type: dict[str, Any] = {"platform": platform}
    if nics is not None:
        node_type["nics"] = nics
    if gpu is not None:
        node_type["gpu"] = {"model": gpu}
    racks = max(1, -(-nodes // per_rack))
    data["cluster"]["nccl_version"] = nccl_version
    data["node_types"]["gpu"] = node_type
    data["node_groups"][0].update(count=nodes, hostname="gpu####", racks=f"r[001-{racks:03d}]",
                                  per_rack=per_rack)
    data["node_groups"][1]["racks"] = "r001"
    data["rows"][0]["racks"][0]["names"] = f"r[001-{racks:03d}]"
    data["power"]["pdu_profiles"]["three-415v"].update(breaker_a=63)
    if nodes > 1:
        switch = leaf if technology == "infiniband" else "sn5600"
        data["fabric"] = {"compute": {"technology": technology, "leaf_switch": switch,
                                      "racks": "net[1-8]"}}
        data["rows"][0]["racks"].append({"names": "net[1-8]", "pdu": "three-415v"})
    if nccl_env:
        data["nccl"] = {"env": dict(nccl_env)}
    return data


def nvl72(racks: int, trays: int = 18, nccl_version: str = "2.26") -> dict[str, Any]:
    """``racks`` GB200 NVL72 racks of ``trays`` compute trays (4 GPUs and 4 NDR NICs each)."""
    data = example_data("gb200-nvl72")
    data["cluster"]["nccl_version"] = nccl_version
    data["node_groups"][0].update(count=trays * racks, racks=f"nvl[1-{racks}]")
    data["rows"][0]["racks"][0]["names"] = f"nvl[1-{racks}]"
    data["rows"][0]["racks"][2]["names"] = "net[1-8]"  # room for the switches of 20 racks
    data["fabric"]["compute"]["racks"] = "net[1-8]"
    data["networks"] = {"management": {"cidr": "10.40.0.0/21"}, "bmc": {"cidr": "10.48.0.0/21"}}
    if racks == 1:
        del data["fabric"]
    return data


def with_message(data: dict[str, Any], message: int | str) -> dict[str, Any]:
    out = copy.deepcopy(data)
    out.setdefault("policy", {})["allreduce_message_size"] = message
    out["policy"].pop("min_allreduce_busbw_gbs", None)
    return out


NDR = [{"role": "compute", "model": "cx7-ndr", "count": 8},
       {"role": "inband", "model": "cx6lx-25gbe"}, {"role": "bmc", "model": "eth-1g"}]
ROCE_400G = [{"role": "compute", "model": "cx7-400gbe", "count": 8},
             {"role": "inband", "model": "cx6lx-25gbe"}, {"role": "bmc", "model": "eth-1g"}]
HDR_4 = [{"role": "compute", "model": "cx6-hdr", "count": 4},
         {"role": "inband", "model": "cx6lx-25gbe"}, {"role": "bmc", "model": "eth-1g"}]
COREWEAVE = ("coreweave/nccl-tests README.md, 'Expected Performance', GB200, NCCL 2.26.2 "
             "(out-of-place busbw)")

NDR = [{"role": "compute", "model": "cx7-ndr", "count": 8},
       {"role": "inband", "model": "cx6lx-25gbe"}, {"role": "bmc", "model": "eth-1g"}]
ROCE_400G = [{"role": "compute", "model": "cx7-400gbe", "count": 8},
             {"role": "inband", "model": "cx6lx-25gbe"}, {"role": "bmc", "model": "eth-1g"}]
HDR_4 = [{"role": "compute", "model": "cx6-hdr", "count": 4},
         {"role": "inband", "model": "cx6lx-25gbe"}, {"role": "bmc", "model": "eth-1g"}]
COREWEAVE = ("coreweave/nccl-tests README.md, 'Expected Performance', GB200, NCCL 2.26.2, "
             "out-of-place busbw")
COREWEAVE_92 = ("coreweave/nccl-tests pull request #92, test plan: 2-node MPIJob, 8 GiB "
                "all_reduce")

REFERENCES = (
    Reference(
        "H100 x8, one node, ring (no NVLS)", 370, "8G",
        "NVIDIA/nccl-tests issue #212 (S. Jeaugey, NVIDIA): 'NCCL can get an effective NVLink "
        "bandwidth of 370GB/s ... when running with NCCL_ALGO=RING'",
        "1 x HGX H100 8-GPU, NCCL_ALGO=Ring",
        hgx("hgx-h100-8gpu", 1, nccl_env={"NCCL_ALGO": "Ring"}), "ring",
        "ring efficiency, Hopper"),
    Reference(
        "H100 x8, one node, NVLS", 480, "8G",
        "NVIDIA/nccl-tests issue #212 (S. Jeaugey): 'allreduce uses NVLink SHARP by default "
        "... On 8 GPUs, you should reach a peak busBw of ~480GB/s (algbw ~275GB/s)'",
        "1 x HGX H100 8-GPU, NCCL's default", hgx("hgx-h100-8gpu", 1), "nvls",
        "NVLS efficiency, Hopper"),
    Reference(
        "H200 x8, one node, NVLS", 479.98, "8G",
        "Azure/AI-benchmarking-guide Azure_Results/ND_H200_v5_results.md (NCCL 2.20.5, "
        "'NVLS algorithm', in-place)",
        "1 x Azure ND H200 v5: 8 x H200 on NVSwitch",
        hgx("azure-nd-h100-v5", 1, gpu="h200-sxm-141gb", nccl_version="2.20"), "nvls"),
    Reference(
        "A100 x8, one node (no NVLS)", 231.58, "8G",
        "Azure/AI-benchmarking-guide Azure_Results/ND_A100_v4_results.md (NCCL 2.18.5, "
        "in-place)",
        "1 x Azure ND A100 v4: 8 x A100 SXM4 80GB on NVSwitch (no NVLink SHARP)",
        hgx("dgx-a100", 1, nccl_version="2.18"), calibrates="ring efficiency, Ampere"),
    Reference(
        "GB200, one tray, ring", 679.61, "8G",
        "Azure/AI-benchmarking-guide Azure_Results/ND_GB200_v6_results.md (NCCL 2.25.1, "
        "'NCCL AllReduce (Ring algorithm)', in-place)",
        "the 4 GPUs of one GB200 NVL72 compute tray", nvl72(1, trays=1, nccl_version="2.25"),
        "ring", "ring efficiency, Blackwell"),
    Reference(
        "GB200 NVL72, one rack", 834.57, "8G", COREWEAVE, "72 GPUs: one NVL72 rack",
        nvl72(1), calibrates="NVLS efficiency, Blackwell"),
    Reference(
        "GB200 NVL72, two racks", 793.06, "8G", COREWEAVE,
        "144 GPUs: two NVL72 racks, 4 x NDR per tray", nvl72(2)),
    Reference(
        "GB200 NVL72, 20 racks (8 GiB)", 381.48, "8G", COREWEAVE,
        "1440 GPUs: 20 NVL72 racks, 4 x NDR per tray", nvl72(20),
        calibrates="NICs per NVLink domain (8)"),
    Reference(
        "GB200 NVL72, 20 racks (16 GiB)", 405.74, "16G", COREWEAVE,
        "1440 GPUs: 20 NVL72 racks, 4 x NDR per tray", nvl72(20)),
    Reference(
        "DGX A100, multi-node, 8 x HDR", 192, "8G",
        "NVIDIA/nccl issue #812 (D. Addison, NVIDIA): 'On an Nvidia DGX-A100 system we have "
        "8x200Gbit/s IB cards and we measure 192GB/s AllReduce BusBW'",
        "DGX A100 with 8 x HDR; node count not stated, modelled as 4 nodes",
        hgx("dgx-a100", 4, leaf="qm8700"), calibrates="InfiniBand efficiency"),
    Reference(
        "A100 x8, 3 nodes, 4 x HDR each", 95.74, 133169160,
        "NVIDIA/nccl-tests issue #119 (measured; S. Jeaugey: '24GB/s is the peak performance "
        "per 200G NIC ... 96GB/s is the target, which you seem to reach')",
        "3 x (8 x A100 SXM4, 4 x HDR), 127 MiB, the run's largest size",
        hgx("dgx-a100", 3, nics=HDR_4, leaf="qm8700")),
    Reference(
        "H100 x8, 2 nodes, 8 x NDR", 440.58, "8G", COREWEAVE_92,
        "2 x HGX H100 with 8 x NDR 400G InfiniBand", hgx("hgx-h100-8gpu", 2, nics=NDR),
        calibrates="NVLS-tree efficiency, Hopper"),
    Reference(
        "B200 x8, 2 nodes, 8 x NDR", 690.07, "8G", COREWEAVE_92,
        "2 x B200 8-GPU with 8 x NDR 400G InfiniBand", hgx("dgx-b200", 2)),
    Reference(
        "H100 x8, 4 nodes, 8 x 400G RoCE", 320, "8G",
        "NVIDIA/nccl issue #1221: 'run it on nodes which is more than 2 ... same busbw 320GB' "
        "(NCCL 2.19.3, -b 4G -e 8G)",
        "4 x H100 8-GPU with 8 x 400G RoCE",
        hgx("hgx-h100-8gpu", 4, nics=ROCE_400G, technology="roce", nccl_version="2.19"),
        calibrates="RoCE efficiency"),
    Reference(
        "H200 x8, 248 nodes, 8 x NDR (512 MiB)", 350, "512M",
        "NVIDIA/nccl-tests issue #283: 248 x 8 H200, default NCCL_ALGO, 512 MiB: 'typically "
        "measuring around 350G'",
        "248 x HGX H200 with 8 NICs each (InfiniBand assumed: NCCL_IB_HCA=mlx5_1..8)",
        hgx("hgx-h100-8gpu", 248, nics=NDR, gpu="h200-sxm-141gb")),
    Reference(
        "Seed guide: 64 H100, one HDR HCA per node", 25, "8G",
        "the seed guide ('Building a GPU Cluster for ML Training', Validate All-Reduce): "
        "'25 GB/s' expected from all_reduce_perf",
        "8 x HGX H100 with one 200 Gb/s HDR HCA each (examples/seed-64gpu-h100.yaml)",
        example_data("seed-64gpu-h100")),
)
