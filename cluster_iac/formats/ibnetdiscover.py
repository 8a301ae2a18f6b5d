"""The ibnetdiscover topology format, both ways: written from a planned fabric (which the
ibsim simulator loads, and which diffs against a live fabric's discovery), and read back
from a live or simulated fabric's `ibnetdiscover` output (cabling verify).

The format (infiniband-diags' ibnetdiscover, which ibsim's parser also reads): one record
per node, a blank line between records::

    switchguid=0x200000000000001(200000000000001)
    Switch	64 "S-0200000000000001"		# "ib-leaf-1" enhanced port 0 lid 0 lmc 0
    [1]	"H-0201000000000002"[1](201000000000003)		# "dgx-001 ib0"
    [33]	"S-0200000000000003"[1]		# "ib-spine-1"

    caguid=0x201000000000002
    Ca	1 "H-0201000000000002"		# "dgx-001 ib0"
    [1](201000000000003)	"S-0200000000000001"[1]		# "ib-leaf-1"

The quoted id after the node type names the node within the file; the quoted text after
'#' is the node's NodeDescription, which is what a person reads (a switch's host name, a
host's "hostname device").
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

SWITCH_GUID_BASE = 0x0200_0000_0000_0000
"""Placeholder node GUIDs of planned switches: EUI-64 values with the locally administered
bit (0x02 in the first octet) set, which no vendor's burned-in GUID has, so a placeholder
can never be mistaken for (or collide with) a delivered device's GUID."""
CA_GUID_BASE = 0x0201_0000_0000_0000
"""Placeholder node GUIDs of planned host channel adapters (each node GUID even, its port
GUID the next odd number), locally administered as SWITCH_GUID_BASE."""


def placeholder_guid(name: str, base: int) -> int:
    """A planned device's placeholder GUID: ``base`` and 48 bits of the BLAKE2b hash of its
    name, even (an adapter's port GUID is the next number). From the name alone, so adding a
    scalable unit changes no existing device's GUID; two names that hash alike (at 100,000
    adapters about one chance in 50,000 per fabric) are refused by check_guids."""
    digest = hashlib.blake2b(name.encode(), digest_size=6).digest()
    return base | (int.from_bytes(digest, "big") & ~1)


def placeholder_guids(names: Iterable[str], base: int) -> list[int]:
    """placeholder_guid of each name, in order (each hash a copy of one made with its
    digest size: the parameters are read once, not once a name)."""
    start = hashlib.blake2b(digest_size=6)
    guids = []
    for name in names:
        digest = start.copy()
        digest.update(name.encode())
        guids.append(base | (int.from_bytes(digest.digest(), "big") & ~1))
    return guids


def check_guids(guids: dict[str, int]) -> None:
    """ValueError when two names have one placeholder GUID."""
    if len(set(guids.values())) < len(guids):
        seen: dict[int, str] = {}
        for name, guid in guids.items():
            if guid in seen:
                raise ValueError(f"{seen[guid]!r} and {name!r} hash to one placeholder GUID "
                                 f"0x{guid:016x}: rename one")
            seen[guid] = name
NODE_DESCRIPTION_BYTES = 64
"""NodeDescription is a 64-byte field of the NodeDescription attribute (InfiniBand
Architecture Specification vol. 1, 14.2.5.2): a longer one is cut by the device."""


class IbNode(NamedTuple):
    """One node of a topology: a switch or a host channel adapter (one HCA per host port)."""

    kind: str  # 'Switch' | 'Ca'
    node_id: str  # the id that names it within the file ('S-<guid>', 'H-<guid>')
    guid: int  # node GUID
    ports: int  # physical ports
    description: str  # NodeDescription: the plan's device name ('host port' for an HCA)


class IbEnd(NamedTuple):
    """One end of a link: a node's id and a port number."""

    node_id: str
    port: int


@dataclass
class Topology:
    """Nodes and the links between their ports, as a topology file holds them."""

    nodes: dict[str, IbNode] = field(default_factory=dict)  # node id -> node
    links: dict[IbEnd, IbEnd] = field(default_factory=dict)  # each end -> the other
    # a host adapter's port -> its port GUID, where the file gives one
    port_guids: dict[IbEnd, int] = field(default_factory=dict)
    # what readers work out from the nodes once, for the next reader (cabling verify's
    # device names: three readers of 100,000 nodes in one reconcile); not compared
    memo: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)

    def add_link(self, a: IbEnd, b: IbEnd) -> None:
        """Cable ``a`` to ``b``; a port cabled twice raises ValueError."""
        for end in (a, b):
            if end in self.links:
                raise ValueError(f"port {end.port} of {self.nodes[end.node_id].description} "
                                 f"is cabled twice")
        self.links[a] = b
        self.links[b] = a

    def pairs(self) -> Iterator[tuple[IbEnd, IbEnd]]:
        """Each link once, (lower end, higher end)."""
        return ((a, b) for a, b in self.links.items() if a < b)


