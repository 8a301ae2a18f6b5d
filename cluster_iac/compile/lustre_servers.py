"""Lustre servers from the plan: each server's targets (drives, RAID), LNet NIDs, and the
bandwidth and capacity the hardware gives (plan/lustre_bandwidth.py has the formulas)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import networkx as nx

from cluster_iac.base.errors import Diagnostic, SpecPath
from cluster_iac.base.suggest import did_you_mean
from cluster_iac.compile.lustre_engine import engine_problems, server_engine
from cluster_iac.plan import Plan
from cluster_iac.plan.lustre import Bandwidth, LnetPlan, LustreServer, LustreServers, LustreTarget
from cluster_iac.plan.lustre_bandwidth import (
    BITS_PER_BYTE,
    RAID_DATA,
    RAID_MIN_DRIVES,
    group_rates_gbs,
    limiting_term,
    link_gbs,
    max_flow_gbs,
)
from cluster_iac.plan.raid_engine import cap_by_engine, describe
from cluster_iac.spec.storage import Lustre, TargetDevices

BASE: SpecPath = ("storage", "lustre")
# LNet network -> (IP network of its NIDs, NIC role of its ports)
NETWORKS = {"storage": ("storage", "storage"), "compute": ("ipoib", "compute"),
            "management": ("management", "inband")}
CLIENT_ROLES = ("compute", "login")
FULL_STRIPE_KIB = 1024  # one Lustre RPC (1 MiB): a RAID 5/6 full stripe should equal it
MDADM_CHUNK_KIB = 512  # mdadm's default chunk for striped levels
MD_PAGE_KIB = 4
"""The smallest md chunk, one 4 KiB page (mdadm(8), --chunk: 'RAID4, RAID5, RAID6, and RAID10
require the chunk size to be a power of 2, with minimal chunk size being 4KB'; Linux
drivers/md/raid5.c and raid10.c refuse others as 'invalid chunk size'); mke2fs' stride is the
chunk over the 4 KiB block (Lustre manual, 'Computing file system parameters for mkfs')."""


def device_problems(lustre: Lustre, plan: Plan) -> Iterator[Diagnostic]:
    """Unknown drive models, RAID groups smaller than their level allows, and RAID engine
    figures that do not fit the engine's kind."""
    yield from engine_problems(lustre)
    for key in ("mgt", "mdt", "ost"):
        target: TargetDevices | None = getattr(lustre, key)
        if target is None:
            continue
        path = (*BASE, key)
        if target.drive not in plan.catalog.drives:
            yield Diagnostic("SPEC-UNKNOWN-REF", f"unknown drive model '{target.drive}'",
                             (*path, "drive"),
                             hint=did_you_mean(target.drive, sorted(plan.catalog.drives)))
        least = RAID_MIN_DRIVES[target.raid]
        if target.drives < least:
            yield Diagnostic("LUSTRE-RAID", f"{key}: {target.raid} needs at least {least} "
                             f"drives, not {target.drives}", (*path, "drives"))
        chunk = target.chunk_kib
        if chunk is not None and _bad_chunk(target.raid, chunk):
            below = 1 << (max(chunk, MD_PAGE_KIB).bit_length() - 1)
            rule = ("a multiple of 4 KiB" if target.raid == "raid0"
                    else "a power of two of at least 4 KiB")
            yield Diagnostic(
                "LUSTRE-RAID-CHUNK", f"{key}: chunk_kib {chunk} is not {rule}, which "
                f"mdadm requires of a {target.raid} chunk; ldiskfs' stride (chunk / 4 KiB "
                f"block) would be {chunk // MD_PAGE_KIB}", (*path, "chunk_kib"),
                hint=f"use {below} or {below * 2}, or leave chunk_kib out for the chunk that "
                     "makes a 1 MiB full stripe")


def _bad_chunk(raid: str, chunk: int) -> bool:
    """mdadm(8), --chunk: RAID 4, 5, 6 and 10 need a power of two of at least 4 KiB; RAID 0
    any multiple of the 4 KiB page; RAID 1 has no chunk (the value is not used)."""
    if raid == "raid1":
        return False
    if raid == "raid0":
        return chunk % MD_PAGE_KIB != 0
    return chunk < MD_PAGE_KIB or chunk & (chunk - 1) != 0


