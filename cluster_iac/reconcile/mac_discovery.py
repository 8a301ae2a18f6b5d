"""MAC addresses from discovery, checked against the plan as a vendor manifest's are
(reconcile/macs.py) before ``cluster-iac macs import`` keeps them in the lock.

``macs import`` tells each file's kind by its content (``import_any``):

- **``ip -j link``** run on a node (iproute2's JSON: a list of links). The file's name says
  whose NICs they are: ``<hostname>.ip-link.json``, or ``<serial>.ip-link.json`` with a serial
  the lock holds (a ``serial`` line, accepted from the node's Redfish ComputerSystem). The MAC
  of the interface the spec names for the management network (``networks.management.
  interface``) is that host's management MAC. A node's own view says nothing of where the NIC
  is cabled: that is what the switch's LLDP table says. (A BMC's MAC is not in it: the BMC
  is another computer.)
- **an access switch's LLDP neighbour table** (``lldpcli show neighbors -f json`` on the
  switch, as ``cluster-iac cabling verify`` reads it, formats/lldpcli.py): the switch is the
  one the file's ``show chassis`` output names, else the file's name (``<switch>.lldp.json``).
  Each neighbour heard on a planned access port names itself (its system name: the hostname
  its lldpd sends) and its port; its MAC is the port id when that is sent as a MAC (subtype
  ``mac``: lldpd on Linux sends a port without an alias so, and the port's MAC is the NIC's,
  the one DHCP sees). The chassis id is not used: lldpd takes it from whichever interface of
  the chassis it likes (tests/data/lldp: gpu-01's chassis id is not its eth0's MAC). A
  neighbour that sends its port by name (a switch's ``mgmt0`` with an alias) gives no MAC and
  is passed over; so are the neighbours on the switch's planned switch-to-switch ports (its
  uplinks, a pair's peer link): switches, not NICs to reserve an address for.

Every problem is located (file:line:col) and stops the import as a whole, as a manifest's:
a device the plan does not have (MAC-UNKNOWN-HOST: a file name that is no planned host or
held serial, a neighbour's system name, a table of no planned management or BMC switch; an
aggregation switch's table holds no NIC and gives nothing), a node without
the planned interface (MAC-NO-NIC), a neighbour on a port the plan gives another device or
none (MAC-WRONG-PORT, naming the port and the device planned there), one MAC twice or the
lock's for another device (MAC-DUPLICATE), and what is not the format (MAC-SYNTAX).
"""

from __future__ import annotations

import json
import re
from pathlib import PurePath

from cluster_iac.base.errors import Diagnostic
from cluster_iac.compile.build_management import NETWORKS, access_positions
from cluster_iac.formats import lldpcli
from cluster_iac.plan import Plan
from cluster_iac.reconcile.macs import Row, import_manifest, parse_mac

_IFNAME = re.compile(r'"ifname"\s*:\s*"')
_ADDRESS = re.compile(r'"address"\s*:\s*"')


def import_any(plan: Plan, text: str, file: str) -> tuple[list[Row], list[Diagnostic]]:
    """The rows of a manifest (CSV), an ``ip -j link`` output or an LLDP table, checked."""
    if lldpcli.detect(text):
        return import_lldp(plan, text, file)
    if text.lstrip().startswith("["):
        return import_ip_link(plan, text, file)
    return import_manifest(plan, text, file)


class _Found:
    """One discovery's rows and problems, each problem at its place in the file."""

    def __init__(self, plan: Plan, text: str, file: str) -> None:
        self.text, self.file = text, file
        self.lines = text.splitlines()
        self.rows: list[Row] = []
        self.problems: list[Diagnostic] = []
        self.seen: dict[str, int] = {}
        self.held = {entry.value[0]: entry.key[2] for network in NETWORKS
                     for entry in plan.lock.of_kind("mac", network)}

    def error(self, code: str, message: str, line: int, column: int, hint: str) -> None:
        excerpt = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        self.problems.append(Diagnostic(code, message, line=line, column=column,
                                        file=self.file, excerpt=excerpt[:400], hint=hint))

    def at(self, offset: int) -> tuple[int, int]:
        """(line, column) of a character offset, both from 1."""
        line = self.text.count("\n", 0, offset) + 1
        return line, offset - (self.text.rfind("\n", 0, offset) + 1) + 1

    def keep(self, network: str, device: str, mac: str, line: int, column: int) -> None:
        """A MAC checked against the ones seen in this file and the lock's."""
        if mac in self.seen:
            self.error("MAC-DUPLICATE", f"MAC {mac} is seen twice (line {self.seen[mac]} and "
                       "here)", line, column, "each NIC has its own MAC: one of them is "
                       "misreported, or two devices share a cloned MAC")
        elif self.held.get(mac, device) != device:
            self.error("MAC-DUPLICATE", f"MAC {mac} of {device} is already in the lock for "
                       f"{self.held[mac]}", line, column,
                       "remove the old line from the lock if the NIC moved")
        else:
            self.seen[mac] = line
            self.rows.append(Row(network, device, mac, line))

    def result(self) -> tuple[list[Row], list[Diagnostic]]:
        return (self.rows if not self.problems else []), self.problems


