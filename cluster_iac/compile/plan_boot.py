"""The boot path: every planned address's DNS name and zone (its serial kept by the lock:
plan/zones.py), the boot server, each host's architecture,
the subnets as hosts configure them and the MACs the lock records (plan/boot.py)."""

from __future__ import annotations

from dataclasses import replace
from ipaddress import IPv4Network
from itertools import repeat
from operator import itemgetter

from cluster_iac.base.errors import CompileError, Diagnostic
from cluster_iac.base.sorting import natural_sorted
from cluster_iac.plan import Plan
from cluster_iac.plan.boot import (
    DEFAULT_MTU,
    NETWORKS,
    BootHost,
    BootPlan,
    DnsRecord,
    Subnet,
    dns_name,
)
from cluster_iac.plan.zones import kept_zones
from cluster_iac.spec import ClusterSpec
from cluster_iac.spec.strings import hostname_problem, hostnames_valid


def plan_boot(spec: ClusterSpec, plan: Plan) -> Plan:
    """The boot plan; a name two devices would share, or a boot server that is no host, is a
    located error."""
    networks = spec.networks
    domain = networks.domain or f"{spec.cluster.name.replace('_', '-')}.internal"
    records, problems = dns_records(plan)
    server = boot_server(plan, networks.boot_server, problems)
    if problems:
        raise CompileError(problems)
    hosts = tuple(BootHost(n.hostname, n.node_type, plan.node_types[n.node_type].cpu.arch,
                           n.role) for n in natural_sorted(plan.nodes, lambda n: n.hostname))
    management = plan.addresses.get("management", {})
    nets = subnets(spec, plan)
    # the zones and their serials here, in the main process that reads and writes the lock
    zones = kept_zones(domain, (s.cidr for s in nets), records, plan.lock) \
        if records and server is not None else {}
    boot = BootPlan(domain=domain, server=server,
                    server_address=management.get(server) if server else None,
                    records=records, hosts=hosts, subnets=nets, macs=lock_macs(plan),
                    zones=zones)
    return replace(plan, boot=boot)


def dns_records(plan: Plan) -> tuple[tuple[DnsRecord, ...], list[Diagnostic]]:
    """Every address's name; two devices with one name is DNS-NAME-CLASH at the second's
    network (a host 'x-bmc' beside host x's BMC name)."""
    hosts = {n.hostname for n in plan.nodes}
    made: list[DnsRecord] = []
    names: list[str] = []
    for network in NETWORKS:  # column by column: 60,000 records at 100,000 GPUs
        table = plan.addresses.get(network, {})
        named = list(map(dns_name, repeat(network), table, repeat(hosts)))
        made += map(_record, repeat(DnsRecord), zip(
            named, table.values(), repeat(network), table, strict=False))
        names += named
    if len(set(names)) == len(names) and hostnames_valid(names):  # all of them at once
        return tuple(natural_sorted(made, itemgetter(0))), []
    seen: dict[str, DnsRecord] = {}
    problems: list[Diagnostic] = []
    for record in made:
        network, device = record.network, record.device
        other = seen.setdefault(record.name, record)
        problem = hostname_problem(record.name)
        if problem:
            problems.append(Diagnostic(
                "DNS-NAME-CLASH", f"the DNS name '{record.name}' of {device} on the "
                f"{network} network {problem}", ("networks", network),
                hint="shorten the host name pattern or the rack name"))
        elif other is not record:
            problems.append(Diagnostic(
                "DNS-NAME-CLASH", f"{device} on the {network} network and {other.device} "
                f"on the {other.network} network would both be '{record.name}' in DNS",
                ("networks", network),
                hint="rename the host group whose names end like another network's suffix "
                     "(-bmc, -ib, -stor)"))
    return tuple(natural_sorted(seen.values(), itemgetter(0))), problems


_record = tuple.__new__  # a DnsRecord of its four fields, without a Python call each


def boot_server(plan: Plan, wanted: str | None, problems: list[Diagnostic]) -> str | None:
    """The named boot server, else the first controller (service, login, compute host) on the
    management network; None without one."""
    management = plan.addresses.get("management", {})
    if wanted is not None:
        if wanted not in management:
            problems.append(Diagnostic(
                "DNS-BOOT-SERVER", f"networks.boot_server '{wanted}' is no host on the "
                "management network", ("networks", "boot_server"),
                hint="name a controller or service host"))
        return wanted
    for role in ("controller", "service", "login", "compute"):
        for node in natural_sorted(plan.nodes_by_role(role), lambda n: n.hostname):
            if node.hostname in management:
                return node.hostname
    return None


def subnets(spec: ClusterSpec, plan: Plan) -> tuple[Subnet, ...]:
    """Each addressed network as the hosts configure it. The MTU: the spec's, else the host
    MTU of the Ethernet fabric that carries the network (the storage network on a RoCE storage
    fabric: plan/qos.py; the OS network configuration is where the hosts' MTU is set, and
    plan_qos refuses a spec MTU that differs, QOS-HOST-MTU), else the network's default."""
    out = []
    for network in NETWORKS:
        ipnet = getattr(spec.networks, network)
        if ipnet is None or network not in plan.addresses:
            continue
        cidr: IPv4Network = ipnet.cidr
        fabric = plan.qos.get(network)  # the networks' names are their fabrics' (storage)
        default = fabric.host_mtu if fabric is not None else DEFAULT_MTU.get(network, 1500)
        out.append(Subnet(network, str(cidr), str(cidr.network_address + 1), ipnet.interface,
                          ipnet.mtu or default))
    return tuple(out)


def lock_macs(plan: Plan) -> dict[tuple[str, str], str]:
    """(network, device) -> MAC of the lock's 'mac' lines whose device has an address there."""
    out = {}
    for network in NETWORKS:
        present = plan.addresses.get(network, {})
        for entry in plan.lock.of_kind("mac", network):
            device = entry.key[2]
            if device in present:
                out[(network, device)] = entry.value[0]
    return out
