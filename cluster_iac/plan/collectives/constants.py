"""Constants of the all_reduce model: NCCL's own tuning figures and calibrated efficiencies."""

from __future__ import annotations

from dataclasses import dataclass

# Where the figures below come from; report.md prints the table, tests/test_busbw_references.py
# checks the model against these measurements (and more) within 15 %.
NCCL_TUNING = ("NVIDIA/nccl src/graph/tuning.cc (ncclTunerConstantsDefaults, NCCL 2.23-2.27; "
               "formulas as in ncclTopoTuneModel, NCCL 2.20.3)")
NCCL_TESTS_212 = "NVIDIA/nccl-tests issue #212 (S. Jeaugey, NVIDIA): 8 x H100 in one node"
AZURE_A100 = ("Azure/AI-benchmarking-guide Azure_Results/ND_A100_v4_results.md: 8 x A100 "
              "SXM4, NCCL 2.18.5, in-place busbw at 8 GiB")
AZURE_GB200 = ("Azure/AI-benchmarking-guide Azure_Results/ND_GB200_v6_results.md: the 4 GPUs "
               "of one GB200 tray, ring, NCCL 2.25.1, in-place busbw at 8 GiB")
COREWEAVE_README = ("coreweave/nccl-tests README.md, Expected Performance: GB200 NVL72, 1, 2 "
                    "and 20 racks, NCCL 2.26.2")
COREWEAVE_92 = ("coreweave/nccl-tests pull request #92: 2 x 8 H100 and 2 x 8 B200 with 8 x "
                "400G InfiniBand each, busbw at 8 GiB")
NCCL_1221 = ("NVIDIA/nccl issue #1221: 8 x H100 nodes with 8 x 400G RoCE, NCCL 2.19.3, "
             "4-8 GiB")
NCCL_1453 = ("NVIDIA/nccl issue #1453: NCCL's log on 3 x 8 H100 lists 8 NVLS heads on 16 "
             "channels")

# Latencies in microseconds of NCCL's Simple protocol, the one it runs large messages with
# (NCCL_TUNING): baseLatencies[algorithm][Simple], then hwLatencies[NVLINK|NET][algorithm]
# [Simple], the cost of one step inside an NVLink domain and of one step over the network.
BASE_LATENCY_US = {"ring": 8.4, "tree": 8.4, "nvls": 0.0, "nvls_tree": 0.0, "collnet": 0.0}
NVLINK_STEP_US = {"ring": 3.4, "tree": 4.0, "nvls": 25.0, "nvls_tree": 25.0, "collnet": 3.7}
NET_STEP_US = {"ring": 14.0, "tree": 14.0, "nvls": 18.0, "nvls_tree": 20.9, "collnet": 31.0}
# CollNet Direct adds 0.4 us per local rank ("arity serialization latency", NCCL_TUNING).
COLLNET_ARITY_US = 0.4
# NCCL's tree moves 92 % of what the links carry ("busBw*.92" for the tree, NCCL_TUNING).
TREE_EFFICIENCY = 0.92

# NCCL drives at most 8 NICs of one NVLink domain in one communicator: its NVLS graph runs
# 16 channels, two per head GPU with a NIC ("NVLS should not need more than 16 channels",
# src/tuning/tuning_general.cc; 8 heads on 16 channels in NCCL_1453), and GB200 NVL72 racks
# with 72 NICs each measure 381 GB/s across 20 racks (COREWEAVE_README), 8 x 48 GB/s.
NICS_PER_DOMAIN = 8


# Records without generated __eq__/__repr__ (eq=False, repr=False): see plan/model.py.
@dataclass(frozen=True, eq=False, repr=False)
class Efficiency:
    """What NCCL gets from NVLink, as a share of the line rate of one GPU (one direction)."""

    ring: float  # ring busbw inside one domain (Simple protocol)
    nvls: float  # NVLS algbw inside one domain
    nvls_tree: float  # algbw of the NVLS part of NVLS-tree and NVLS+SHARP across domains


# Calibrated on public measurements (each the busbw over the NVLink line rate, or the algbw
# for NVLS = busbw / (2(n-1)/n)):
#   ampere ring 0.77: 231.6 of 300 GB/s (AZURE_A100).
#   hopper ring 0.82: "450GB/s is the line rate ... NCCL can get an effective NVLink bandwidth
#     of 370GB/s" (NCCL_TESTS_212). NVLS 0.61: "peak busBw of ~480GB/s (algbw ~275GB/s)"
#     on 8 GPUs (NCCL_TESTS_212). NVLS-tree 0.52: 2 x 8 H100 measure 440.6 GB/s busbw
#     (COREWEAVE_92), algbw 235 of 450 (the NIC bound, 8 x 48 GB/s, is not reached).
#   blackwell ring 0.76: 679.6 of 900 GB/s on one GB200 tray (AZURE_GB200). NVLS 0.47: 834.6
#     GB/s busbw over 72 GPUs = algbw 423 of 900 (COREWEAVE_README, one rack). NVLS-tree: no
#     separate measurement; two racks (793 GB/s) sit on the NIC bound, so the NVLS figure.
EFFICIENCY = {
    "ampere": Efficiency(ring=0.77, nvls=0.0, nvls_tree=0.0),
    "hopper": Efficiency(ring=0.82, nvls=0.61, nvls_tree=0.52),
    "blackwell": Efficiency(ring=0.76, nvls=0.47, nvls_tree=0.47),
}
# A GPU the catalog names no architecture for: the lowest ring figure measured, no NVLS.
OTHER_EFFICIENCY = Efficiency(ring=0.76, nvls=0.0, nvls_tree=0.0)

