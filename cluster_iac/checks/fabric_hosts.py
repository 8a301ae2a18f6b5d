"""The compute hosts' side of a routed RoCE fabric (plan/host_rails.py): whether each GPU node's
RoCE NICs can be configured as planned, their /31s and per-rail routing tables beside the
host's other networks.

A pool too small for the leaves' host /31s is refused when the switches are planned
(FABRIC-POOL-EXHAUSTED, compile/plan_switches.py: a leaf's block holds both ends of each host
link), so these checks look at what the switch side cannot see: the host's other networks,
and whether any file configures the NICs at all.
"""

from __future__ import annotations

from collections.abc import Iterator

from cluster_iac.base.errors import Diagnostic, Severity
from cluster_iac.checks.registry import check
from cluster_iac.plan import Plan
from cluster_iac.plan.host_rails import rail_matches

HOST_NETWORKS = ("management", "bmc", "ipoib", "storage")


@check("fabric.roce_host_addresses")
def roce_host_addresses(plan: Plan) -> Iterator[Diagnostic]:
    """The RoCE fabric's host addresses (underlay.p2p_pool, which every host /31 and every rail
    table's route come from) must not overlap a network the same hosts are on: the host would
    have two connected routes for one address, and its rail tables would send that network's
    traffic from a rail address into the fabric."""
    section = plan.settings.fabric.compute
    if section is None or section.technology != "roce":
        return
    pool = section.underlay.p2p_pool
    networks = plan.settings.networks
    for name in HOST_NETWORKS:
        net = getattr(networks, name, None)
        if net is None or not net.cidr.overlaps(pool):
            continue
        shared = min(net.cidr.num_addresses, pool.num_addresses)
        yield Diagnostic(
            "ROCE-HOST-OVERLAP",
            f"fabric.compute.underlay.p2p_pool {pool} overlaps networks.{name}.cidr "
            f"{net.cidr} ({shared} address(es) in both): each GPU node's RoCE NICs take their "
            f"/31s and their rail tables' route from the pool, so a node would route "
            f"{name} addresses into the fabric", ("fabric", "compute", "underlay", "p2p_pool"),
            hint=f"give underlay.p2p_pool a range outside {net.cidr}, or move "
                 f"networks.{name}.cidr",
            details={"measured": shared, "limit": 0, "unit": "addresses"})


@check("fabric.roce_host_config")
def roce_host_config(plan: Plan) -> Iterator[Diagnostic]:
    """The RoCE NICs' addresses, rail tables and rules are written in each host's cloud-init
    network-config (cloud-init/seeds/, emit/cloud_init.py); a host the boot server seeds
    nothing for (no management network or address, no boot server) gets none, and its
    NICs stay unaddressed."""
    section = plan.settings.fabric.compute
    if section is None or section.technology != "roce" or not plan.switch_configs:
        return
    boot = plan.boot
    management = plan.addresses.get("management", {})
    served = boot is not None and boot.server_address is not None
    # the hosts cabled to the fabric (to its leaves): the far ends of the leaves' host ports,
    # from the wiring, as the ports are the writers' alone (compile.EMIT_ONLY)
    wiring = plan.fabric_wiring.get("compute")
    hosts = sorted(wiring.hosts()) if wiring is not None else []
    missing = [h for h in hosts if not served or h not in management]
    if missing:
        yield Diagnostic(
            "ROCE-HOST-UNCONFIGURED",
            f"{len(missing)} of {len(hosts)} GPU node(s) on the RoCE fabric, e.g. {missing[0]}, "
            f"get no cloud-init network-config, so nothing the tool writes addresses their RoCE "
            f"NICs or sets their rail routing", ("fabric", "compute"), Severity.WARNING,
            hint="declare networks.management (the seeds are served on it by the boot server, "
                 "networks.boot_server or the first controller)",
            details={"measured": len(missing), "limit": 0, "unit": "nodes"})


@check("fabric.roce_host_nics")
def roce_host_nics(plan: Plan) -> Iterator[Diagnostic]:
    """A GPU node type on the routed RoCE fabric whose PCIe layout does not describe its
    compute NICs: its rails are configured under their cables' port names (``rdma0`` ...,
    plan/host_rails.py), which the OS does not give a NIC, so netplan finds no interface to
    configure until something names them so."""
    section = plan.settings.fabric.compute
    if section is None or section.technology != "roce" or not plan.switch_configs:
        return
    # the hosts cabled to the fabric's leaves, from the wiring (the ports are the writers'
    # alone, compile.EMIT_ONLY), as fabric.roce_host_config reads them
    wiring = plan.fabric_wiring.get("compute")
    hosts = set(wiring.hosts()) if wiring is not None else set()
    types = {n.node_type for n in plan.nodes if n.hostname in hosts}
    for name in sorted(types):
        nt = plan.node_types[name]
        if not rail_matches(nt):
            yield Diagnostic(
                "ROCE-NIC-UNNAMED",
                f"node type '{name}' (platform '{nt.platform}') has no PCIe layout of its "
                f"{nt.nic_count('compute')} compute NIC(s), so its RoCE rails are configured "
                "as interfaces rdma0 ... that the OS does not name so; netplan leaves them "
                "unconfigured", nt.spec_path, Severity.WARNING,
                hint=f"give platform '{nt.platform}' a pcie layout in the spec's catalog "
                     "(catalog.platforms) with each compute NIC's busid as lspci prints it "
                     "(and its netdev if the OS does not name it by its path)",
                details={"measured": nt.nic_count("compute"), "limit": 0, "unit": "NICs"})
