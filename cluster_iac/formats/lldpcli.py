"""lldpd's neighbour table as `lldpcli show neighbors -f json` (or `-f json0`) prints it, read
into one record per neighbour heard on a local port (cabling verify of Ethernet fabrics).

lldpd 1.0.x (tests/data/lldp/ holds real outputs and how they were made) writes, per local
interface, the neighbour's chassis (its system name as the key) and port::

    {"lldp": {"interface": {"rdma0": {"via": "LLDP", ...,
        "chassis": {"eth-leaf-su1-r1": {"id": {"type": "mac", "value": "86:a9:..."}, ...}},
        "port": {"id": {"type": "mac", "value": "4a:f2:..."}, "descr": "p1s1", "ttl": "4"}}}}}

The "json" form gives one interface as an object and several as a list of one-key objects;
a chassis that sends no system name is the chassis object itself. The "json0" form wraps every
value in a list and names things with "name" keys instead. `lldpcli -f json show chassis`
(the local chassis, {"local-chassis": ...}) may be in the same file, before or after: it names
whose table the file is. The file is a sequence of such JSON documents.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any, NamedTuple


class LldpError(ValueError):
    """Text that is not lldpcli's JSON, at a line (1-based; 0: the whole file)."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(f"line {line}: {reason}")
        self.line = line
        self.reason = reason


class Neighbor(NamedTuple):
    """One neighbour heard on a local interface: the local interface's name, the neighbour's
    system name ('' when it sends none), its port id and id subtype ('ifname', 'mac',
    'local'...), its port description, and the line of the record in the file."""

    interface: str
    system: str
    port_id: str
    port_type: str
    port_descr: str
    line: int


class Table(NamedTuple):
    """A device's neighbour table: the local chassis' name where the file holds
    `show chassis` output ('' otherwise), and every neighbour in the file's order."""

    local: str
    neighbors: tuple[Neighbor, ...]


_VIA = re.compile(r'"via"\s*:')  # one per neighbour record, in both forms (a key, never a value)


def detect(text: str) -> bool:
    """lldpcli's JSON: a JSON object whose first key is "lldp" or "local-chassis"."""
    return re.match(r'\s*\{\s*"(lldp|local-chassis)"\s*:', text[:4096]) is not None


def parse(text: str) -> Table:
    """The table in ``text``; LldpError at the line of what is not lldpcli's JSON."""
    documents = _documents(text)
    lines = line_numbers(text, (m.start() for m in _VIA.finditer(text)))
    local = ""
    neighbors: list[Neighbor] = []
    for start, document in documents:
        if not isinstance(document, dict) or not ({"lldp", "local-chassis"} & document.keys()):
            raise LldpError(start, "not lldpcli's JSON: no \"lldp\" (show neighbors) or "
                                   "\"local-chassis\" (show chassis) object")
        if "local-chassis" in document:
            local = _local(document["local-chassis"], start)
        for record in _records(document.get("lldp"), start):
            at = lines[len(neighbors)] if len(neighbors) < len(lines) else start
            neighbors.append(_neighbor(record, at))
    return Table(local, tuple(neighbors))


def line_numbers(text: str, offsets: Iterable[int]) -> list[int]:
    """The line (1-based) of each of ``offsets``, which rise: the text's line breaks are
    counted once, each from where the last offset's count stopped (a count from the start
    for each would be quadratic in a concatenation of many tables)."""
    out: list[int] = []
    line, counted = 1, 0
    for at in offsets:
        line += text.count("\n", counted, at)
        counted = at
        out.append(line)
    return out


def _documents(text: str) -> list[tuple[int, Any]]:
    """Every JSON document in the text, with the line it starts on."""
    decoder = json.JSONDecoder()
    out: list[tuple[int, Any]] = []
    at = counted = 0
    line = 1
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at >= len(text):
            break
        try:
            value, end = decoder.raw_decode(text, at)
        except json.JSONDecodeError as exc:
            raise LldpError(exc.lineno, f"not JSON: {exc.msg} (column {exc.colno})") from None
        line += text.count("\n", counted, at)
        counted = at
        out.append((line, value))
        at = end
    if not out:
        raise LldpError(0, "empty: no lldpcli output in the file")
    return out


def _unwrap(value: Any) -> Any:
    """json0's one-element list around every value, removed ('json' values pass as they are)."""
    while isinstance(value, list) and len(value) == 1:
        value = value[0]
    return value


def _text(value: Any) -> str:
    """A string value of either form: 'x' or json0's [{"value": "x"}]."""
    value = _unwrap(value)
    if isinstance(value, dict):
        value = value.get("value", "")
    return value if isinstance(value, str) else ""


def _records(lldp: Any, line: int) -> list[dict[str, Any]]:
    """Each neighbour record of a "lldp" value, with its local interface's name under
    "name" (the json0 form's own shape)."""
    lldp = _unwrap(lldp)
    if lldp in (None, {}, []):
        return []
    if not isinstance(lldp, dict):
        raise LldpError(line, "\"lldp\" is not an object")
    interfaces = lldp.get("interface", [])
    if isinstance(interfaces, dict):  # json: one interface, keyed by its name
        interfaces = [interfaces]
    if not isinstance(interfaces, list):
        raise LldpError(line, "\"interface\" is not a list or an object")
    out = []
    for entry in interfaces:
        if not isinstance(entry, dict):
            raise LldpError(line, "an interface entry is not an object")
        if "name" in entry and "via" in entry:  # json0
            out.append(entry)
            continue
        for name, record in entry.items():  # json: {name: record}
            if not isinstance(record, dict):
                raise LldpError(line, f"interface {name!r} is not an object")
            out.append({**record, "name": name})
    return out


def _neighbor(record: dict[str, Any], line: int) -> Neighbor:
    interface = _text(record.get("name"))
    if not interface:
        raise LldpError(line, "a neighbour record without its local interface's name")
    system = _system(_unwrap(record.get("chassis", {})), line)
    port = _unwrap(record.get("port", {}))
    if not isinstance(port, dict):
        raise LldpError(line, f"the port of the neighbour on {interface!r} is not an object")
    port_id = _unwrap(port.get("id", {}))
    if not isinstance(port_id, dict):
        raise LldpError(line, f"the port id of the neighbour on {interface!r} is not an object")
    return Neighbor(interface, system, _text(port_id.get("value")), _text(port_id.get("type")),
                    _text(port.get("descr")), line)


def _system(chassis: Any, line: int) -> str:
    """The neighbour's system name: json0's "name", json's key, or '' (none sent)."""
    if not isinstance(chassis, dict):
        raise LldpError(line, "a neighbour's chassis is not an object")
    if "name" in chassis or "id" in chassis:  # json0, or json's chassis without a name
        return _text(chassis.get("name"))
    return next(iter(chassis), "")


def _local(value: Any, line: int) -> str:
    """The local chassis' system name from `show chassis` output."""
    chassis = _unwrap(value)
    if isinstance(chassis, dict) and "chassis" in chassis:
        return _system(_unwrap(chassis["chassis"]), line)
    raise LldpError(line, "\"local-chassis\" without a chassis")
