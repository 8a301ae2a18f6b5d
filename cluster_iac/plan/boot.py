"""The boot path of a node as planned: its DNS names and zones, the MACs the lock knows, the boot
server and each host's architecture and interfaces (compile/plan_boot.py), read by the DNS, DHCP,
cloud-init and PXE emitters."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from cluster_iac.plan.zones import Zone

# DHCP option 93 (client system architecture, RFC 4578 and IANA's "Processor Architecture
# Types" registry): 7 is x64 UEFI, 11 is ARM 64-bit UEFI (Grace); the boot file each gets from
# the TFTP root (Debian's grub-efi-amd64-signed / grub-efi-arm64-signed network images).
ARCHITECTURES = {"x86_64": 7, "arm64": 11}
BOOT_FILES = {"x86_64": "grubnetx64.efi", "arm64": "grubnetaa64.efi"}
# How a host's name on a network is made from its hostname (the management name is the host's)
HOST_SUFFIX = {"management": "", "bmc": "-bmc", "ipoib": "-ib", "storage": "-stor"}
DEFAULT_MTU = {"ipoib": 4092}  # IPoIB datagram mode under a 4096-byte IB MTU; others 1500
NETWORKS = ("management", "bmc", "ipoib", "storage")


class DnsRecord(NamedTuple):
    """One name and its address: an A record in the forward zone, a PTR in the reverse."""

    name: str  # a DNS label, relative to the domain
    address: str
    network: str
    device: str


class BootHost(NamedTuple):
    """A host that boots from the network: its node type, CPU architecture and role."""

    hostname: str
    node_type: str
    arch: str  # 'x86_64' | 'arm64'
    role: str


class Subnet(NamedTuple):
    """One IP network as the hosts configure it."""

    network: str
    cidr: str
    gateway: str  # the first address (reserved for the gateway)
    interface: str
    mtu: int


@dataclass(frozen=True, eq=False, repr=False)
class BootPlan:
    """What a new node needs to boot: names, MACs, the boot server, the subnets."""

    domain: str
    server: str | None  # the boot server's hostname (DNS, DHCP, TFTP, HTTP seeds)
    server_address: str | None  # its management address: DHCP's next-server
    records: tuple[DnsRecord, ...] = ()
    hosts: tuple[BootHost, ...] = ()
    subnets: tuple[Subnet, ...] = ()
    # (network, device) -> MAC (lower case, colon-separated), from the lock's 'mac' lines
    macs: dict[tuple[str, str], str] = field(default_factory=dict)
    # zone name -> its records and the SOA serial the lock keeps (plan/zones.py), in name order
    zones: dict[str, Zone] = field(default_factory=dict)


def dns_name(network: str, device: str, hosts: set[str]) -> str:
    """The DNS label of a device on a network: hosts with the network's suffix, switches and
    PDUs by their own name."""
    return device + HOST_SUFFIX[network] if device in hosts else device