def port_guid(node: IbNode) -> int:
    """An HCA port's GUID as the placeholders make it (the node GUID + 1)."""
    return node.guid + 1


def _port_guid(topology: Topology, node: IbNode, port: int) -> int:
    """A host adapter port's GUID: the topology's, else the placeholders' (port_guid)."""
    return topology.port_guids.get(IbEnd(node.node_id, port), port_guid(node))


def check_description(text: str) -> None:
    """A NodeDescription the file can quote: a quote or line break would end the field (and
    could add a record), so such a name is refused (ValueError) rather than written."""
    if any(c in text for c in '"\n\r#') or not text.isprintable():
        raise ValueError(f"{text!r} cannot be an InfiniBand node description")


def check_descriptions(texts: Iterable[str]) -> None:
    """check_description of each text, all checked at once (one search of their joined text,
    which holds a refused character where one of them does); the first refused one raises."""
    texts = list(texts)
    joined = "".join(texts)
    if any(c in joined for c in '"\n\r#') or not joined.isprintable():
        for text in texts:
            check_description(text)


def _description(text: str) -> str:
    check_description(text)
    return text


def topology_text(topology: Topology, header: Iterable[str] = ()) -> str:
    """The topology in ibnetdiscover's format, nodes in the order they were added: ibsim
    attaches its first client (the subnet manager, unless SIM_HOST names another node) at
    the first node of the file."""
    lines = [f"# {line}" if line else "#" for line in header]
    nodes = topology.nodes
    for node in nodes.values():
        lines.append("")
        desc = _description(node.description)
        if node.kind == "Switch":
            lines.append(f"switchguid=0x{node.guid:x}({node.guid:x})")
            lines.append(f'Switch\t{node.ports} "{node.node_id}"\t\t# "{desc}" enhanced port 0 '
                         f"lid 0 lmc 0")
        else:
            lines.append(f"caguid=0x{node.guid:x}")
            lines.append(f'Ca\t{node.ports} "{node.node_id}"\t\t# "{desc}"')
        for port in range(1, node.ports + 1):
            peer = topology.links.get(IbEnd(node.node_id, port))
            if peer is None:
                continue
            other = nodes[peer.node_id]
            own = f"({_port_guid(topology, node, port):x})" if node.kind == "Ca" else ""
            theirs = (f"({_port_guid(topology, other, peer.port):x})" if other.kind == "Ca"
                      else "")
            lines.append(f'[{port}]{own}\t"{other.node_id}"[{peer.port}]{theirs}\t\t'
                         f'# "{_description(other.description)}"')
    return "\n".join(lines) + "\n"


_HEADER = re.compile(r'^(Switch|Ca|Rt)\s+(\d+)\s+"([^"]*)"\s*(?:#\s*"([^"]*)")?')
_PORT = re.compile(r'^\[(\d+)\](?:\(([0-9a-fA-F]+)\))?(?:\[ext \d+\])?\s+"([^"]*)"\[(\d+)\]')
_GUID = re.compile(r"^(?:switchguid|caguid|rtguid)=0x([0-9a-fA-F]+)")
_ID_KEYS = ("vendid=", "devid=", "sysimgguid=")
_HEADS = frozenset("SCR")  # a node record's first character: Switch, Ca, Rt


