"""Cabling verify: a fabric's discovery (`ibnetdiscover` output) against the plan's cables.

Every planned cable of the fabric is found, missing or miswired; every discovered link that
no planned cable explains is extra. A discovered node is the plan's device whose name its
NodeDescription holds: a switch's description is its name, or holds it as one of its words
(split at spaces, ';', ':' and '/'): 'ib-leaf-1;MQM9700/U1', or NVIDIA's managed switches'
'MF0;leaf01:MQM9700/U1'. A host adapter's is 'host port' ('dgx-001 ib0'). Where a host's
adapters keep the driver's description ('dgx-001 mlx5_0'), the host is known and the port
is not: its cables are still checked at the switch end, which names the port. A port the
plan knows by name (on any fabric) is judged by that name: a host's storage port plugged
where its compute port belongs is miswired, not the compute port.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Set
from functools import lru_cache
from itertools import chain, repeat
from typing import NamedTuple

from cluster_iac.base.runs import lookup
from cluster_iac.formats.ibnetdiscover import IbEnd, IbNode, Topology
from cluster_iac.plan import Plan
from cluster_iac.plan.physical import Cable
from cluster_iac.plan.subnet import infiniband_fabrics
from cluster_iac.reconcile.places import devices


class End(NamedTuple):
    """One end of a link in the plan's terms: a device and its port ('p7', 'ib0'; '' for a
    host port the discovery does not name)."""

    device: str
    port: str


class Mismatch(NamedTuple):
    """One difference: a 'missing', 'miswired' or 'extra' link, or an 'unseen' switch (or,
    in the Ethernet verify, any device).
    ``planned`` is the planned cable (None for an extra link or an unseen switch); ``found``
    the discovered links on its planned ends (a miswired cable: one or two), or the extra
    link itself; ``switch`` the unseen switch and ``cables`` how many of its cables are
    therefore missing (none of them is listed again)."""

    kind: str
    planned: Cable | None
    found: tuple[tuple[End, End], ...] = ()
    switch: str = ""
    cables: int = 0


_WORDS = re.compile(r"[\s;:/]+")
# What to do about a cable found missing, miswired or extra, whichever discovery saw it
# (ibnetdiscover, LLDP); each source adds its own "unseen" device.
CABLE_FIXES = {"missing": "plug in the cable by its label, both ends as planned",
               "miswired": "move the cable so that each end is in the port its label names",
               "extra": "remove the cable (the plan has none there)"}


def fabric_of(plan: Plan, discovered: Topology) -> str | None:
    """The InfiniBand fabric whose switches the discovery holds the most of, or None."""
    names = _seen(plan, discovered)
    counts = {network: sum(1 for name in plan.fabric_wiring[network].tier if name in names)
              for network in infiniband_fabrics(plan)}
    best = max(counts, key=counts.__getitem__, default=None)
    return best if best is not None and counts[best] else None


@lru_cache(maxsize=4)
def _known(plan: Plan) -> frozenset[str]:
    """Every device of every InfiniBand fabric of the plan, by name."""
    return frozenset(name for network in infiniband_fabrics(plan)
                     for name in plan.fabric_wiring[network].tier)


def _seen(plan: Plan, discovered: Topology) -> set[str]:
    """The plan's devices (or descriptions) the discovered nodes are, worked out once per
    discovery and plan (fabric_of and the unseen switches ask)."""
    known = _known(plan)
    key = ("devices", known)
    names: set[str] | None = discovered.memo.get(key)
    if names is None:
        discovered.memo[key] = names = {_device(node, known)
                                        for node in discovered.nodes.values()}
    return names


_SEPARATORS = frozenset(";:/ \t\n\r\x0b\x0c")  # a description's word ends at one (_WORDS)


def _device(node: IbNode, known: Set[str]) -> str:
    """The plan's device a discovered node is: its description where that is a known
    device, else the first of its words (split at spaces, ';', ':', '/') that is one
    ('MF0;leaf01:MQM9700/U1' is leaf01), else the description."""
    desc = node.description
    if desc in known or not known:
        return desc
    head = desc.partition(" ")[0]  # 'dgx-001 ib0': the first word, found without a pattern
    if head in known and _SEPARATORS.isdisjoint(head):
        return head
    return next((word for word in _WORDS.split(desc) if word in known), desc)


def _host_ports(plan: Plan) -> dict[str, set[str]]:
    """Every planned host's InfiniBand ports by name, on every fabric (the fabrics' links,
    build_fabric's: the cable table holds them as its first rows)."""
    ports: dict[str, set[str]] = {}
    links = plan.links
    for network in infiniband_fabrics(plan):
        tier = plan.fabric_wiring[network].tier
        for name, device, port in zip(links.network, links.a_device, links.a_port,
                                      strict=True):
            if name == network and tier.get(device) == "node":
                ports.setdefault(device, set()).add(port)
    return ports


