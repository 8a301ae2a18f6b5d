"""The compute hosts' side of a routed RoCE fabric: each GPU node's RoCE NIC (one per rail) with
its address on its leaf link, its own routing table and the rule that sends traffic from its
address by it.

A leaf numbers its host ports (compile/plan_switches.py): the /31 of each host link comes from
the leaf's block of ``underlay.p2p_pool``, kept by the lock ('p2p' line), the leaf the even
address, the host NIC the odd one (RFC 3021). So the host's addresses are the leaf's host
ports read from the other end, and are as stable as the leaf's block and the cable's port.

Every rail's NIC is in the same fabric, so a destination on another rail or another leaf is
reachable by every NIC, and the kernel's main table, which looks at the destination only,
would send everything out one of them. The standard multi-rail host setup gives each NIC its
own routing table with a route through its leaf, and one policy rule per NIC's source
address that looks that table up: traffic leaves by the NIC whose address it carries (RoCE v2
takes its source from the GID, the NIC's own IPv4 address). AMD Instinct "System acceptance:
configure network routing" (https://instinct.docs.amd.com/projects/system-acceptance/en/
latest/network/configuration.html: each backend NIC a /31, ``0.0.0.0/0 <leaf> table=101`` and
``priority 1010 from <address> table 101``, the next NIC table 102, priority 1020). Tables and
rule priorities follow that numbering: rail r (from 0) table ``RAIL_TABLE_BASE + r`` (101,
102, ...) and priority ``RAIL_RULE_BASE + 10 r`` (1010, 1020, ...), before the main table's
rule (32766, ip-rule(8)) so a rail's source is decided before the main table is looked at,
and after 0 (the local table's). One change from the guide: a rail table's route is to the
fabric's host addresses (``underlay.p2p_pool``, where every host /31 comes from), not
0.0.0.0/0: a renderer that drops the route's table (cloud-init's own, before netplan) then
adds a route to the fabric to the main table, not a second default route beside the
management network's.

The NIC's interface is named by the plan's port name of its cable (``rdma0`` ...,
compile/fabric_cables.py), the name the cable labels, LLDP (reconcile/lldp.py) and the
acceptance jobs already use; its RDMA device is the one NCCL uses on that rail
(plan/nccl.py compute_hcas: ``mlx5_0`` ...). The OS names the NIC otherwise (``enp24s0np0``),
so where the node type's PCIe layout describes its compute NICs (the catalog's platform, or
the spec's own), the rail's entry matches the NIC the OS sees and renames it to the rail's
name: netplan's ``match: {name: ...}`` and ``set-name`` (netplan(5): a match on name, MAC or
driver; a rename needs a match), the name being the NIC's ``netdev`` or, without one, the
systemd path name of its PCI bus id (netdev_glob). Without a layout the rail's name is
assumed to be the OS's (checks/fabric_hosts.py warns, ROCE-NIC-UNNAMED).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, NamedTuple

from cluster_iac.plan.model import Plan
from cluster_iac.plan.nccl import compute_hcas, layout_describes_nics, layout_nics

RAIL_TABLE_BASE = 101  # rail 0's routing table (AMD Instinct system acceptance: 101, 102, ...)
RAIL_RULE_BASE = 1010  # rail 0's rule priority, +10 a rail (the same guide: 1010, 1020, ...)
RAIL_RULE_STEP = 10
MAIN_RULE = 32766  # the main table's rule priority (ip-rule(8)); a rail's rule comes first
_RAIL_PORT = re.compile(r"[a-z]+(\d+)")


class RailPort(NamedTuple):
    """What a RoCE NIC is on every host of its node type: one record for all of them."""

    rail: int  # from 0: the NIC's place among the host's fabric ports ('rdma3' -> 3)
    interface: str  # the host's interface name: the cable's port name ('rdma3')
    device: str  # its RDMA device ('mlx5_3'), as NCCL_IB_HCA names it; '' when unknown
    mtu: int  # the underlay's host_mtu, the leaf port's
    fabric: str  # the fabric's host addresses, routed by the rail's table (underlay.p2p_pool)
    table: int  # this rail's routing table
    priority: int  # its source rule's priority
    match: str = ""  # the OS's name (or netplan's glob) of the NIC renamed to ``interface``;
    # '' when the node type's layout does not describe its NICs (the name is assumed)


class HostRail(NamedTuple):
    """One RoCE NIC of a compute host on its leaf link: its node type's RailPort and the
    link's own strings, the leaf port's (100,000 NICs at 100,000 GPUs, kept in the plan: no
    string is made for one, its address and gateway are made where they are read)."""

    port: RailPort
    source: str  # the host end alone ('10.254.0.1'): what its rule sends by the rail's table
    leaf_address: str  # the leaf's end with its length ('10.254.0.0/31'), the leaf port's
    leaf: str  # the leaf switch
    leaf_port: str  # its port ('p1s1')

    @property
    def address(self) -> str:
        """The host end of the /31 with its length ('10.254.0.1/31')."""
        return f"{self.source}/31"

    @property
    def gateway(self) -> str:
        """The leaf's end ('10.254.0.0')."""
        return self.leaf_address.partition("/")[0]

    @property
    def rail(self) -> int:
        return self.port.rail

    @property
    def interface(self) -> str:
        return self.port.interface

    @property
    def device(self) -> str:
        return self.port.device

    @property
    def mtu(self) -> int:
        return self.port.mtu

    @property
    def fabric(self) -> str:
        return self.port.fabric

    @property
    def table(self) -> int:
        return self.port.table

    @property
    def priority(self) -> int:
        return self.port.priority


