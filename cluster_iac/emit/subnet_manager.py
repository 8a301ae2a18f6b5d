"""Subnet manager files for every InfiniBand fabric: the planned topology in ibnetdiscover's
format (which ibsim loads and which diffs against a live fabric's discovery), opensm.conf
for the master and the standbys, and partitions.conf.

Once the lock holds the delivered GUIDs (``cluster-iac reconcile --accept`` on an
ibnetdiscover file: 'guid' lines, plan/facts.py), partitions.conf lists the adapters' real
port GUIDs (when the lock holds every member's), and root-guids lists the top tier's node
GUIDs (when it holds every one), named by opensm.conf's root_guid_file.

Every setting is written with its reason as a comment above it. The values are OpenSM
3.3.23's option names (Debian 12's opensm; `opensm -c FILE` prints them all).
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from functools import partial
from itertools import compress

from cluster_iac.base.runs import lookup
from cluster_iac.emit.subnet_topology import Adapters, fabric_adapters, topology_chunks
from cluster_iac.formats import ibnetdiscover
from cluster_iac.formats.chunks import Chunks, whole
from cluster_iac.formats.ibnetdiscover import CA_GUID_BASE
from cluster_iac.plan import Plan
from cluster_iac.plan.facts import NODE
from cluster_iac.plan.subnet import (
    adapter_keys,
    delivered_count,
    fabric_rows,
    fabric_stretches,
    infiniband_fabrics,
    routing,
    sm_hosts,
)

MASTER_PRIORITY = 15
"""sm_priority of the master: the highest OpenSM takes (0-15), so it wins every election
(IBA vol. 1, 14.4.1: the SM with the higher priority, then the lower GUID, is master)."""
STANDBY_PRIORITY = 14
"""sm_priority of the standbys: below the master, so a standby takes over only when the
master stops answering its SMInfo polls, and hands back when the master returns."""
DEFAULT_PKEY = 0x7FFF
"""The default partition's key with full membership (IBA vol. 1, 10.9.1.2)."""


def render(plan: Plan) -> dict[str, str]:
    """opensm/<fabric>/ for every InfiniBand fabric: topology, opensm.conf (and
    opensm-standby.conf with standbys), partitions.conf."""
    return whole(render_chunks(plan))


def render_chunks(plan: Plan) -> dict[str, str | Chunks]:
    """The files, each fabric's topology as Chunks (40 MB at 100,000 GPUs)."""
    files: dict[str, str | Chunks] = {}
    for network in infiniband_fabrics(plan):
        folder = f"opensm/{network}"
        rows = fabric_rows(plan, network)  # the header's count and the topology's records
        ends = member_ends(plan, network)  # found once for both
        members = partition_members(plan, network, ends)
        real = locked_port_guids(plan, network, members, ends)
        # partitions.conf's placeholders are the topology's: hashed once for both
        adapters = (fabric_adapters(plan, network, rows) if real is None and members
                    else None)
        files[f"{folder}/topology.ibnetdiscover"] = Chunks(
            partial(topology_chunks, plan, network, _header(plan, network, rows), rows,
                    adapters))
        hosts = sm_hosts(plan, network)
        roots = root_guids(plan, network)
        files[f"{folder}/opensm.conf"] = opensm_conf(plan, network, master=True,
                                                     roots=bool(roots))
        if hosts[1:]:
            files[f"{folder}/opensm-standby.conf"] = opensm_conf(plan, network, master=False,
                                                                 roots=bool(roots))
        files[f"{folder}/partitions.conf"] = partitions_conf(
            plan, network,
            real if real is not None else placeholder_guids(plan, network, members, adapters),
            placeholders=real is None)
        if roots:
            files[f"{folder}/root-guids"] = "".join(f"0x{guid:016x}\n" for guid in roots)
    return files


