"""The expected InfiniBand fabric as an IBDM topology file and the IBNL system types it names:
the input of ibutils' IBDM readers (ibdmtr, ibdmchk, ibtopodiff, ibdiagnet -t) and of UFM's
Cable Validation Tool, made from a fabric's topology in ibnetdiscover's form.

The topology file (ibdm-topo-file(1)) is one section per system, its first line
'SYSTEM-TYPE SYSTEM-NAME', then one line a cabled port, 'LOCAL-PORT -> REM-SYS-TYPE
REM-SYS-NAME REM-PORT', up to a blank line. A cable is written in both ends' sections, so
each system's section lists all its cables. Every system type is defined by an .ibnl file
(ibnl(1)) of the same name, found through IBDM_IBNL_PATH:

- a switch is one switch node of N ports, front-panel ports P1..PN: type IB_SWITCH_<N>;
- a host is one single-port channel adapter per host port (the plan's adapters, as the
  ibnetdiscover export has them), each adapter's port 1 the host's port of that name
  ('ib0'): type IB_HOST_<ports joined by '_'>, e.g. IB_HOST_ib0_ib1, one type a layout.

Names are written only when the two formats can carry them: ibnl's NAME is
[][\\*/A-Za-z0-9_.:%@~]+ (no '-'), and the topology file is read word by word, so a system
name is letters, digits and '_.-' and a port name letters, digits and '_' and '.' (':' would
select a board modifier, '/' a node inside a system). A name outside those raises
IbdmNameError rather than being written.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable

from cluster_iac.formats.ibnetdiscover import IbEnd, IbNode, Topology

SYSTEM_NAME = re.compile(r"[A-Za-z0-9_.][A-Za-z0-9_.-]*")
PORT_NAME = re.compile(r"[A-Za-z0-9_.]+")
_NUMBERS = re.compile(r"(\d+)")


class IbdmNameError(ValueError):
    """A node description the IBDM files cannot carry: ``description`` is the node's, as the
    ibnetdiscover file quotes it; ``reason`` says what is wrong with it."""

    def __init__(self, description: str, reason: str) -> None:
        super().__init__(f"{description!r}: {reason}")
        self.description = description
        self.reason = reason


def natural(text: str) -> tuple[tuple[int, int | str], ...]:
    """A sort key that puts 'p2' before 'p10' and 'h200-9' before 'h200-10'."""
    return tuple((1, int(part)) if part.isdigit() else (0, part)
                 for part in _NUMBERS.split(text) if part)


def system_and_port(node: IbNode) -> tuple[str, str | None]:
    """(system name, host port name) of a node: a switch's description is its name (None:
    its ports are numbered), a host adapter's is 'host port'. IbdmNameError for a name the
    files cannot carry."""
    if node.kind == "Switch":
        system, port = node.description, None
    else:
        parts = node.description.split(" ")
        if len(parts) != 2:
            raise IbdmNameError(node.description, "a host adapter's description is not "
                                "'HOST PORT' (two words)")
        system, port = parts
        if not PORT_NAME.fullmatch(port):
            raise IbdmNameError(node.description, f"port name {port!r} has a character "
                                "other than letters, digits, '_' and '.'")
    if not SYSTEM_NAME.fullmatch(system):
        raise IbdmNameError(node.description, f"system name {system!r} has a character other "
                            "than letters, digits, '_', '.' and '-' (or starts with '-')")
    return system, port


def switch_type(ports: int) -> str:
    """The system type of a switch of ``ports`` ports."""
    return f"IB_SWITCH_{ports}"


def host_type(ports: Iterable[str]) -> str:
    """The system type of a host with these ports (in their order)."""
    return "IB_HOST_" + "_".join(ports)


def switch_ibnl(ports: int) -> str:
    """The .ibnl text of a switch of ``ports`` ports: node U1, port n on front-panel Pn."""
    name = switch_type(ports)
    lines = [f"TOPSYSTEM {name}", "", f"NODE SW {ports} {name} U1"]
    lines += [f"   {n} -> P{n}" for n in range(1, ports + 1)]
    return "\n".join(lines) + "\n"


def host_ibnl(ports: list[str]) -> str:
    """The .ibnl text of a host: one single-port adapter (U1, U2...) per port, in order."""
    lines = [f"TOPSYSTEM {host_type(ports)}"]
    for number, port in enumerate(ports, start=1):
        lines += ["", f"NODE CA 1 Adapter U{number}", f"   1 -> {port}"]
    return "\n".join(lines) + "\n"


def export(topology: Topology) -> tuple[str, dict[str, str]]:
    """(the topology file's text, {system type: its .ibnl text}) of one fabric. Systems are in
    natural order of their names, each section's ports in the system type's order."""
    systems: dict[str, str] = {}  # system name -> its type
    where: dict[str, tuple[str, str | None]] = {}  # node id -> (system, host port)
    host_ports: dict[str, list[str]] = defaultdict(list)
    switch_ports: dict[str, int] = {}
    for node_id, node in topology.nodes.items():
        system, port = system_and_port(node)
        where[node_id] = (system, port)
        if port is None:
            if system in switch_ports or system in host_ports:
                raise IbdmNameError(node.description, "two devices of the fabric have this name")
            switch_ports[system] = node.ports
        else:
            if system in switch_ports or port in host_ports[system]:
                raise IbdmNameError(node.description, "two devices of the fabric have this name")
            host_ports[system].append(port)
    types: dict[str, str] = {}
    for name, ports in switch_ports.items():
        systems[name] = switch_type(ports)
        types[systems[name]] = switch_ibnl(ports)
    for name, names in host_ports.items():
        names.sort(key=natural)
        systems[name] = host_type(names)
        types[systems[name]] = host_ibnl(names)

    def plug(end: IbEnd) -> tuple[str, str]:
        system, port = where[end.node_id]
        return system, port if port is not None else f"P{end.port}"

    cabled: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for a, b in topology.links.items():
        (system, port), (far, far_port) = plug(a), plug(b)
        cabled[system].append((port, f"{port} -> {systems[far]} {far} {far_port}"))
    sections = []
    for name in sorted(systems, key=natural):
        lines = [line for _, line in sorted(cabled[name], key=lambda p: natural(p[0]))]
        sections.append("\n".join([f"{systems[name]} {name}", *(f"   {x}" for x in lines)]))
    return "\n\n".join(sections) + "\n", dict(sorted(types.items()))