class TopologyError(ValueError):
    """A topology file that is not ibnetdiscover's format, with the line that is not."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.reason = message


def parse(text: str) -> Topology:
    """Read an ibnetdiscover output (or a file this module wrote): record by record where
    every line is as ibnetdiscover prints it (_parse_records), else line by line
    (parse_lines, which says where a line is not in the format)."""
    return _parse_records(text) or parse_lines(text)


_RECORD = re.compile(r"(?:vendid=0x[0-9a-fA-F]+\ndevid=0x[0-9a-fA-F]+\n"
                     r"sysimgguid=0x[0-9a-fA-F]+\n)?"
                     r"(?:switchguid|caguid)=0x([0-9a-fA-F]+)(?:\([0-9a-fA-F]+\))?\n"
                     r'(Switch|Ca)\t(\d+) "([^"]*)"\t\t# "([^"]*)"[^\n]*\n')
_PORT_LINES = re.compile(r'^\[(\d+)\](?:\(([0-9a-fA-F]+)\))?[ \t]+"([^"]*)"\[(\d+)\][^\n]*\n',
                         re.MULTILINE)
_PORT_RUN = re.compile(r"(?:\[[^\n]*\n)*")


def _parse_records(text: str) -> Topology | None:
    """parse_lines' topology of a text whose every line is as ibnetdiscover prints it
    (comments only before the first record; each record its vendid, devid and sysimgguid
    lines or none, its GUID line, its header with a description, then its port lines with
    no '[ext N]'; records apart by blank lines; the last line ended), read a record at a
    time: its header by one pattern, all its port lines by another (1.2 million lines at
    100,000 GPUs, a Python step each, were most of the time). None for any other text,
    which parse_lines reads. tests/test_ibnetdiscover_parse.py holds the two to one
    topology."""
    topology = Topology()
    nodes, port_guids, links = topology.nodes, topology.port_guids, topology.links
    peers: list[str] = []
    end_of = node_of = tuple.__new__  # IbEnd(...), IbNode(...) without their Python __new__
    record, run, port_lines = _RECORD.match, _PORT_RUN.match, _PORT_LINES.findall
    pos, size = 0, len(text)
    while text.startswith("#", pos):
        pos = text.find("\n", pos) + 1
        if pos == 0:
            return None
    while pos < size:
        if text[pos] == "\n":
            pos += 1
            continue
        found = record(text, pos)
        if found is None:
            return None
        guid, kind, ports, node_id, desc = found.groups()
        nodes[node_id] = node_of(IbNode, (kind, node_id, int(guid, 16), int(ports), desc))
        start = found.end()
        lines = run(text, start)  # always a match (of no line, where the record has none)
        pos = start if lines is None else lines.end()
        rows = port_lines(text, start, pos)
        if len(rows) != text.count("\n", start, pos):  # a line the pattern does not take
            return None
        for port, guid_text, peer, peer_port in rows:
            end = end_of(IbEnd, (node_id, int(port)))
            if guid_text:
                port_guids[end] = int(guid_text, 16)
            peers.append(peer)
            if end not in links:
                other = end_of(IbEnd, (peer, int(peer_port)))
                if other not in links:
                    links[end] = other
                    links[other] = end
    _add_peers(nodes, peers)
    return topology


def _add_peers(nodes: dict[str, IbNode], peers: list[str]) -> None:
    """The peers with no record of their own (a partial discovery), in the order read, each
    a node with an empty description."""
    if not nodes.keys() >= set(peers):
        for peer in peers:
            if peer not in nodes:
                nodes[peer] = IbNode("", peer, 0, 0, "")


def parse_lines(text: str) -> Topology:
    """Read an ibnetdiscover output (or a file this module wrote). Every link is read from
    both ends' records, and made where it is first read: read again from its other end, or
    contradicted by another record (the first read wins), one of its ends is cabled already.
    An end that names a node with no record of its own (a partial discovery) is kept with
    an empty description. A port line is told by its first character before any pattern is
    tried, and the other lines by theirs: a 100,000-GPU fabric's discovery is 1.2 million
    lines, read in this one pass (the links made as their lines are read, not from a list
    of every line's two ends gone through again)."""
    topology = Topology()
    nodes, port_guids, links = topology.nodes, topology.port_guids, topology.links
    guid = 0
    current: str | None = None
    peers: list[str] = []  # each port line's peer node, in the order read
    peer_of, port_line = peers.append, _PORT.match
    end_of = node_of = tuple.__new__  # IbEnd(...), IbNode(...) without their Python __new__
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line[0] == "#":
            current = None if not line else current
            continue
        # port lines first: most lines of a fabric are
        if line[0] == "[" and (found := port_line(line)):
            if current is None:
                raise TopologyError(number, "a port line outside a node record")
            port, guid_text, peer, peer_port = found.groups()
            end = end_of(IbEnd, (current, int(port)))
            if guid_text:
                port_guids[end] = int(guid_text, 16)
            peer_of(peer)
            if end not in links:
                other = end_of(IbEnd, (peer, int(peer_port)))
                if other not in links:
                    links[end] = other
                    links[other] = end
        elif line.startswith(_ID_KEYS):
            continue
        elif line[0] in _HEADS and (found := _HEADER.match(line)):  # not a GUID line's
            kind, ports, node_id, desc = found.groups()
            nodes[node_id] = node_of(IbNode, ("Ca" if kind == "Ca" else kind, node_id, guid,
                                              int(ports), desc or ""))
            current = node_id
        elif found := _GUID.match(line):
            guid = int(found.group(1), 16)
        else:
            raise TopologyError(number, f"not a line of ibnetdiscover's format: {raw[:80]!r}")
    _add_peers(nodes, peers)  # a partial discovery: the peers with no record
    return topology
