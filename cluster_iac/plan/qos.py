"""Lossless RoCE v2 QoS of an Ethernet fabric: one record that switches, NICs and NCCL all read.

The values and where each comes from (docs/roce-qos.md has the same table):

- RoCE class: DSCP 26 on switch priority 3, traffic class 3, PFC on priority 3; CNP: DSCP 48 on
  priority 6, strict. NVIDIA Cumulus Linux user guide, "RDMA over Converged Ethernet - RoCE",
  "Default RoCE Mode Configuration" (lossless mode: trust DSCP, priority 3 -> TC 3 RoCE WRR 50 %,
  priority 6 -> TC 6 CNP strict, PFC on priority 3); NVIDIA Onyx "roce lossless" (show roce:
  trust L3, PFC switch-priority 3, TC 6 CNP strict).
- ECN (WRED marking, absolute) on traffic class 3: minimum 150 KB, maximum 1500 KB, marking
  probability 100 %: the same Cumulus table ("Port ECN absolute threshold ... for traffic class
  3") and Onyx's `show roce` ("congestion-control: ecn, absolute, Min 150, Max 1500" KB). The
  vendors give one value for every port speed of a Spectrum switch; the table is kept per speed
  so a tuned value for one speed changes that speed only.
- Host traffic class: NCCL_IB_TC and the RDMA-CM ToS are the IP header's ToS byte, DSCP in its
  six high bits and ECN in the two low ones (RFC 2474 section 3, RFC 3168 section 5):
  tc = dscp << 2 | 2 (ECT(0), ECN-capable), 26 -> 106, the value NVIDIA's RoCE configuration
  guides set with `cma_roce_tos -t 106`.
- GID index 3: RoCE v2 over IPv4 in the GID table MLNX_OFED builds (index 0/1 RoCE v1/v2 of the
  link-local IPv6 address, 2/3 v1/v2 of the IPv4 address; `show_gids`), the index NCCL's
  troubleshooting guide and the vendors' NCCL presets give NCCL_IB_GID_INDEX.
- Host MTU: the underlay's host_mtu (9000 by default), at most the switch ports' 9216
  (plan/switching.py FABRIC_MTU), which the FABRIC-MTU check enforces. Where the tool writes a
  port's OS network configuration (cloud-init network-config, DHCP option 26: plan/boot.py
  Subnet.mtu, the fabric's host_mtu on a network the fabric carries) that sets it and the host
  script only checks it; the script walks a compute fabric's ports by RDMA device and sets
  theirs, the same value the nodes' network-config gives their RoCE NICs (plan/host_rails.py).
- Host ports: each node type's RoCE ports on the fabric (``host_ports``), as the host script
  finds them. On the compute fabric the RDMA devices NCCL uses (plan/nccl.py compute_hcas,
  ``port_kind`` 'device'); on the storage fabric the network interfaces the OS configures on
  the storage network (networks.storage.interface) and those LNet uses there
  (storage.lustre.lnet.interfaces), ``port_kind`` 'interface': the ports that carry an
  address, which RoCE v2 needs (its GID is the IPv4 address).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cluster_iac.base.errors import SpecPath
from cluster_iac.plan.switching import FABRIC_MTU

ROCE_PRIORITY = 3  # lossless switch priority / traffic class of RoCE (Cumulus, Onyx defaults)
CNP_PRIORITY = 6  # strict-priority class of the congestion notification packets
ECN_CAPABLE = 0b10  # ECT(0) in the ToS byte's two low bits (RFC 3168 section 5)
GID_INDEX_ROCE_V2_IPV4 = 3  # MLNX_OFED GID table: RoCE v2 of the IPv4 address
ECN_SOURCE = ("NVIDIA Cumulus Linux user guide, RoCE, 'Default RoCE Mode Configuration' "
              "(ECN absolute threshold on TC 3); NVIDIA Onyx 'show roce' (ecn, absolute, "
              "min 150 KB, max 1500 KB)")


# Records without generated __eq__/__repr__ (eq=False, repr=False): see plan/model.py.
@dataclass(frozen=True, eq=False, repr=False)
class EcnThreshold:
    """WRED/ECN marking of the RoCE queue on ports of one speed."""

    speed_gbps: int
    min_bytes: int  # queue depth where marking starts
    max_bytes: int  # queue depth where every packet is marked
    probability_pct: int  # marking probability at max_bytes
    source: str


# Port speed -> ECN marking of the RoCE queue (see the module docstring for the source).
ECN_BY_SPEED: dict[int, tuple[int, int, int]] = {
    speed: (150_000, 1_500_000, 100) for speed in (25, 50, 100, 200, 400, 800)
}


def ecn_threshold(speed_gbps: int) -> EcnThreshold:
    """The marking thresholds of ports of ``speed_gbps`` (the nearest speed not above it)."""
    known = [s for s in sorted(ECN_BY_SPEED) if s <= speed_gbps] or [min(ECN_BY_SPEED)]
    low, high, probability = ECN_BY_SPEED[known[-1]]
    return EcnThreshold(speed_gbps, low, high, probability, ECN_SOURCE)


def traffic_class(dscp: int) -> int:
    """The ToS byte of RDMA traffic: DSCP in the six high bits, ECN-capable (RFC 2474, 3168)."""
    return dscp << 2 | ECN_CAPABLE


@dataclass(frozen=True, eq=False, repr=False)
class FabricQos:
    """The lossless QoS of one Ethernet fabric, as switches, NICs and NCCL apply it."""

    network: str  # 'compute' | 'storage'
    roce_dscp: int
    cnp_dscp: int
    host_mtu: int
    ecn: tuple[EcnThreshold, ...]  # one per port speed of the fabric, ascending
    spec_path: SpecPath
    roce_priority: int = ROCE_PRIORITY
    cnp_priority: int = CNP_PRIORITY
    gid_index: int = GID_INDEX_ROCE_V2_IPV4
    switch_mtu: int = FABRIC_MTU  # the switch-to-switch ports' (plan/switching.py)
    # node type -> its RoCE ports on this fabric (RDMA devices or interfaces, port_kind)
    host_ports: dict[str, tuple[str, ...]] = field(default_factory=dict)
    port_kind: str = "device"  # 'device': RDMA device names; 'interface': netdev names

    @property
    def traffic_class(self) -> int:
        """NCCL_IB_TC and the RDMA-CM ToS of the RoCE class."""
        return traffic_class(self.roce_dscp)

    @property
    def pfc(self) -> str:
        """mlnx_qos --pfc: 1 on the lossless priority, 0 on the others."""
        return ",".join("1" if p == self.roce_priority else "0" for p in range(8))