def locked_port_guids(plan: Plan, network: str, members: list[str] | None = None,
                      ends: Ends | None = None) -> dict[str, int] | None:
    """'host port' -> the real port GUID of every adapter a partition lists (``members``,
    partition_members where the caller has them, with their ``ends``), when the lock holds
    them all (reconcile --accept); None while one is missing (placeholders then), as before
    the lock holds any. The lock's keys, (host, port), are paired from the ends' columns
    where given (at 100,000 adapters 0.03 s, where splitting each name took 0.09 s)."""
    if members is None:
        ends = member_ends(plan, network)
        members = partition_members(plan, network, ends)
    guids = plan.facts.guids if plan.facts is not None else {}
    if not members or not guids:
        return None
    found = list(map(guids.get, zip(*ends, strict=True) if ends is not None
                     else adapter_keys(members)))
    if None in found:
        return None
    return dict(zip(members, found, strict=True))


def root_guids(plan: Plan, network: str) -> list[int]:
    """The node GUIDs of the fabric's top tier (core, else spine, else leaf) in plan order,
    when the lock holds every one; else none. OpenSM's ftree and updn engines take the
    fabric's roots from root_guid_file instead of guessing them (opensm(8),
    --root_guid_file)."""
    tier = plan.fabric_wiring[network].tier
    top = next((t for t in ("core", "spine", "leaf") if t in tier.values()), "")
    guids = plan.facts.guids if plan.facts is not None else {}
    found = [guids.get((name, NODE)) for name, level in tier.items() if level == top]
    return [] if not found or None in found else [g for g in found if g is not None]


def _comment(text: str) -> str:
    """A comment, wrapped at 88 columns; a line break in the text would start a setting,
    so it is refused."""
    if "\n" in text or "\r" in text:
        raise ValueError(f"{text!r} cannot be written in a comment")
    return "\n".join(f"# {line}" for line in textwrap.wrap(text, 86)) if text else "#"


def _header(plan: Plan, network: str,
            rows: tuple[list[int], list[int]] | None = None) -> tuple[str, ...]:
    held, total = delivered_count(plan, network, rows)
    guids: tuple[str, ...]
    if held == total:
        guids = ("GUIDs are the delivered ones, as the lock holds them (reconcile --accept).",)
    elif not held:
        guids = ("GUIDS ARE PLACEHOLDERS (locally administered, 0x02 in the first octet): real "
                 "ones",
                 "exist only on delivered hardware.")
    else:
        guids = (f"GUIDs: {held} of the {total} nodes' are the delivered ones the lock holds "
                 "(reconcile --accept);",
                 "THE OTHER NODES' GUIDS ARE PLACEHOLDERS (locally administered, 0x02 in the "
                 "first octet).")
    return (
        f"The {network} fabric of {plan.cluster.name} as planned (cluster-iac): "
        "ibnetdiscover's format.",
        "Node descriptions are the plan's device names ('host port' for a host adapter);",
        "port numbers are the plan's ports ('p7' is port 7; a host port is a one-port adapter).",
        *guids,
        "After the crew has cabled the fabric, run 'ibnetdiscover > discovered.txt' on a host",
        "of the fabric and 'cluster-iac reconcile SPEC discovered.txt' to compare it with this",
        "plan ('--accept' keeps the delivered GUIDs in the lock; the next render writes them",
        "here and in partitions.conf and root-guids). ibsim loads this file as it is:",
        "'ibsim -s topology.ibnetdiscover'.",
    )