# Share of the NIC line rate NCCL's busbw reaches over the fabric. InfiniBand: "24GB/s is the
# peak performance per 200G NIC" (S. Jeaugey, NVIDIA/nccl-tests #119), "8x200Gbit/s IB cards
# and we measure 192GB/s AllReduce BusBW" on DGX A100 (NVIDIA/nccl #812), "CX-7 NICs at NDR
# rate (400Gbps) should achieve up to 48-49GB/s per NIC" (NVIDIA/nccl-tests #267): 0.96.
# RoCE: 8 x 400G RoCE H100 nodes measure 320 GB/s on 4 nodes, ring or NVLS-tree (NCCL_1221):
# 320 / 400 = 0.80.
NETWORK_EFFICIENCY = {"infiniband": 0.96, "roce": 0.80}

# PCIe one-direction bandwidth per lane, GB/s, by generation (PCI-SIG: 8, 16, 32, 64 GT/s;
# 128b/130b encoding, 242B/256B FLIT for Gen6), for GPUs without NVLink.
PCIE_LANE_GBS = {3: 0.985, 4: 1.969, 5: 3.938, 6: 7.563}

# NCCL releases that brought each algorithm (release notes): CollNet 2.6 ("in-network
# collectives"), NVLS 2.17 (NCCL_NVLS_ENABLE since 2.17), NVLS-tree and NVLS with IB SHARP
# 2.18 ("Add inter-node algorithms for NVLink SHARP", NCCL 2.18.1).
SINCE = {"collnet": (2, 6), "nvls": (2, 17), "nvls_tree": (2, 18)}

SOURCES: tuple[tuple[str, str, str], ...] = (
    ("busbw", "algbw x 2(n-1)/n", "NVIDIA/nccl-tests doc/PERFORMANCE.md"),
    ("time", "latency + size / algbw; NCCL runs the algorithm of least predicted time",
     "NVIDIA/nccl src/tuning/tuning.cc (ncclTuningSelectBestTuning), src/graph/tuning.cc"),
    ("base latency (us)", "ring 8.4, tree 8.4, NVLS 0, NVLS-tree 0, CollNet 0", NCCL_TUNING),
    ("NVLink step (us)", "ring 3.4, tree 4.0, NVLS 25, NVLS-tree 25, CollNet 3.7", NCCL_TUNING),
    ("network step (us)", "ring 14, tree 14, NVLS 18, NVLS-tree 20.9, CollNet 31", NCCL_TUNING),
    ("tree efficiency", f"{TREE_EFFICIENCY:g}", NCCL_TUNING),
    ("NICs per NVLink domain", f"at most {NICS_PER_DOMAIN}",
     f"{NCCL_1453}; {COREWEAVE_README} (20 racks)"),
    ("ring, NVLink (Ampere)", f"{EFFICIENCY['ampere'].ring:g}", AZURE_A100),
    ("ring, NVLink (Hopper)", f"{EFFICIENCY['hopper'].ring:g}", NCCL_TESTS_212),
    ("ring, NVLink (Blackwell)", f"{EFFICIENCY['blackwell'].ring:g}", AZURE_GB200),
    ("NVLS algbw (Hopper)", f"{EFFICIENCY['hopper'].nvls:g}", NCCL_TESTS_212),
    ("NVLS-tree algbw (Hopper)", f"{EFFICIENCY['hopper'].nvls_tree:g}", COREWEAVE_92),
    ("NVLS algbw (Blackwell)", f"{EFFICIENCY['blackwell'].nvls:g}",
     f"{COREWEAVE_README} (one rack)"),
    ("InfiniBand", f"{NETWORK_EFFICIENCY['infiniband']:g} of the line rate",
     "NVIDIA/nccl-tests #119, #267; NVIDIA/nccl #812"),
    ("RoCE", f"{NETWORK_EFFICIENCY['roce']:g} of the line rate", NCCL_1221),
    ("algorithms by NCCL release", "CollNet 2.6, NVLS 2.17, NVLS-tree 2.18",
     "NCCL release notes 2.6.4, 2.17.1, 2.18.1"),
)
