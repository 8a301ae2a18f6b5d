"""Arista EOS's LLDP neighbour table as `show lldp neighbors detail | json` prints it (eAPI's
JSON of the same command), read into lldpcli's records (formats/lldpcli.py ``Table``), so
cabling verify reads a switch's own table as it reads lldpd's.

The shape (tests/data/lldp/eos/ holds a real output, its source in the README there)::

    {"lldpNeighbors": {"Ethernet27/1": {"lldpNeighborInfo": [
        {"systemName": "some-switch", "chassisId": "fc66.1003.5413", ...,
         "neighborInterfaceInfo": {"interfaceIdType": "interfaceName",
                                   "interfaceId": "\\"et-0/0/20\\"",
                                   "interfaceDescription": "et-0/0/20", ...}}]},
        "Ethernet12": {"lldpNeighborInfo": []}, ...}}

One key per local interface (EOS's name: 'Ethernet57', a lane 'Ethernet1/2'), each with its
neighbours (none on a port that hears nothing). The neighbour's port id is ``interfaceId``,
quoted inside the string when it is a name (EOS prints names so), or ``interfaceId_v2``
unquoted where a release gives it; ``interfaceIdType`` its LLDP subtype (IEEE 802.1AB
section 8.5.3.2) in EOS's words, mapped here to lldpcli's. The table names no local chassis.
"""

from __future__ import annotations

import json
import re
from typing import Any

from cluster_iac.formats.lldpcli import LldpError, Neighbor, Table, line_numbers

# EOS's port id subtypes -> lldpcli's (the words reconcile/ethernet.py knows)
PORT_TYPES = {"interfaceName": "ifname", "macAddress": "mac", "local": "local",
              "interfaceAlias": "ifalias", "networkAddress": "ip",
              "portComponent": "component", "agentCircuitId": "agentid"}
_INFO = re.compile(r'"lldpNeighborInfo"\s*:')  # one per local interface, in document order


def detect(text: str) -> bool:
    """EOS's JSON: an object whose first key is "lldpNeighbors"."""
    return re.match(r'\s*\{\s*"lldpNeighbors"\s*:', text[:4096]) is not None


def parse(text: str) -> Table:
    """The table in ``text``; LldpError at the line of what is not EOS's JSON."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LldpError(exc.lineno, f"not JSON: {exc.msg} (column {exc.colno})") from None
    if not isinstance(document, dict) or not isinstance(document.get("lldpNeighbors"), dict):
        raise LldpError(1, "not EOS's `show lldp neighbors detail | json`: no "
                           "\"lldpNeighbors\" object")
    lines = line_numbers(text, (m.start() for m in _INFO.finditer(text)))
    neighbors: list[Neighbor] = []
    for index, (interface, body) in enumerate(document["lldpNeighbors"].items()):
        line = lines[index] if index < len(lines) else 1
        records = body.get("lldpNeighborInfo") if isinstance(body, dict) else None
        if not isinstance(records, list):
            raise LldpError(line, f"interface {interface!r} has no \"lldpNeighborInfo\" list")
        neighbors += [_neighbor(interface, record, line) for record in records]
    return Table("", tuple(neighbors))


def _neighbor(interface: str, record: Any, line: int) -> Neighbor:
    if not isinstance(record, dict):
        raise LldpError(line, f"a neighbour of {interface!r} is not an object")
    port = record.get("neighborInterfaceInfo")
    if not isinstance(port, dict):
        raise LldpError(line, f"the neighbour on {interface!r} has no "
                              "\"neighborInterfaceInfo\" object")
    port_id = port.get("interfaceId_v2", port.get("interfaceId", ""))
    if not isinstance(port_id, str):
        raise LldpError(line, f"the port id of the neighbour on {interface!r} is not a string")
    kind = port.get("interfaceIdType", "")
    return Neighbor(interface, _string(record.get("systemName")), _unquoted(port_id),
                    PORT_TYPES.get(kind, kind) if isinstance(kind, str) else "",
                    _string(port.get("interfaceDescription")), line)


def _unquoted(text: str) -> str:
    """EOS quotes a name inside the string ('"Ethernet1"'); a MAC it does not."""
    return text[1:-1] if len(text) >= 2 and text[0] == text[-1] == '"' else text


def _string(value: Any) -> str:
    return value if isinstance(value, str) else ""