def opensm_conf(plan: Plan, network: str, *, master: bool, roots: bool = False) -> str:
    """opensm.conf of the master (``master``) or of the standbys."""
    hosts = sm_hosts(plan, network)
    route = routing(plan, network)
    if hosts:
        who = (f"runs on {hosts[0]} (the master)" if master
               else f"runs on the standbys: {', '.join(hosts[1:])}")
    else:
        who = (f"is for the master; no host is declared to run it (fabric.{network}."
               "subnet_manager.hosts): install it on the host that you choose")
    priority = MASTER_PRIORITY if master else STANDBY_PRIORITY
    lines = [
        _comment(f"OpenSM for the {network} fabric of {plan.cluster.name} (cluster-iac): "
                 f"this file {who}."),
        _comment("Install as /etc/opensm/opensm.conf; every setting has its reason above it."),
        "",
        *_setting(f"routing engine: {route.reason}. OpenSM falls back to min-hop routing "
                  "when the engine fails on the fabric (ftree logs ERR AB0D) and still says "
                  "SUBNET UP: check its log for 'ERR'.", "routing_engine", route.engine),
        *_setting(("the master: " if master else "a standby: ")
                  + (f"{MASTER_PRIORITY} is the highest priority, so this SM wins every "
                     f"election; standbys run at {STANDBY_PRIORITY}" if master else
                     f"below the master's {MASTER_PRIORITY}: this SM takes over only when "
                     "the master stops answering, and hands back when it returns"),
                  "sm_priority", priority),
        *_setting("a standby polls the master every 10 s and takes over after 4 missed "
                  "polls (OpenSM's defaults, written so a site sees what failover costs)",
                  "sminfo_polling_timeout", 10000),
        *_setting("", "polling_retry_number", 4),
        *_setting("one LID per port: the routing engine gives each destination one path "
                  "per source; a higher LMC multiplies LIDs (48K unicast in a subnet) for "
                  "multipathing that NCCL and MPI over RC queue pairs do not use",
                  "lmc", 0),
        *_setting("a light sweep every 10 s finds a port change whose trap was lost; a "
                  "trap starts a sweep at once", "sweep_interval", 10),
        *_setting("LIDs stay as they were across SM restarts and failovers (the guid2lid "
                  "cache), so running jobs keep their addresses", "reassign_lids", "FALSE"),
        *_setting("where the partitions are (partitions.conf beside this file)",
                  "partition_config_file", "/etc/opensm/partitions.conf"),
        *(_setting("the fabric's roots, the top tier's switches by their delivered node "
                   "GUIDs (root-guids beside this file, from the lock)", "root_guid_file",
                   "/etc/opensm/root-guids") if roots else ()),
        *_setting("errors and informational messages (SUBNET UP, the routing engine's "
                  "result): the lines a check reads; verbose levels slow a large fabric's "
                  "sweeps", "log_flags", "0x03"),
        *_setting("the log the check reads", "log_file", "/var/log/opensm.log"),
        *_setting("MB: OpenSM truncates the log at this size, so a flapping port cannot "
                  "fill /var", "log_max_size", 1024),
        *_setting("keep the log across restarts (the history of a failover)",
                  "accum_log_file", "TRUE"),
    ]
    return "\n".join(lines) + "\n"


def _setting(reason: str, key: str, value: object) -> list[str]:
    return ([_comment(reason)] if reason else []) + [f"{key} {value}"]