def _shown(text: str) -> str:
    """A discovered name as it may be printed: one with control characters (which could
    move a terminal's cursor or forge a line) as Python's ascii() writes it."""
    return text if text.isprintable() else ascii(text)


class FabricCables:
    """The planned cables of one network, in the plan's order: the four columns matching
    reads, from the network builders' links (build_fabric's, so that a plan compiled that
    far is matched: reconcile/sources.py EARLY), and each whole cable (its id, its ends
    located) made only for the few a finding names (``row``), from the cable table
    (plan_cabling's), whose first rows are the links. The cable table also holds every
    power cord (720,000 rows at 100,000 GPUs, of which the compute fabric is 300,000): a
    Cable for each took a fifth of a full discovery's matching."""

    def __init__(self, plan: Plan, network: str) -> None:
        links = plan.links
        self.table = plan.cables
        self.picked = [i for i, name in enumerate(links.network) if name == network]
        self.a_device = lookup(links.a_device, self.picked)
        self.a_port = lookup(links.a_port, self.picked)
        self.b_device = lookup(links.b_device, self.picked)
        self.b_port = lookup(links.b_port, self.picked)

    def __len__(self) -> int:
        return len(self.picked)

    def row(self, i: int) -> Cable:
        """The ``i``-th cable of the network, as Cables.row makes it (the plan's cable table:
        plan_cabling's)."""
        return self.table.row(self.picked[i])


class Matching(NamedTuple):
    """A discovery matched to the planned cables: the fabric's cables, each found cable's
    discovered ends (cable index -> the two ends, as discovered), and the discovered links
    no planned cable is."""

    cables: FabricCables
    found: dict[int, tuple[IbEnd, IbEnd]]
    strays: list[tuple[End, End]]
    by_end: dict[End, int]


def match(plan: Plan, network: str, discovered: Topology) -> Matching:
    """Each discovered link of ``network`` matched to the planned cable it is, if any. Each
    discovered node's part of an end (a switch's device, a host adapter's whole end) is
    worked out once, and each link is tested inline: a 100,000-GPU fabric has 300,000
    links."""
    cables = FabricCables(plan, network)
    end_of = tuple.__new__  # End(...) without its Python __new__
    a_ends: list[End] = list(map(end_of, repeat(End),
                                 zip(cables.a_device, cables.a_port, strict=True)))
    b_ends: list[End] = list(map(end_of, repeat(End),
                                 zip(cables.b_device, cables.b_port, strict=True)))
    # each cable's A end, then its B end, to its index: the later cable wins an end twice
    index = range(len(a_ends))
    by_end = dict(zip(chain.from_iterable(zip(a_ends, b_ends, strict=True)),
                      chain.from_iterable(zip(index, index, strict=True)), strict=True))
    parts = _parts(plan, discovered)
    found: dict[int, tuple[IbEnd, IbEnd]] = {}
    strays: list[tuple[End, End]] = []
    cabled = by_end.get
    named = _PORT_NAMES.get
    for a, b in discovered.links.items():
        if not a < b:  # each link once, as Topology.pairs gives it
            continue
        device, whole = parts[a.node_id]
        here = whole or end_of(End, (device, named(a.port) or f"p{a.port}"))
        device, whole = parts[b.node_id]
        there = whole or end_of(End, (device, named(b.port) or f"p{b.port}"))
        at = cabled(here)  # the planned cable from this end, then from the other
        if at is not None:
            planned = b_ends[at] if a_ends[at] == here else a_ends[at]
            if not (there == planned or (there.port == "" and there.device == planned.device)):
                at = None
        if at is None and (at := cabled(there)) is not None:
            planned = b_ends[at] if a_ends[at] == there else a_ends[at]
            if not (here == planned or (here.port == "" and here.device == planned.device)):
                at = None
        if at is None:
            strays.append((here, there))
        else:
            found[at] = (a, b) if here.device == a_ends[at].device else (b, a)
    return Matching(cables, found, strays, by_end)