def choose_network(lustre: Lustre, plan: Plan) -> tuple[str | None, Diagnostic | None]:
    """The network LNet runs on: the spec's, else the storage fabric, compute fabric, or the
    management network, whichever exists first."""
    wanted = lustre.lnet.network
    fabrics = plan.settings.fabric
    if wanted is None:
        wanted = ("storage" if fabrics.storage else "compute" if fabrics.compute
                  else "management")
    exists = (getattr(fabrics, wanted) is not None if wanted != "management"
              else plan.settings.networks.management is not None)
    if not exists:
        where = f"fabric.{wanted}" if wanted != "management" else "networks.management"
        return None, Diagnostic("LUSTRE-LNET-NETWORK", f"LNet is to run on the {wanted} "
                                f"network, but the spec declares no {where}",
                                (*BASE, "lnet", "network"))
    return wanted, None


def net_name(lustre: Lustre, plan: Plan, network: str) -> tuple[str, Diagnostic | None]:
    """o2ib on a fabric (InfiniBand, or RoCE on Ethernet), tcp on the management network, as
    Lustre prints them (network number 0 unwritten: o2ib0 is o2ib); o2ib needs RDMA, which a
    plain management network does not have."""
    given = lustre.lnet.net
    if given is None:
        return ("tcp" if network == "management" else "o2ib"), None
    name = given[:-1] if given.endswith("0") and not given[:-1][-1].isdigit() else given
    if name.startswith("o2ib") and network == "management":
        return name, Diagnostic("LUSTRE-LNET-NET", f"LNet net {given} needs RDMA (InfiniBand "
                                f"or RoCE), which the management network does not carry: use "
                                f"tcp, or run LNet on a fabric", (*BASE, "lnet", "net"))
    return name, None


def build_servers(lustre: Lustre, plan: Plan, network: str, net: str
                  ) -> tuple[LustreServers | None, list[Diagnostic]]:
    """Servers with their targets, LNet, bandwidth and capacity."""
    ip_net, role = NETWORKS[network]
    wiring = plan.fabric_wiring.get(network) if network != "management" else None
    graph = wiring.graph if wiring is not None else None  # max flow wants the graph
    addresses = plan.addresses.get(ip_net, {})
    mds = [n for n in plan.nodes if n.group == lustre.mds_group]
    oss = [n for n in plan.nodes if n.group == lustre.oss_group]
    problems: list[Diagnostic] = []
    servers = []
    ost_index = iter(lustre.ost_indices or range(len(oss) * lustre.osts_per_oss))
    indices = None if lustre.ost_indices else LockedIndices(plan.lock)
    if indices is not None:  # the MGS stays with the server that holds MDT0
        mds.sort(key=lambda node: not indices.holds("mdt", node.hostname, 0))
    interfaces = _interfaces(lustre, plan, ip_net, mds + oss)
    for position, node in enumerate(mds + oss):
        is_mds = position < len(mds)
        if indices is not None and not is_mds:
            ost_index = indices.take("ost", node.hostname, lustre.osts_per_oss)
        mdt_index = (indices.take("mdt", node.hostname, lustre.mdts_per_mds)
                     if indices is not None and is_mds else None)
        targets, found = _targets(lustre, plan, node, is_mds, position == 0, position,
                                  ost_index, mdt_index)
        problems += found
        address = addresses.get(node.hostname)
        servers.append(LustreServer(
            hostname=node.hostname, role="mds" if is_mds else "oss", node_type=node.node_type,
            nid=f"{address}@{net}" if address else None,
            nic_gbs=_nic_gbs(plan, graph, node, role, len(interfaces[node.node_type])),
            drive_io_gbs=_drive_io(plan, node),
            targets=tuple(targets)))
    lnet = _lnet(plan, network, net, ip_net, servers, graph, role, interfaces)
    read, write = _bandwidths(lustre, plan, servers, lnet, graph, role)
    osts = [t for s in servers for t in s.targets if t.kind == "ost"]
    drive = plan.catalog.drives.get(lustre.ost.drive) if lustre.ost else None
    capacity = sum(t.capacity_tb for t in osts) if drive and osts else None
    raw = (len(osts) * (lustre.ost.drives + lustre.ost.spares) * drive.capacity_tb
           if drive and lustre.ost else None)
    return LustreServers(servers=tuple(servers), lnet=lnet, read=read, write=write,
                         capacity_tb=capacity, raw_tb=raw), problems


