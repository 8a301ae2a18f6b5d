"""The compute and storage fabrics, and the IP networks."""

# Annotations as written, not strings: see cluster_iac/spec/__init__.py.

from ipaddress import IPv4Network
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field
from pydantic_core import PydanticCustomError

from cluster_iac.spec.base import SpecModel
from cluster_iac.spec.limits import NodeCount, UnitCount
from cluster_iac.spec.strings import DomainName, HostlistExpr, InterfaceName, Name, Ratio


def _cidr_text(value: Any) -> Any:
    """A subnet is written as text ('10.0.0.0/22'): ipaddress would take an integer, or true,
    as an address (true is 0.0.0.1/32)."""
    if not isinstance(value, str):
        raise PydanticCustomError("string_type", "Input should be a valid string")
    return value

class SubnetManager(SpecModel):
    """OpenSM on an InfiniBand fabric: where it runs and the partitions it enforces."""

    hosts: list[Name] = Field(default_factory=list, max_length=8)
    """Hosts cabled to this fabric that run OpenSM: the first is the master (sm_priority 15
    in opensm/<fabric>/opensm.conf), the others standbys (14, opensm-standby.conf)."""
    partition_keys: dict[Name, Annotated[int, Field(ge=0x0001, le=0x7FFE)]] = Field(
        default_factory=dict, max_length=64)
    """Slurm partition -> InfiniBand partition key (P_Key, 0x0001-0x7ffe; 0x7fff is the
    default partition's): the adapters of the partition's nodes on this fabric are full
    members of it, with its own IPoIB broadcast group (partitions.conf)."""


class RoceQos(SpecModel):
    """Lossless RoCE v2 QoS of an Ethernet fabric, the same on switches, NICs and NCCL
    (docs/roce-qos.md): the RoCE class on a PFC priority, CNPs on their own."""

    dscp: int = Field(default=26, ge=0, le=63)
    """DSCP of the RDMA traffic, mapped to the lossless priority 3 with PFC (default 26, the
    class of NVIDIA's 'RoCE lossless' switch defaults); NCCL_IB_TC is dscp << 2 | 2."""
    cnp_dscp: int = Field(default=48, ge=0, le=63)
    """DSCP of the congestion notification packets (CNP), mapped to priority 6, strict
    (default 48, as NVIDIA's RoCE defaults and the mlx5 NIC's roce_np/cnp_dscp)."""


class Underlay(SpecModel):
    """An Ethernet fabric's routed underlay: eBGP between every leaf, spine and core
    (RFC 7938), each switch's ASN, loopback and point-to-point addresses allocated once and
    kept by the lock (docs/ethernet-fabric.md)."""

    bgp: Literal["unnumbered", "numbered"] = "unnumbered"
    """'unnumbered': BGP sessions on the fabric links' IPv6 link-local addresses (RFC 5549
    next hops, FRR's 'neighbor <port> interface'); 'numbered': each switch-to-switch link a
    /31 from p2p_pool (RFC 3021) with a session on its addresses."""
    asn_base: int = Field(default=4_200_000_000, ge=4_200_000_000, le=4_294_967_294)
    """First private 4-byte ASN allocated (RFC 6996: 4200000000-4294967294): each leaf its
    own, the spines of one pod one, the cores one (RFC 7938, section 5.2.1)."""
    loopback_pool: Annotated[IPv4Network, BeforeValidator(_cidr_text)] = Field(
        default=IPv4Network("10.255.0.0/16"), strict=False)
    """Pool of the switches' loopbacks (/32 each, also the BGP router-id)."""
    p2p_pool: Annotated[IPv4Network, BeforeValidator(_cidr_text)] = Field(
        default=IPv4Network("10.254.0.0/15"), strict=False)
    """Pool of /31 point-to-point links: each switch a block with one /31 per port leg
    below it (host ports of a leaf; in 'numbered', a spine's and a core's downlinks)."""
    host_mtu: int = Field(default=9000, ge=1280, le=65535)
    """MTU of the hosts' fabric interfaces and of the leaf ports facing them: at most what a
    switch port carries, 9216 (FABRIC-MTU)."""


class ComputeFabric(SpecModel):
    """The GPU (east-west) fabric."""

    technology: Literal["infiniband", "roce"] = "infiniband"
    """InfiniBand, or RoCE v2 over Ethernet."""
    design: Literal["rail-optimized", "plain"] = "rail-optimized"
    """'rail-optimized': NIC i of every node in a scalable unit goes to rail leaf i;
    'plain': all NICs of a node go to one leaf."""
    leaf_switch: Name
    """Catalog switch model of the leaves."""
    spine_switch: Name | None = None
    """Catalog switch model of the spines (default: the leaf model)."""
    core_switch: Name | None = None
    """Catalog switch model of the core tier (default: the spine model)."""
    oversubscription: Ratio = "1:1"
    """Leaf downlink:uplink bandwidth ratio ('1:1' is non-blocking)."""
    scalable_unit_nodes: NodeCount | None = None
    """Nodes per scalable unit (DGX SuperPOD: 32); default: as many as one leaf set can hold."""
    planned_scalable_units: UnitCount | None = None
    """Scalable units the spine and core tiers are sized for (default: those the nodes fill).
    Up to this many, adding a scalable unit adds its leaves and their cables and moves no
    spine, core or existing cable."""
    tiers: Literal["auto", 1, 2, 3] = "auto"
    """Switch tiers; 'auto' picks the fewest that hold the nodes."""
    nic_role: Literal["compute"] = "compute"
    """Which NICs of a node form the fabric."""
    sharp: bool = False
    """The switches reduce in the network for NCCL (SHARP on InfiniBand Quantum switches, with
    the aggregation manager running and the NCCL SHARP plugin on the hosts): NCCL may then
    use CollNet, and NVLS with IB SHARP across nodes; the generated NCCL environment sets
    NCCL_COLLNET_ENABLE=1. InfiniBand only."""
    qos: RoceQos = Field(default_factory=RoceQos)
    """RoCE: the lossless QoS of switches, NICs and NCCL (ignored on InfiniBand)."""
    racks: HostlistExpr | None = None
    """Racks that hold the fabric's switches, e.g. 'net-r[1-4]': leaves, then spines, then
    cores, dealt round-robin. Default: each leaf in the rack of the first node it serves,
    spines and cores beside the first leaf."""
    subnet_manager: SubnetManager | None = None
    """InfiniBand: the hosts that run OpenSM and the partition keys (opensm/compute/)."""
    underlay: Underlay = Field(default_factory=Underlay)
    """RoCE: the switches' eBGP underlay (switches/<name>/frr.conf and interfaces)."""


