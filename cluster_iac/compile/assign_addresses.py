"""Deterministic IPv4 addresses from the spec's CIDRs: reserved first, then hosts in role order."""

from __future__ import annotations

from dataclasses import replace
from ipaddress import IPv4Network

from cluster_iac.errors import CompileError, Diagnostic
from cluster_iac.plan import Plan
from cluster_iac.plan.power import SIDES, pdu_name
from cluster_iac.spec import ClusterSpec

# Hosts in this order, so adding compute nodes never renumbers the controllers.
ROLE_ORDER = ("controller", "login", "service", "lustre_mds", "lustre_oss", "compute")
# Networks whose devices include switches and PDUs (their management ports live there).
DEVICE_NETWORKS = ("management", "bmc")
# Which NIC role puts a node on the storage network (the fabric's own IPoIB uses 'compute').
NIC_ROLE = {"ipoib": "compute", "storage": "storage"}


def assign_addresses(spec: ClusterSpec, plan: Plan) -> Plan:
    """network -> device -> address; a subnet too small for its hosts is a located error."""
    addresses: dict[str, dict[str, str]] = {}
    problems: list[Diagnostic] = []
    for network in ("management", "bmc", "ipoib", "storage"):
        ipnet = getattr(plan.settings.networks, network)
        if ipnet is None:
            continue
        devices = members(plan, network)
        try:
            addresses[network] = allocate(ipnet.cidr, ipnet.reserved, devices)
        except ValueError as exc:
            problems.append(Diagnostic("SPEC-SUBNET-TOO-SMALL",
                                       f"networks.{network}.cidr {ipnet.cidr}: {exc}",
                                       ("networks", network, "cidr")))
    if problems:
        raise CompileError(problems)
    return replace(plan, addresses=addresses)


def members(plan: Plan, network: str) -> list[str]:
    """Devices on ``network`` in allocation order: hosts by role then spec order, then the
    network's own switches, other switches' management ports and PDUs (management/BMC only)."""
    rank = {role: i for i, role in enumerate(ROLE_ORDER)}
    nodes = sorted(enumerate(plan.nodes), key=lambda e: (rank.get(e[1].role, len(rank)), e[0]))
    role = NIC_ROLE.get(network)
    hosts = [n.hostname for _, n in nodes
             if role is None or plan.node_types[n.node_type].nic_count(role) > 0]
    if network not in DEVICE_NETWORKS:
        return hosts
    own = [s.name for s in plan.switches if s.network == network]
    if network != "bmc" and plan.settings.networks.bmc is not None:
        return hosts + own
    # Out-of-band ports (fabric switches' mgmt0, PDUs' network cards), cabled by build_management.
    fabric = [s.name for s in plan.switches if s.network not in DEVICE_NETWORKS]
    pdus = [pdu_name(r.name, side) for r in plan.racks
            for side in SIDES[plan.settings.power.pdu_profiles[r.pdu_profile].layout]]
    return hosts + own + fabric + pdus


def allocate(cidr: IPv4Network, reserved: int, devices: list[str]) -> dict[str, str]:
    """The first ``reserved`` usable addresses are kept (gateway, VIPs); devices follow in order.
    Raises ValueError with needed vs available counts when the subnet is too small."""
    usable = cidr.num_addresses - 2 if cidr.prefixlen < 31 else cidr.num_addresses
    first = cidr.network_address + (1 if cidr.prefixlen < 31 else 0)
    needed = reserved + len(devices)
    if needed > usable:
        raise ValueError(f"needs {needed} addresses ({reserved} reserved + {len(devices)} "
                         f"devices) but has {usable} usable")
    return {name: str(first + reserved + i) for i, name in enumerate(devices)}