class LockedIndices:
    """Target indices with the lock (cluster_iac/lock/): a server the lock names keeps its
    recorded indices; a new server takes the lowest indices no line holds, so that adding or
    reordering servers renames no target (a target's index is written into it when it is
    formatted)."""

    def __init__(self, lock: Any) -> None:
        self.lock = lock
        self.held = {kind: lock.targets(kind) for kind in ("mdt", "ost")}
        self.taken = {kind: {int(e.key[2]) for entries in found.values() for e in entries}
                      for kind, found in self.held.items()}
        self.next = dict.fromkeys(self.held, 0)

    def holds(self, kind: str, server: str, index: int) -> bool:
        return server not in self.lock.reallocated and any(
            int(e.key[2]) == index for e in self.held[kind].get(server, []))

    def take(self, kind: str, server: str, count: int) -> Iterator[int]:
        own = [int(e.key[2]) for e in self.held[kind].get(server, [])
               if server not in self.lock.reallocated][:count]
        while len(own) < count:
            while self.next[kind] in self.taken[kind]:
                self.next[kind] += 1
            own.append(self.next[kind])
            self.taken[kind].add(self.next[kind])
        return iter(own)


def _targets(lustre: Lustre, plan: Plan, node: Any, is_mds: bool, first: bool, position: int,
             ost_index: Iterator[int], mdt_index: Iterator[int] | None = None,
             ) -> tuple[list[LustreTarget], list[Diagnostic]]:
    """The targets of one server, taking drive slots in order: MGT, MDTs, OSTs."""
    wanted: list[tuple[str, int, TargetDevices | None]] = []
    if is_mds:
        if first and lustre.mgt is not None:
            wanted.append(("mgt", 0, lustre.mgt))
        for k in range(lustre.mdts_per_mds):
            index = position * lustre.mdts_per_mds + k if mdt_index is None else next(mdt_index)
            wanted.append(("mdt", index, lustre.mdt))
    else:
        for _ in range(lustre.osts_per_oss):
            wanted.append(("ost", next(ost_index, -1), lustre.ost))
    platform = plan.catalog.platforms[plan.node_types[node.node_type].platform]
    # counted before any drive path is made: 256 OSTs of 2,048 drives are 524,288 paths
    needed = sum(d.drives + d.spares for _, _, d in wanted
                 if d is not None and d.drive in plan.catalog.drives)
    if needed > platform.drive_bays:
        return [], [_bays(lustre, plan, node, is_mds, needed, platform.drive_bays)]
    slot, out = 0, []
    for kind, index, devices in wanted:
        target = _target(lustre, plan, node.hostname, kind, index, devices, slot,
                         with_mgs=first and kind == "mdt" and index == 0 and lustre.mgt is None)
        slot += len(target.members) + len(target.spares)
        out.append(target)
    return out, []


def _bays(lustre: Lustre, plan: Plan, node: Any, is_mds: bool, needed: int,
          bays: int) -> Diagnostic:
    key = "ost" if not is_mds else "mdt" if lustre.mdt else "mgt"
    return Diagnostic(
        "LUSTRE-DRIVE-BAYS", f"{node.hostname} ({node.node_type}, platform "
        f"{plan.node_types[node.node_type].platform}) needs {needed} drives for its targets "
        f"but has {bays} drive bays", (*BASE, key, "drives"))