class StorageFabric(SpecModel):
    """A separate storage network (nodes' storage NICs, Lustre servers)."""

    technology: Literal["infiniband", "ethernet"] = "infiniband"
    """InfiniBand or Ethernet."""
    leaf_switch: Name
    """Catalog switch model of the leaves."""
    spine_switch: Name | None = None
    """Catalog switch model of the spines (default: the leaf model)."""
    oversubscription: Ratio = "1:1"
    """Leaf downlink:uplink bandwidth ratio."""
    scalable_unit_nodes: NodeCount | None = None
    """Hosts per unit of growth (a compute scalable unit's nodes, e.g. 32): the fabric is
    built in whole units, as the compute fabric; default: as many as one leaf holds."""
    planned_scalable_units: UnitCount | None = None
    """Units the spine tier is sized for (default: those the hosts fill). The storage fabric
    grows with the compute nodes: sized for the final cluster, adding a compute scalable
    unit adds storage leaves and their cables and moves no storage leaf-spine cable in
    service (without it, the SuperPOD example grown from 3 to 4 units re-spreads 220)."""
    qos: RoceQos = Field(default_factory=RoceQos)
    """Ethernet: the lossless RoCE QoS of switches and NICs (ignored on InfiniBand)."""
    racks: HostlistExpr | None = None
    """Racks that hold the storage fabric's switches (as for the compute fabric)."""
    subnet_manager: SubnetManager | None = None
    """InfiniBand: the hosts that run OpenSM and the partition keys (opensm/storage/)."""
    underlay: Underlay = Field(default_factory=Underlay)
    """Ethernet: the switches' eBGP underlay (switches/<name>/frr.conf and interfaces)."""


class Fabric(SpecModel):
    """High-speed fabrics."""

    compute: ComputeFabric | None = None
    """The GPU fabric (absent for a single-node or NVLink-only design)."""
    storage: StorageFabric | None = None
    """A separate storage fabric."""


class IpNetwork(SpecModel):
    """One IP network and the switch model that serves it."""

    cidr: Annotated[IPv4Network, BeforeValidator(_cidr_text)] = Field(strict=False)
    """Subnet, e.g. 10.0.0.0/22; hosts get consecutive addresses after the reserved ones."""
    reserved: int = Field(default=10, ge=1, le=1 << 24)
    """Addresses kept at the start of the subnet (gateway, VIPs) before the first host."""
    switch: Name | None = None
    """Catalog switch model of this network's access switches (one per rack when set)."""
    interface: InterfaceName = "eth0"
    """Host interface name on this network (NCCL_SOCKET_IFNAME uses the in-band one)."""
    aggregation_racks: Literal["apart", "together"] = "apart"
    """management and bmc: where the two switches of each aggregation (and core) pair go.
    apart: in two racks (network racks, those without hosts, in turn when there are two or
    more; else the second in a service or storage rack with an access switch; else, with no
    such rack, together and the warning SPOF-MGMT-AGG-RACK), so one rack's power or a mistake
    in it does not take both; together: both in one rack, as before. A switch the lock places
    stays where it is (render --reallocate <switch> moves it)."""
    mtu: int | None = Field(default=None, ge=576, le=65520)
    """Interface MTU the hosts set (cloud-init network-config, DHCP option 26); default 1500,
    4092 on IPoIB (datagram mode under a 4096-byte IB MTU), and on a network an Ethernet
    fabric carries (storage) the fabric's underlay.host_mtu, which it must equal
    (QOS-HOST-MTU); 9000 for jumbo frames."""


class Networks(SpecModel):
    """IP plan: management (in-band), BMC (out-of-band), IPoIB and storage."""

    management: IpNetwork | None = None
    """In-band management Ethernet (SSH, Slurm, Ansible)."""
    bmc: IpNetwork | None = None
    """Out-of-band BMC network."""
    ipoib: IpNetwork | None = None
    """IP over the compute fabric (one address per node)."""
    storage: IpNetwork | None = None
    """Storage network addresses."""
    domain: DomainName | None = None
    """DNS domain of the cluster's names (forward zone): '<host>.<domain>' on the management
    network, '<host>-bmc', '<host>-ib' and '<host>-stor' on the others; switches and PDUs by
    their own names. Default: '<cluster name>.internal' ('.internal' is reserved for private
    use, ICANN 2024)."""
    boot_server: Name | None = None
    """Host (by hostname) that serves DNS, DHCP, TFTP and the cloud-init seeds to new nodes;
    default: the first controller."""