def netdev_glob(busid: str, shared: bool = False) -> str:
    """The NIC's interface name as systemd names a PCI network device by its place
    (systemd.net-naming-scheme(7), ID_NET_NAME_PATH: ``en`` for Ethernet, ``P<domain>`` when
    the PCI domain is not 0, ``p<bus>s<slot>`` in decimal, ``f<function>`` for a function of
    a multi-function device, then ``n<phys_port_name>``, the ``np0`` mlx5 gives its port in
    Ethernet mode), as a glob of what follows: '0000:18:00.0' -> 'enp24s0*'. The DGX
    H100/H200 user guide's table names the same NICs ``ibp24s0`` ... in InfiniBand mode, the
    same scheme with ``ib``: single-function devices (no ``f0``) named by path. A function
    other than 0 keeps its ``f<n>``; ``shared``: another rail's NIC is a function of the same
    device (a dual-port card), so function 0 keeps its ``f0`` too and 'enp24s0*' does not
    also match the other's 'enp24s0f1np1'."""
    domain, bus, rest = busid.split(":")
    slot, function = rest.split(".")
    prefix = f"enP{int(domain, 16)}" if int(domain, 16) else "en"
    tail = f"f{int(function, 16)}" if int(function, 16) or shared else ""
    return f"{prefix}p{int(bus, 16)}s{int(slot, 16)}{tail}*"


def rail_matches(nt: Any) -> tuple[str, ...]:
    """The node type's compute NICs as the OS names them (their ``netdev``, or netdev_glob of
    their bus id), in rail order; () when its layout does not describe them."""
    if not layout_describes_nics(nt):
        return ()
    nics = layout_nics(nt)
    devices = Counter(dev.busid.rpartition(".")[0] for dev in nics)  # domain:bus:slot
    return tuple(dev.netdev or netdev_glob(dev.busid, devices[dev.busid.rpartition(".")[0]] > 1)
                 for dev in nics)


def rail_table(rail: int) -> int:
    return RAIL_TABLE_BASE + rail


def rail_priority(rail: int) -> int:
    return RAIL_RULE_BASE + RAIL_RULE_STEP * rail


def host_rails(plan: Plan, network: str = "compute") -> dict[str, tuple[HostRail, ...]]:
    """Each host of the routed Ethernet fabric ``network`` -> its NICs on it, by rail; empty
    when the fabric is not routed Ethernet (InfiniBand, or none)."""
    found: dict[str, list[HostRail]] = {}
    node_type = {n.hostname: n.node_type for n in plan.nodes}
    section = getattr(plan.settings.fabric, network, None) if plan.settings else None
    if section is None or not plan.switch_configs:
        return {}
    pool = str(section.underlay.p2p_pool)
    devices: dict[str, tuple[str, ...]] = {}  # node type -> its RDMA devices by rail
    matches: dict[str, tuple[str, ...]] = {}  # node type -> its NICs' OS names by rail
    # (node type, its port, MTU) -> its RailPort, where the port's name gives the rail: each
    # is the same on every host of the type (100,000 ports, 16 keys)
    named: dict[tuple[str, str, int], RailPort] = {}
    for config in plan.switch_configs.values():
        if config.fabric != network or config.role != "leaf":
            continue
        for port in config.host_ports:
            if not port.address:
                continue
            nt = node_type.get(port.peer, "")
            known = named.get((nt, port.peer_port, port.mtu))
            if known is None:
                match = _RAIL_PORT.fullmatch(port.peer_port)
                rail = int(match[1]) if match else len(found.get(port.peer, ()))
                if nt and nt not in devices:
                    devices[nt] = compute_hcas(plan.node_types[nt])
                    matches[nt] = rail_matches(plan.node_types[nt])
                hcas, names = devices.get(nt, ()), matches.get(nt, ())
                known = RailPort(rail, port.peer_port, hcas[rail] if rail < len(hcas) else "",
                                 port.mtu, pool, rail_table(rail), rail_priority(rail),
                                 names[rail] if rail < len(names) else "")
                if match:
                    named[nt, port.peer_port, port.mtu] = known
            found.setdefault(port.peer, []).append(
                HostRail(known, port.peer_address, port.address, config.name, port.name))
    return {host: tuple(sorted(rails)) for host, rails in sorted(found.items())}


def rail_config(rail: HostRail) -> dict[str, Any]:
    """One RoCE NIC in network config version 2 (netplan's keys, which cloud-init hands to
    netplan unchanged): the NIC the OS names it by renamed to its rail's name (where the
    layout names it, RailPort.match), its /31, MTU, a route to the fabric through its leaf in
    its own table and the rule sending what its address sends by that table. The same entry
    is in the node's cloud-init network-config (emit/cloud_init.py) and in its netplan file
    the playbook installs (the inventory's ``roce_rails``, emit/ansible.py)."""
    return rail_entry(rail, rail.address, rail.gateway, rail.source)


def rail_entry(rail: HostRail, address: Any, gateway: Any, source: Any) -> dict[str, Any]:
    """rail_config with the rail's strings given: its address with its length, the leaf's
    address and its address alone (or the seed template's Slots for them,
    emit/cloud_init.py ethernets_config)."""
    port = rail.port
    named = {"match": {"name": port.match}, "set-name": port.interface} if port.match else {}
    return {**named, "addresses": [address], "mtu": port.mtu,
            "routes": [{"to": port.fabric, "via": gateway, "table": port.table}],
            "routing-policy": [{"from": source, "table": port.table,
                                "priority": port.priority}]}
