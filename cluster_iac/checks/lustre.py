"""Lustre checks: fsname, OST indices, LNet NIDs and reachability, RAID stripes and redundancy."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import TYPE_CHECKING

from cluster_iac.base.errors import Diagnostic, Severity
from cluster_iac.checks.registry import check
from cluster_iac.plan import Plan
from cluster_iac.plan.node_types import NIC_ROLE

if TYPE_CHECKING:  # plan/lustre.py loads only for a spec with Lustre (tests/test_startup.py)
    from cluster_iac.plan.lustre import LustreServers

FSNAME_MAX = 8  # mkfs.lustre(8): "The maximum filesystem_name length is 8 characters"
OST_INDEX_MAX = 0xFFFF  # target names carry the index in four hex digits (OST0000-OSTffff)
FULL_STRIPE_KIB = 1024  # Lustre's 1 MiB RPC


def _hardware(plan: Plan) -> LustreServers | None:
    return plan.lustre.hardware if plan.lustre is not None else None


@check("lustre.fsname")
def fsname(plan: Plan) -> Iterator[Diagnostic]:
    """The file system name fits mkfs.lustre's 8 characters."""
    if plan.lustre is not None and len(plan.lustre.fsname) > FSNAME_MAX:
        name = plan.lustre.fsname
        yield Diagnostic(
            "LUSTRE-FSNAME", f"fsname '{name}' has {len(name)} characters; Lustre allows at "
            f"most {FSNAME_MAX} (mkfs.lustre --fsname)", ("storage", "lustre", "fsname"),
            hint=f"for example '{name[:FSNAME_MAX]}'")


@check("lustre.ost_indices")
def ost_indices(plan: Plan) -> Iterator[Diagnostic]:
    """Every OST has its own index, within 0-65535."""
    hardware = _hardware(plan)
    if hardware is None:
        return
    indices = [t.index for t in hardware.targets if t.kind == "ost"]
    path = ("storage", "lustre", "ost_indices")
    for index, count in sorted(Counter(indices).items()):
        if count > 1:
            owners = sorted({t.server for t in hardware.targets
                             if t.kind == "ost" and t.index == index})
            yield Diagnostic("LUSTRE-OST-INDEX", f"OST index {index} is given to {count} OSTs "
                             f"(on {', '.join(owners)}); each OST needs its own", path)
        if not 0 <= index <= OST_INDEX_MAX:
            yield Diagnostic("LUSTRE-OST-INDEX", f"OST index {index} is outside 0-"
                             f"{OST_INDEX_MAX}", path)


@check("lustre.nids")
def nids(plan: Plan) -> Iterator[Diagnostic]:
    """Every server and client has an address on the LNet network's IP network: its NID.
    A host has none when that network is not declared, or when its node type has no NIC of
    the role the network is made of (the built-in Lustre and management servers carry
    storage NICs only, so with no storage fabric LNet defaults to the compute fabric, on
    which they have no port)."""
    hardware = _hardware(plan)
    if hardware is None or not hardware.lnet.missing_nid:
        return
    lnet = hardware.lnet
    missing = lnet.missing_nid
    role = NIC_ROLE.get(lnet.ip_network)
    declared = getattr(plan.settings.networks, lnet.ip_network, None) is not None
    types = {n.hostname: n.node_type for n in plan.nodes}
    nicless = sorted({types[h] for h in missing
                      if role and not plan.node_types[types[h]].nics_of(role)})
    why = f"have no address on networks.{lnet.ip_network}, so"
    if declared and nicless:
        platforms = sorted({plan.node_types[t].platform for t in nicless})
        why = (f"have no {role} NIC (node type(s) {', '.join(nicless)}, platform(s) "
               f"{', '.join(platforms)}) and so no address on networks.{lnet.ip_network}:")
        hint = (f"LNet runs on the {lnet.network} network, and these node types' NICs are "
                f"{_roles(plan, nicless)} only: declare fabric.storage and networks.storage "
                f"so that LNet runs on the storage fabric (clients without a storage NIC then "
                f"need one: node_types.<name>.nics_add), or give node type(s) "
                f"{', '.join(nicless)} {role} NICs with node_types.<name>.nics_add")
    else:
        hint = (f"declare networks.{lnet.ip_network}, or run LNet on another network "
                f"(storage.lustre.lnet.network)")
    yield Diagnostic(
        "LUSTRE-NID", f"{len(missing)} Lustre host(s) {why} no NID on LNet {lnet.net} "
        f"over the {lnet.network} network: "
        f"{', '.join(missing[:5])}{' ...' if len(missing) > 5 else ''}",
        (*lnet.spec_path, "network"), hint=hint)