def rematched(before: Plan, plan: Plan, network: str, matching: Matching) -> Matching | None:
    """``matching`` (of ``before``) as match would make it of ``plan``, which a later pass
    compiled further: the same where ``plan``'s fabric has the same cables (ends, in the
    same rows) and its InfiniBand fabrics the same devices and tiers, all match reads of a
    plan; None otherwise. Each column compares by identity first (the later plan keeps the
    earlier one's strings): a few milliseconds where matching again took half a second at
    100,000 GPUs."""
    cables = FabricCables(plan, network)
    kept = matching.cables
    fabrics = infiniband_fabrics(plan)
    if (cables.picked == kept.picked and cables.a_device == kept.a_device
            and cables.a_port == kept.a_port and cables.b_device == kept.b_device
            and cables.b_port == kept.b_port and fabrics == infiniband_fabrics(before)
            and all(plan.fabric_wiring[name].tier == before.fabric_wiring[name].tier
                    for name in fabrics)
            and _same_host_ports(before, plan)):
        return matching._replace(cables=cables)
    return None


def _same_host_ports(before: Plan, plan: Plan) -> bool:
    """Whether the fabrics' host ports (_host_ports) are those of ``before``: the rows of
    every InfiniBand fabric's links the same."""
    names = set(infiniband_fabrics(plan))
    old, new = before.links, plan.links
    rows = [i for i, name in enumerate(new.network) if name in names]
    return (rows == [i for i, name in enumerate(old.network) if name in names]
            and all(lookup(getattr(new, column), rows) == lookup(getattr(old, column), rows)
                    for column in ("a_device", "a_port")))


_PORT_NAMES = {port: f"p{port}" for port in range(1, 257)}
"""A switch port's name in the plan's terms ('p7' is port 7), made once for the ports a
switch has (NDR switches have 64, or 128 split; a director more): a fabric's 600,000
discovered switch ends name only these."""


def _parts(plan: Plan, discovered: Topology) -> dict[str, tuple[str, End | None]]:
    """Each discovered node's part of its ends in the plan's terms, by node id, worked out
    once for all its links: (a switch's device, None: the port is the end's, 'p7'), or
    ('', a host adapter's whole end: one port). _host_ports holds every named port of every
    planned host, on any fabric: an adapter's port so named keeps its name (and so matches
    only its own cable); a name the plan does not give (the driver's 'mlx5_0') is ''."""
    known = _known(plan)
    ports = _host_ports(plan)
    end_of = tuple.__new__  # End(...) without its Python __new__
    parts: dict[str, tuple[str, End | None]] = {}
    for node_id, node in discovered.nodes.items():
        if node.kind == "Switch":
            parts[node_id] = (_shown(_device(node, known) or node_id), None)
            continue
        host, _, port = node.description.partition(" ")
        named = ports.get(host)
        if named is not None:
            parts[node_id] = ("", end_of(End, (host, port if port in named else "")))
        else:
            parts[node_id] = ("", End(_shown(node.description or node_id), ""))
    return parts


def verify(plan: Plan, network: str, discovered: Topology,
           matching: Matching | None = None) -> list[Mismatch]:
    """Every missing, miswired and extra link of ``network`` in ``discovered``, in the
    plan's cable order (missing and miswired), then extra links in discovery order;
    ``matching``: match()'s result for them, where the caller has it already."""
    cables, found, strays, by_end = matching or match(plan, network, discovered)
    miswired: dict[int, list[tuple[End, End]]] = {}
    extra: list[tuple[End, End]] = []
    for ends in strays:
        touched = [by_end[e] for e in ends if e in by_end and by_end[e] not in found]
        for i in touched:
            miswired.setdefault(i, []).append(ends)
        if not touched:
            extra.append(ends)
    unseen = _unseen_switches(plan, network, discovered)
    lost = _cables_of(unseen, cables)
    out = [Mismatch("unseen", None, switch=name, cables=count) for name, count in lost.items()]
    out += [Mismatch("miswired" if i in miswired else "missing", cables.row(i),
                     tuple(miswired.get(i, ())))
            for i in _not_found(len(cables), found)
            if cables.a_device[i] not in lost and cables.b_device[i] not in lost]
    return out + [Mismatch("extra", None, (ends,)) for ends in extra]