def import_ip_link(plan: Plan, text: str, file: str) -> tuple[list[Row], list[Diagnostic]]:
    """The management MAC of the node the file is named after, from its ``ip -j link``."""
    found = _Found(plan, text, file)
    name = PurePath(file).name.split(".")[0]
    ipnet = plan.settings.networks.management
    planned = {device for network, device, *_ in access_positions(plan)
               if network == "management"}
    serials = {entry.value[0]: entry.key[2] for entry in plan.lock.of_kind("serial", "")}
    host = name if name in planned else serials.get(name)
    if ipnet is None or host not in planned:
        found.error("MAC-UNKNOWN-HOST", f"{name!r} (the file's name) is no host the plan cables "
                    "to a management access port, nor a serial the lock holds", 1, 1,
                    "name the file <hostname>.ip-link.json (or <serial>.ip-link.json)")
        return found.result()
    try:
        links = json.loads(text)
    except json.JSONDecodeError as exc:
        found.error("MAC-SYNTAX", f"not JSON: {exc.msg}", exc.lineno, exc.colno,
                    "save what `ip -j link` prints, unchanged")
        return found.result()
    if not isinstance(links, list) or not all(isinstance(link, dict) for link in links):
        found.error("MAC-SYNTAX", "not `ip -j link` output (a JSON list of links)", 1, 1,
                    "save what `ip -j link` prints, unchanged")
        return found.result()
    starts = [m.end() for m in _IFNAME.finditer(text)]
    for index, link in enumerate(links):
        if link.get("ifname") != ipnet.interface:
            continue
        start = starts[index] if index < len(starts) else 0
        address = _ADDRESS.search(text, start)
        line, column = found.at(address.end() if address else start)
        mac = parse_mac(str(link.get("address", "")))
        if mac is None:
            found.error("MAC-SYNTAX", f"{host}'s {ipnet.interface} has no unicast MAC address "
                        f"({str(link.get('address'))[:40]!r})", line, column,
                        "the interface must be an Ethernet NIC")
        else:
            found.keep("management", host, mac, line, column)
        return found.result()
    found.error("MAC-NO-NIC", f"{host} has no interface {ipnet.interface!r}, the management "
                "network's (networks.management.interface)", 1, 1,
                "run `ip -j link` on the right node, or set networks.management.interface "
                "to the name the nodes give that NIC")
    return found.result()


def import_lldp(plan: Plan, text: str, file: str) -> tuple[list[Row], list[Diagnostic]]:
    """The MACs an access switch's LLDP table sees on its planned access ports."""
    found = _Found(plan, text, file)
    try:
        table = lldpcli.parse(text)
    except lldpcli.LldpError as exc:
        found.error("MAC-SYNTAX", exc.reason, max(exc.line, 1), 1,
                    "save what `lldpcli show neighbors -f json` prints, unchanged")
        return found.result()
    switch = table.local or PurePath(file).name.split(".")[0]
    planned: dict[str, tuple[str, str]] = {}  # port -> (network, device) on this switch
    port_of: dict[tuple[str, str], str] = {}  # (network, device) -> its switch:port
    for network, device, _rack, _slot, on, port in access_positions(plan):
        port_of[(network, device)] = f"{on}:{port}"
        if on == switch:
            planned[port] = (network, device)
    links = plan.links
    between: set[str] = set()  # its ports to other switches (uplinks, a peer link, below)
    for a, a_port, b, b_port in zip(links.a_device, links.a_port, links.b_device,
                                    links.b_port, strict=True):
        if a == switch:
            between.add(a_port)
        if b == switch:
            between.add(b_port)
    between -= planned.keys()
    if not planned:  # an aggregation or core switch hears only switches: nothing to take
        if switch not in {sw.name for sw in plan.switches if sw.network in NETWORKS}:
            found.error("MAC-UNKNOWN-HOST", f"{switch!r} is no management or BMC switch of the "
                        "plan (the table's 'show chassis', else the file's name)", 1, 1,
                        "run lldpcli on a planned access switch; name the file "
                        "<switch>.lldp.json")
        return found.result()
    devices = {device for _network, device in port_of}
    for neighbor in table.neighbors:
        excerpt = found.lines[neighbor.line - 1] if neighbor.line <= len(found.lines) else ""
        column = len(excerpt) - len(excerpt.lstrip()) + 1
        where = f"{switch}:{neighbor.interface}"
        if neighbor.interface in between:
            continue  # a switch above, below or beside: no NIC to reserve for
        if neighbor.system not in devices:
            found.error("MAC-UNKNOWN-HOST", f"the neighbour on {where} names itself "
                        f"{neighbor.system[:64] or 'nothing'!r}, which is no planned device",
                        neighbor.line, column, "set the device's hostname to its planned name "
                        "(lldpd sends it as the system name)")
            continue
        if neighbor.interface not in planned:
            found.error("MAC-WRONG-PORT", f"{neighbor.system} is seen on {where}, which is no "
                        "planned access port", neighbor.line, column,
                        "recable it to its planned port (cabling/cables.csv)")
            continue
        network, there = planned[neighbor.interface]
        if neighbor.system != there:
            expected = port_of.get((network, neighbor.system), "no port of that network")
            found.error("MAC-WRONG-PORT", f"{neighbor.system} is seen on {where}, where the "
                        f"plan cables {there}; {neighbor.system} belongs on {expected}",
                        neighbor.line, column, f"recable it to {expected}")
            continue
        if neighbor.port_type != "mac":
            continue  # its port sent by name: no MAC of the NIC in the table
        mac = parse_mac(neighbor.port_id)
        if mac is None:
            found.error("MAC-SYNTAX", f"the neighbour on {where} sends no unicast MAC "
                        f"({neighbor.port_id[:40]!r})", neighbor.line, column,
                        "save what `lldpcli show neighbors -f json` prints, unchanged")
            continue
        found.keep(network, there, mac, neighbor.line, column)
    return found.result()
