"""Predicted NCCL all_reduce bus bandwidth (nccl-tests' busbw column) for a large message.

The model (ring all_reduce, bandwidth-bound, message >> 100 MB):

- nccl-tests defines busbw = algbw x 2(n-1)/n for all_reduce (nccl-tests doc/PERFORMANCE.md,
  "Bus bandwidth"): the data each rank must send and receive over its slowest link, so busbw is
  directly comparable with the hardware bottleneck's speed.
- Inside an NVLink domain every GPU sends its 2(n-1)/n x S bytes over its own NVLink ports, so
  busbw <= NVLink bandwidth per GPU (one direction) x NVLINK_EFFICIENCY.
- Across NVLink domains each ring (NCCL channel) enters and leaves every domain once, through one
  NIC; NCCL spreads its channels over all NICs of the domain, so the domain's egress carries the
  same 2(n-1)/n x S bytes: busbw <= (sum of the domain's fabric NIC bandwidth, GB/s) x
  NETWORK_EFFICIENCY[technology], divided by the fabric's worst oversubscription when traffic
  crosses an oversubscribed tier (tiers > 1). It is the domain's total NIC bandwidth, not a
  per-GPU share: a DGX A100 with 8 x 200 Gb/s (200 GB/s) measures 192 GB/s busbw across nodes
  (NVIDIA/nccl issue #812, quoted in #1576), far above a per-GPU share of 25 GB/s.
- busbw = the smaller bound. One domain (one 8-GPU board, one NVL72 rack) gives the NVLink bound.
- Tree/NVLS algorithms are not modelled: NCCL picks ring for large messages on few nodes, and
  the ring figure is the conservative one.

Calibration: the seed guide (64 H100, one 200 Gb/s HDR HCA per node) reports 25 GB/s busbw;
the model gives 200 / 8 x 0.92 = 23.0 GB/s (-8 %). DGX A100 (8 x HDR): 184 vs 192 GB/s (-4 %).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from cluster_iac.plan.model import Node, NvlinkDomain, Plan

# Ring all_reduce over NVLink: "450GB/s is the line rate. With the protocol overhead (~20%) NCCL
# can get an effective NVLink bandwidth of 370GB/s" on H100 with NCCL_ALGO=RING (NCCL maintainer,
# NVIDIA/nccl-tests issue #212): 370 / 450 = 0.82. NVLink SHARP lifts one board's all_reduce to
# ~480 GB/s busbw (same thread; ~476 GB/s in nccl-tests #290), which we do not assume.
NVLINK_EFFICIENCY = 0.82
# Share of the NIC line rate NCCL's busbw reaches over the fabric. InfiniBand: "For NDR @ 400Gbps
# you should see 46-48GB/s per NIC" (NVIDIA, nccl-tests issue #290): 46 / 50 = 0.92, the low end;
# DGX A100 with 8 x 200 Gb/s HDR measures 192 GB/s all_reduce busbw (NVIDIA/nccl issue #812) and
# the seed guide's ib_send_bw expects 190 of 200 Gb/s. RoCE/Ethernet: an assumption (larger
# headers, congestion control), not a measured figure.
NETWORK_EFFICIENCY = {"infiniband": 0.92, "roce": 0.85, "ethernet": 0.85}

SOURCES = (
    ("busbw definition", "busbw = algbw x 2(n-1)/n for all_reduce",
     "NVIDIA nccl-tests, doc/PERFORMANCE.md"),
    ("NVLink efficiency", f"{NVLINK_EFFICIENCY:g}",
     "H100 ring: ~370 of 450 GB/s NVLink line rate (NVIDIA/nccl-tests issue #212)"),
    ("InfiniBand efficiency", f"{NETWORK_EFFICIENCY['infiniband']:g}",
     "NDR 400 Gb/s: 46-48 GB/s per NIC (NVIDIA/nccl-tests issue #290); DGX A100, 8 x HDR: "
     "192 GB/s busbw (NVIDIA/nccl issue #812)"),
    ("RoCE/Ethernet efficiency", f"{NETWORK_EFFICIENCY['roce']:g}",
     "assumption: RoCE v2 headers and congestion control; not calibrated"),
    ("calibration", "64 H100, 1 x HDR 200 Gb/s per node: 25 GB/s",
     "seed guide 'Building a GPU Cluster for ML Training', Validate All-Reduce"),
)


@dataclass(frozen=True)
class BusbwPrediction:
    """The predicted busbw of one all_reduce over a set of compute nodes, with its bounds."""

    scope: str  # partition name or 'cluster'
    nodes: int
    gpus: int
    domains: int  # NVLink domains the job spans
    nvlink_gbs: float  # NVLink bound (per-GPU one-way NVLink x efficiency)
    network_gbs: float | None  # fabric bound; None when the job fits one NVLink domain
    nic_gbs: float  # raw fabric NIC bandwidth of the weakest domain, GB/s
    oversubscription: float  # divisor applied to the fabric bound (1.0 = none)
    technology: str
    busbw_gbs: float
    bottleneck: str  # 'nvlink' | 'network' | 'no fabric'


def predict_allreduce(plan: Plan, nodes: tuple[Node, ...], scope: str) -> BusbwPrediction:
    """busbw of an all_reduce over every GPU of ``nodes`` (see the module docstring)."""
    gpu_nodes = [n for n in nodes if plan.node_types[n.node_type].gpu_count > 0]
    domains = _domains(plan, gpu_nodes)
    gpus = sum(plan.node_types[n.node_type].gpu_count for n in gpu_nodes)
    nvlink = min((d.gpu_bandwidth_gbs for d in domains), default=0.0) * NVLINK_EFFICIENCY
    technology = fabric_technology(plan)
    by_name = {n.hostname: n for n in gpu_nodes}
    nic = min((_domain_nic_gbs(plan, d, by_name) for d in domains), default=0.0)
    if len(domains) <= 1:
        return BusbwPrediction(scope, len(gpu_nodes), gpus, len(domains), nvlink, None, nic,
                               1.0, technology, nvlink, "nvlink")
    oversub = fabric_oversubscription(plan)
    efficiency = NETWORK_EFFICIENCY.get(technology, 0.0)
    network = nic * efficiency / oversub
    bottleneck = "no fabric" if network == 0 else ("network" if network < nvlink else "nvlink")
    return BusbwPrediction(scope, len(gpu_nodes), gpus, len(domains), nvlink, network, nic,
                           oversub, technology, min(nvlink, network), bottleneck)


def predictions(plan: Plan) -> list[BusbwPrediction]:
    """One prediction per Slurm partition (a job filling it), in spec order."""
    hosts = {n.hostname: n for n in plan.nodes}
    return [predict_allreduce(plan, tuple(hosts[h] for h in p.nodes if h in hosts), p.name)
            for p in plan.partitions]


def fabric_technology(plan: Plan) -> str:
    """'infiniband' | 'roce' | 'ethernet' of the compute fabric, 'none' without one."""
    section = plan.settings.fabric.compute
    return str(section.technology) if section is not None else "none"


def fabric_oversubscription(plan: Plan) -> float:
    """The compute fabric's worst tier oversubscription that multi-leaf traffic crosses
    (1.0 for a single-tier fabric, whose one leaf set is non-blocking by construction)."""
    fabric = plan.fabrics.get("compute")
    if fabric is None or fabric.tiers <= 1:
        return 1.0
    ratios = [fabric.oversubscription(tier) for tier in fabric.tier_bandwidth_gbps]
    return max([1.0, *ratios])


def _domains(plan: Plan, nodes: list[Node]) -> list[NvlinkDomain]:
    """The NVLink domains that hold ``nodes``: the plan's, or one board per node when the
    NVLink pass has not filled them (a node's domain then is its own board)."""
    wanted = {n.hostname for n in nodes}
    found = [d for d in plan.nvlink_domains if wanted.intersection(d.nodes)]
    covered = {h for d in found for h in d.nodes}
    racks: dict[str, list[Node]] = defaultdict(list)
    for node in nodes:
        if node.hostname in covered:
            continue
        nt = plan.node_types[node.node_type]
        if nt.nvlink_domain == "rack":
            racks[node.rack].append(node)
        else:
            found.append(NvlinkDomain(node.hostname, "board", (node.hostname,), nt.gpu_count,
                                      nt.gpu_nvlink_gbs))
    for rack, members in sorted(racks.items()):
        nt = plan.node_types[members[0].node_type]
        found.append(NvlinkDomain(rack, "rack", tuple(m.hostname for m in members),
                                  sum(plan.node_types[m.node_type].gpu_count for m in members),
                                  nt.gpu_nvlink_gbs))
    return found


def _domain_nic_gbs(plan: Plan, domain: NvlinkDomain, nodes: dict[str, Node]) -> float:
    """Fabric NIC bandwidth of a domain, GB/s: NICs x min(NIC, switch port) Gb/s / 8."""
    fabric = plan.fabrics.get("compute")
    port = fabric.link_speed_gbps if fabric is not None else None
    total_gbps = 0.0
    for hostname in domain.nodes:
        node = nodes.get(hostname)
        if node is None:
            continue
        for nic in plan.node_types[node.node_type].nics_of("compute"):
            speed = min(nic.speed_gbps, port) if port else nic.speed_gbps
            total_gbps += speed * nic.count
    return total_gbps / 8