def agrees(plan: Plan, network: str, discovered: Topology, matching: Matching) -> bool:
    """Whether verify finds nothing: every planned cable found, no discovered link left
    over, no switch unseen. It reads the links and the fabric's wiring only (no cable's id,
    no device's place): a plan compiled through build_fabric answers it."""
    return (len(matching.found) == len(matching.cables) and not matching.strays
            and not _unseen_switches(plan, network, discovered))


def _cables_of(names: list[str], cables: FabricCables) -> dict[str, int]:
    """How many of ``cables`` each of ``names`` ends (a cable from a device to itself once),
    in one reading of the cables whatever the number of names."""
    counts = dict.fromkeys(names, 0)
    if counts:
        for a, b in zip(cables.a_device, cables.b_device, strict=True):
            if a in counts:
                counts[a] += 1
            if b != a and b in counts:
                counts[b] += 1
    return counts


def _not_found(count: int, found: Mapping[int, object]) -> Iterator[int]:
    """The indexes below ``count`` that ``found`` lacks, in order (none, at once, where every
    cable was found)."""
    return iter(()) if len(found) == count else (i for i in range(count) if i not in found)


def _unseen_switches(plan: Plan, network: str, discovered: Topology) -> list[str]:
    """The fabric's planned switches that no discovered node is, in the plan's order."""
    seen = _seen(plan, discovered)
    return [name for name, level in plan.fabric_wiring[network].tier.items()
            if level != "node" and name not in seen]


def discovered_guids(plan: Plan, network: str, discovered: Topology,
                     matching: Matching | None = None) -> tuple[dict[str, int], dict[str, int]]:
    """The real GUIDs of the plan's devices, from the cables found where they were
    planned: (host adapter 'host port' -> port GUID, device or adapter -> node GUID). An
    adapter is known by the switch port its cable lands on, so this holds even where the
    hosts' node descriptions are the driver's ('dgx-001 mlx5_0'). ``matching`` as verify's."""
    matching = matching or match(plan, network, discovered)
    ports: dict[str, int] = {}
    nodes: dict[str, int] = {}
    cables = matching.cables
    found_nodes, port_guids = discovered.nodes, discovered.port_guids
    for i, (a, b) in matching.found.items():
        for end, device, port in ((a, cables.a_device[i], cables.a_port[i]),
                                  (b, cables.b_device[i], cables.b_port[i])):
            node = found_nodes[end.node_id]
            if node.kind == "Switch":
                nodes[device] = node.guid
            else:
                adapter = f"{device} {port}"
                nodes[adapter] = node.guid
                ports[adapter] = port_guids.get(end, node.guid)
    return ports, nodes


def describe(plan: Plan, mismatch: Mismatch) -> str:
    """One line for a person: the kind, the cable's label and its planned ends located
    (row/rack/U device port), and what the discovery found on them."""
    where = devices(plan)  # made once per plan: a fabric's discovery may differ in thousands

    def located(device: str, port: str) -> str:
        d = where.get(device)
        if d is None and port == "" and " " in device:  # a planned host's port on another fabric
            host, _, named = device.partition(" ")
            d, device, port = (where.get(host), host, named) if host in where else (d, device, port)
        place = "?/?/?" if d is None else f"{d.row}/{d.rack}/{d.position or '-'}"
        return f"{place} {device} {port or '(port not named)'}"

    if mismatch.kind == "unseen":
        d = where.get(mismatch.switch)
        place = "" if d is None else f" (rack {d.rack} {d.position or '-'})"
        kind = "switch" if d is None or d.kind == "switch" else d.kind
        return (f"NOT-SEEN {kind} {mismatch.switch}{place} not seen: its {mismatch.cables} "
                f"cables are missing")
    cable = mismatch.planned
    text = mismatch.kind.upper()
    if cable is not None:
        text += (f" {cable.cable_id}: planned {located(cable.a_device, cable.a_port)} <-> "
                 f"{located(cable.b_device, cable.b_port)}")
    for n, (a, b) in enumerate(mismatch.found):
        text += ("; found " if cable is not None or n else " (no planned cable): found ")
        text += f"{located(*a)} <-> {located(*b)}"
    return text