def partitions_conf(plan: Plan, network: str, guids: Mapping[str, int], *,
                    placeholders: bool) -> str:
    """The default partition (every port a full member, IPoIB on it), and one partition per
    declared partition key whose members are the adapters of the Slurm partition's nodes
    (by port GUID: ``guids``, adapter description -> GUID)."""
    lines = [
        _comment(f"Partitions of the {network} fabric of {plan.cluster.name} (cluster-iac)."),
        _comment("Install as /etc/opensm/partitions.conf on every host that runs OpenSM."),
        "",
        _comment(f"The default partition (P_Key 0x{DEFAULT_PKEY:04x}): every port a full "
                 "member, so every host reaches every other and the SM; 'ipoib' creates its "
                 "IPoIB broadcast group"),
        f"Default=0x{DEFAULT_PKEY:04x}, ipoib, defmember=full : ALL, ALL_SWITCHES=full, "
        "SELF=full;",
    ]
    keys = _partition_keys(plan, network)
    if keys and placeholders:
        lines += ["", _comment(
            "THE GUIDS BELOW ARE PLACEHOLDERS (those of topology.ibnetdiscover): after the "
            "fabric is cabled, 'ibnetdiscover > discovered.txt' and 'cluster-iac reconcile "
            "SPEC discovered.txt --accept' keeps the adapters' real port GUIDs in the lock, "
            "and the next render writes them here.")]
    adapters: dict[str, list[str]] = {}
    for description in guids:
        adapters.setdefault(description.partition(" ")[0], []).append(description)
    members = {part.name: part.nodes for part in plan.partitions}
    for name, key in sorted(keys.items(), key=lambda item: item[1]):
        ports = [guids[a] for host in members[name] for a in adapters.get(host, ())]
        lines += ["", _comment(f"Slurm partition {name}: the {len(ports)} adapters of its "
                               f"nodes on this fabric, full members; 'ipoib' gives it its "
                               "own IPoIB broadcast group")]
        lines.append(f"{name}=0x{key:04x}, ipoib, defmember=full :")
        lines += [f"    {', '.join(row)}{';' if end >= len(ports) else ','}"
                  for end, row in _rows([f"0x{guid:016x}" for guid in ports], 4)]
        if not ports:
            lines[-1] += ";"
    return "\n".join(lines) + "\n"


def placeholder_guids(plan: Plan, network: str, members: list[str] | None = None,
                      adapters: Adapters | None = None) -> dict[str, int]:
    """The placeholder port GUID of each adapter a partition key lists (``members``,
    partition_members where the caller has them), in plan order, so that partitions.conf
    lists a host's adapters in that order (a set's order, as before, followed the hash seed):
    those of the planned topology, ibnetdiscover.placeholder_guid of 'host port', + 1 (made
    in one pass, ibnetdiscover.placeholder_guids), or looked up in ``adapters`` (the
    fabric's, fabric_adapters) where the caller has hashed them for the topology."""
    names = list(dict.fromkeys(partition_members(plan, network) if members is None
                               else members))
    if adapters is None:
        guids = ibnetdiscover.placeholder_guids(names, CA_GUID_BASE)
    else:
        guids = list(lookup(dict(zip(*adapters, strict=True)), names))
    return {name: guid + 1 for name, guid in zip(names, guids, strict=True)}


def partition_members(plan: Plan, network: str, ends: Ends | None = None) -> list[str]:
    """The host adapters ('host port') that a declared partition key lists, in plan order;
    ``ends`` their member_ends, where the caller has them."""
    devices, ports = member_ends(plan, network) if ends is None else ends
    return [f"{device} {port}" for device, port in zip(devices, ports, strict=True)]


Ends = tuple[list[str], list[str]]
"""The host and the port of each of some adapters, as two columns (member_ends)."""


def member_ends(plan: Plan, network: str) -> Ends:
    """The host and the port of each adapter a declared partition key lists, in plan order
    (partition_members' adapters, as the link table's columns hold them)."""
    keys = _partition_keys(plan, network)
    if not keys:
        return [], []
    hosts = {host for part in plan.partitions if part.name in keys for host in part.nodes}
    a_device, a_port = plan.links.a_device, plan.links.a_port
    devices: list[str] = []
    ports: list[str] = []
    for start, stop in fabric_stretches(plan, network):
        inside = list(map(hosts.__contains__, a_device[start:stop]))
        devices += compress(a_device[start:stop], inside)
        ports += compress(a_port[start:stop], inside)
    return devices, ports


def _rows(items: list[str], width: int) -> list[tuple[int, list[str]]]:
    """``items`` in rows of ``width``, each with the index just past it."""
    return [(i + width, items[i:i + width]) for i in range(0, len(items), width)]


def _partition_keys(plan: Plan, network: str) -> dict[str, int]:
    config = getattr(plan.settings.fabric, network, None)
    manager = getattr(config, "subnet_manager", None)
    return dict(manager.partition_keys) if manager is not None else {}
