"""dhcp/kea-dhcp4.conf: ISC Kea's DHCPv4 server on the boot server, one subnet per Ethernet
network (management, BMC) with a reservation for every device whose MAC the lock records, and
the PXE boot file per client architecture; dhcp/hosts-without-mac.txt: the devices with no
known MAC (one '<network> <device>' a line), which get no reservation and so no lease.

Kea's format (Kea ARM, "DHCPv4 Server Configuration": subnet4, reservations, client-classes):
- no pools: Kea hands out-of-pool reservations, so only a device whose MAC is a fact gets an
  address, and always its planned one; MACs are never invented (``cluster-iac macs import``);
- client classes on DHCP option 93 (RFC 4578 client system architecture, the two-byte value
  as ``option[93].hex``): 0x0007 x64 UEFI, 0x000b ARM64 UEFI (Grace), each with next-server
  (siaddr, the TFTP server) and boot-file-name (plan/boot.py BOOT_FILES);
- the server listens on its management interface; the BMC subnet is reached through a DHCP
  relay on the BMC network's router (Kea picks the subnet by the relay's giaddr);
- IPoIB and storage addresses are static (cloud-init's network-config): DHCP over InfiniBand
  needs client identifiers that only the booted host knows.
Written by the JSON serializer; every name is a checked DNS label, every MAC parsed strictly.
"""

from __future__ import annotations

from socket import inet_aton
from typing import Any

from cluster_iac.formats.json import json_text
from cluster_iac.plan import Plan
from cluster_iac.plan.boot import ARCHITECTURES, BOOT_FILES, BootPlan

DHCP_NETWORKS = ("management", "bmc")
LEASES = "/var/lib/kea/kea-leases4.csv"  # Debian's kea-dhcp4-server default
CONTROL_SOCKET = "/run/kea/kea4-ctrl-socket"
VALID_LIFETIME = 86400  # a day: the address never changes, so renewals are cheap


def render(plan: Plan) -> dict[str, str]:
    boot: BootPlan | None = plan.boot
    if boot is None or boot.server_address is None:
        return {}
    subnets = [s for s in boot.subnets if s.network in DHCP_NETWORKS]
    missing = [f"{s.network} {device}" for s in subnets
               for device in sorted_devices(plan, s.network)
               if (s.network, device) not in boot.macs]
    return {"dhcp/kea-dhcp4.conf": json_text(config(plan, boot)),
            "dhcp/hosts-without-mac.txt": "".join(f"{line}\n" for line in missing)}


def sorted_devices(plan: Plan, network: str) -> list[str]:
    """The devices on a network in address order (an address as inet_aton's four bytes,
    big-endian: compared as the number)."""
    addresses = plan.addresses.get(network, {})
    return sorted(addresses, key=lambda d: inet_aton(addresses[d]))


def config(plan: Plan, boot: BootPlan) -> dict[str, Any]:
    management = next(s for s in boot.subnets if s.network == "management")
    return {"Dhcp4": {
        "interfaces-config": {"interfaces": [management.interface]},
        "lease-database": {"type": "memfile", "persist": True, "name": LEASES},
        "control-socket": {"socket-type": "unix", "socket-name": CONTROL_SOCKET},
        "valid-lifetime": VALID_LIFETIME,
        "host-reservation-identifiers": ["hw-address"],
        "reservations-global": False,
        "reservations-in-subnet": True,
        "reservations-out-of-pool": True,
        "option-data": [{"name": "domain-name", "data": boot.domain},
                        {"name": "domain-name-servers", "data": boot.server_address}],
        "client-classes": [
            {"name": f"uefi-{arch}", "test": f"option[93].hex == 0x{code:04x}",
             "next-server": boot.server_address, "boot-file-name": BOOT_FILES[arch]}
            for arch, code in ARCHITECTURES.items()],
        "subnet4": [subnet(plan, boot, number, s)
                    for number, s in enumerate(boot.subnets, 1) if s.network in DHCP_NETWORKS],
        "loggers": [{"name": "kea-dhcp4", "severity": "INFO",
                     "output_options": [{"output": "syslog"}]}],
    }}


def subnet(plan: Plan, boot: BootPlan, number: int, s: Any) -> dict[str, Any]:
    hosts = {h.hostname for h in boot.hosts}
    suffix = "" if s.network == "management" else "-bmc"
    reservations = []
    for device in sorted_devices(plan, s.network):
        mac = boot.macs.get((s.network, device))
        if mac is None:
            continue
        name = device + suffix if device in hosts else device
        reservations.append({"hw-address": mac, "ip-address": plan.addresses[s.network][device],
                             "hostname": f"{name}.{boot.domain}"})
    return {"id": number, "subnet": s.cidr,
            "option-data": [{"name": "routers", "data": s.gateway},
                            {"name": "interface-mtu", "data": str(s.mtu)}],
            "reservations": reservations}