def _target(lustre: Lustre, plan: Plan, server: str, kind: str, index: int,
            devices: TargetDevices | None, slot: int, *, with_mgs: bool) -> LustreTarget:
    label = "MGS" if kind == "mgt" else f"{lustre.fsname}-{kind.upper()}{max(index, 0):04x}"
    drive = plan.catalog.drives.get(devices.drive) if devices else None
    if devices is None or drive is None:
        return LustreTarget(kind=kind, index=index, label=label, server=server,
                            device=f"/dev/md/{label}", members=(), spares=(), raid="none",
                            chunk_kib=None, data_drives=0, drive="", read_gbs=0.0,
                            write_gbs=0.0, capacity_tb=0.0, with_mgs=with_mgs)
    pattern = lustre.drive_path or ("/dev/nvme{n}n1" if drive.kind == "nvme"
                                    else "/dev/disk/by-vdev/d{n}")
    paths = [pattern.replace("{n}", str(n)) for n in range(slot, slot + devices.drives
                                                          + devices.spares)]
    read, write = group_rates_gbs(devices.raid, devices.drives, drive.seq_read_mbs,
                                  drive.seq_write_mbs)
    data = RAID_DATA[devices.raid](devices.drives)
    return LustreTarget(
        kind=kind, index=index, label=label, server=server, device=f"/dev/md/{label}",
        members=tuple(paths[:devices.drives]), spares=tuple(paths[devices.drives:]),
        raid=devices.raid, chunk_kib=_chunk(devices, data), data_drives=data,
        drive=devices.drive, read_gbs=read, write_gbs=write,
        capacity_tb=data * drive.capacity_tb, with_mgs=with_mgs)


def _chunk(devices: TargetDevices, data: float) -> int | None:
    """The spec's chunk, else for RAID 5/6 the largest power of two whose full stripe is at
    most 1 MiB (Lustre manual, 'Computing file system parameters for mkfs': stripe width close
    to 1 MiB but not larger), else mdadm's default; RAID 1 has no chunk."""
    if devices.raid == "raid1":
        return None
    if devices.chunk_kib is not None:
        return devices.chunk_kib
    if devices.raid in ("raid5", "raid6"):
        chunk = FULL_STRIPE_KIB // int(data)
        return 1 << (max(chunk, 4).bit_length() - 1)  # md chunks are powers of two, >= 4 KiB
    return MDADM_CHUNK_KIB


def _nic_gbs(plan: Plan, graph: nx.Graph | None, node: Any, role: str,
             interfaces: int) -> float:
    """What a host's NICs on the LNet network carry for Lustre: LNet sends only over the
    interfaces it is given (lnet.conf; several: multi-rail), so of the host's ports on the
    network, as many as it has interfaces: line rate x min(1, interfaces / ports)."""
    if graph is not None:
        total = link_gbs(graph, node.hostname)
        ports = (sum(d["links"] for _, _, d in graph.edges(node.hostname, data=True))
                 if node.hostname in graph else 0)
    else:
        nics = plan.node_types[node.node_type].nics_of(role)
        total = sum(n.count * n.speed_gbps for n in nics) / BITS_PER_BYTE
        ports = sum(n.count for n in nics)
    return total * min(1.0, interfaces / ports) if ports else 0.0


def _drive_io(plan: Plan, node: Any) -> float | None:
    io: float | None = plan.catalog.platforms[plan.node_types[node.node_type].platform].drive_io_gbs
    return io


def _interfaces(lustre: Lustre, plan: Plan, ip_net: str, servers: list[Any]
                ) -> dict[str, tuple[str, ...]]:
    """Node type -> the interfaces LNet uses on it: lnet.interfaces, else the network's one
    ``interface``; for the servers' and the clients' node types."""
    interface = getattr(plan.settings.networks, ip_net, None)
    default = (interface.interface,) if interface is not None else ()
    types = sorted({s.node_type for s in servers}
                   | {n.node_type for n in plan.nodes if n.role in CLIENT_ROLES})
    return {t: tuple(lustre.lnet.interfaces.get(t, default)) for t in types}


def _lnet(plan: Plan, network: str, net: str, ip_net: str, servers: list[LustreServer],
          graph: nx.Graph | None, role: str, interfaces: dict[str, tuple[str, ...]]
          ) -> LnetPlan:
    clients = tuple(n.hostname for n in plan.nodes if n.role in CLIENT_ROLES)
    addresses = plan.addresses.get(ip_net, {})
    hosts = [s.hostname for s in servers] + list(clients)
    missing = tuple(h for h in hosts if h not in addresses)
    return LnetPlan(net=net, network=network, ip_network=ip_net, interfaces=interfaces,
                    mgs_nids=tuple(s.nid for s in servers[:1] if s.nid),
                    clients=clients, unreachable=_unreachable(plan, servers, clients, graph, role),
                    missing_nid=missing, spec_path=(*BASE, "lnet"))