def _roles(plan: Plan, types: list[str]) -> str:
    roles = sorted({nic.role for t in types for nic in plan.node_types[t].nics})
    return " and ".join(roles) or "none"


@check("lustre.reachability")
def reachability(plan: Plan) -> Iterator[Diagnostic]:
    """Every client (compute and login node) reaches every server over the LNet network."""
    hardware = _hardware(plan)
    if hardware is None or not hardware.lnet.unreachable:
        return
    lnet = hardware.lnet
    groups = {n.hostname: n.group for n in plan.nodes}
    by_group: dict[tuple[str, str], list[str]] = {}
    for host, why in lnet.unreachable.items():
        by_group.setdefault((groups[host], why), []).append(host)
    for (group, why), hosts in sorted(by_group.items()):
        yield Diagnostic(
            "LUSTRE-UNREACHABLE", f"node group {group}: {len(hosts)} host(s) ({hosts[0]}"
            f"{' ...' if len(hosts) > 1 else ''}) {why}, so they cannot reach every Lustre "
            f"server over LNet {lnet.net}", (*lnet.spec_path, "network"),
            hint=f"give node group {group}'s node type NICs on the {lnet.network} network "
                 f"(node_types.<name>.nics_add), or run LNet on a network every host shares "
                 f"(storage.lustre.lnet.network; fabric.storage and networks.storage for a "
                 f"storage fabric)")


@check("lustre.raid_stripe")
def raid_stripe(plan: Plan) -> Iterator[Diagnostic]:
    """A RAID 5/6 full stripe equals Lustre's 1 MiB RPC, so writes never read parity first
    (Lustre manual, 'Computing file system parameters for mkfs': RAID 6 of 6 or 10 disks)."""
    hardware = _hardware(plan)
    if hardware is None:
        return
    seen = set()
    for target in hardware.targets:
        stripe = target.stripe_kib
        if stripe is None or stripe == FULL_STRIPE_KIB or target.kind in seen:
            continue
        seen.add(target.kind)
        yield Diagnostic(
            "LUSTRE-RAID-STRIPE", f"{target.kind} {target.label}: {target.raid} of "
            f"{len(target.members)} drives has {target.data_drives:g} data drives x "
            f"{target.chunk_kib} KiB chunks = a {stripe} KiB full stripe, not Lustre's 1 MiB "
            f"RPC: writes that do not fill a stripe read its parity first (read-modify-write)",
            ("storage", "lustre", target.kind, "drives"), Severity.WARNING,
            hint="use 4 or 8 data drives (RAID 6 of 6 or 10), or a chunk that makes 1 MiB")


@check("lustre.target_redundancy")
def target_redundancy(plan: Plan) -> Iterator[Diagnostic]:
    """The MGT and MDTs survive a drive failure: losing them loses the whole file system."""
    lustre = plan.settings.storage.lustre
    if lustre is None:
        return
    for key in ("mgt", "mdt"):
        devices = getattr(lustre, key)
        if devices is not None and devices.raid == "raid0":
            yield Diagnostic(
                "LUSTRE-TARGET-REDUNDANCY", f"the {key.upper()} is RAID 0: one failed drive "
                f"loses every file's metadata", ("storage", "lustre", key, "raid"),
                Severity.WARNING, hint="RAID 1 for the MGT, RAID 10 for MDTs (Lustre manual)")