def _unreachable(plan: Plan, servers: list[LustreServer], clients: tuple[str, ...],
                 graph: nx.Graph | None, role: str) -> dict[str, str]:
    """Hosts that cannot reach every server: not on the network, or on another part of it."""
    out: dict[str, str] = {}
    types = {n.hostname: n.node_type for n in plan.nodes}
    hosts = [s.hostname for s in servers] + list(clients)
    if graph is None:  # the management network: every host with an in-band NIC is on it
        for host in hosts:
            if not plan.node_types[types[host]].nics_of(role):
                out[host] = f"has no {role} NIC"
        return out
    anchor = next((s.hostname for s in servers if s.hostname in graph), None)
    reach = nx.node_connected_component(graph, anchor) if anchor else set()
    for host in hosts:
        if host not in graph:
            out[host] = f"has no {role} NIC on the {role} fabric"
        elif host not in reach:
            out[host] = "is on a part of the fabric that no server is cabled to"
    return out


def _bandwidths(lustre: Lustre, plan: Plan, servers: list[LustreServer], lnet: LnetPlan,
                graph: nx.Graph | None, role: str) -> tuple[Bandwidth, Bandwidth]:
    oss = [s for s in servers if s.role == "oss"]
    computes = {n.hostname for n in plan.nodes if n.role == "compute"}
    readers = [c for c in lnet.clients if c in computes]
    server_nics = sum(s.nic_gbs for s in oss)
    wanted = set(readers)
    client_caps = {n.hostname: _nic_gbs(plan, graph, n, role,
                                        len(lnet.interfaces[n.node_type]))
                   for n in plan.nodes if n.hostname in wanted}
    client_nics = sum(client_caps.values())
    fabric = (max_flow_gbs(graph, {s.hostname: None for s in oss}, readers)
              if graph is not None else None)
    engines = {s.hostname: server_engine(lustre, plan, s) for s in oss}
    out = []
    for direction, claimed in (("read", lustre.read_gbs), ("write", lustre.write_gbs)):
        declared = lustre.ost is not None
        per_server = {s.hostname: cap_by_engine(_server_drives(s, direction, declared),
                                                getattr(engines[s.hostname], f"{direction}_gbs"))
                      for s in oss}
        engine_terms = [getattr(e, f"{direction}_gbs") for e in engines.values()]
        engine = (sum(v for v in engine_terms if v is not None)
                  if oss and all(v is not None for v in engine_terms) else None)
        drives_total = (sum(_server_drives(s, direction, True) or 0.0 for s in oss)
                        if lustre.ost is not None else None)
        if graph is not None:  # each end capped at what its LNet interfaces carry
            capped: dict[str, float | None] = {
                s.hostname: s.nic_gbs if v is None else min(v, s.nic_gbs)
                for s, v in zip(oss, per_server.values(), strict=True)}
            bound = max_flow_gbs(graph, capped, client_caps)
        else:  # management network: no switch graph, each server's NICs and the clients'
            served = sum(min(v, s.nic_gbs) if v is not None else s.nic_gbs
                         for s, v in zip(oss, per_server.values(), strict=True))
            bound = min(served, client_nics)
        terms = {"drives": drives_total, "RAID engine": engine, "server NICs": server_nics,
                 "client NICs": client_nics, "fabric": fabric}
        out.append(Bandwidth(drives=drives_total, raid=engine, engine=describe(engines),
                             server_nics=server_nics,
                             client_nics=client_nics, fabric=fabric, bound=bound,
                             limit=limiting_term(terms, bound), claimed=claimed,
                             spec_key=f"{direction}_gbs"))
    return out[0], out[1]


def _server_drives(server: LustreServer, direction: str, declared: bool) -> float | None:
    """What one OSS's drives deliver: its OST groups, capped by its drive controllers."""
    if not declared:
        return None
    groups = sum(t.read_gbs if direction == "read" else t.write_gbs for t in server.targets)
    return min(groups, server.drive_io_gbs) if server.drive_io_gbs else groups
