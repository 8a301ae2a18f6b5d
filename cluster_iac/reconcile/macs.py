"""MAC addresses from a vendor shipping manifest, checked against the plan before the lock
records them (``cluster-iac macs import``): MACs are facts, never invented.

The manifest is a CSV file with a header line naming these columns (any order, others ignored):

| column | what it holds |
|---|---|
| ``serial`` | the chassis serial number as the vendor ships it (the rack crew's label) |
| ``host``   | the planned device the chassis was racked as (hostname, or a switch or PDU name) |
| ``mac``    | the NIC's MAC address: six hex pairs joined by ':' or '-' |
| ``port``   | where that NIC is cabled: ``<access switch>:<port>``, as in cabling/cables.csv |

The port says the network (the access switch's) and must be the port the plan cables the
device to on it. Every problem is located at the manifest's file:line:col and stops the import
as a whole: a serial the manifest places on no planned device (MAC-UNKNOWN-SERIAL), a MAC seen
on a port the plan gives another device (MAC-WRONG-PORT: a swapped pair is two of them), one
MAC twice, or a MAC the lock already holds for another device (MAC-DUPLICATE), a malformed
field (MAC-SYNTAX). Only then are the MACs merged into the lock.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass

from cluster_iac.base.errors import Diagnostic
from cluster_iac.compile.build_management import access_positions
from cluster_iac.plan import Plan

COLUMNS = ("serial", "host", "mac", "port")
_MAC = re.compile(r"[0-9a-fA-F]{2}([:-])[0-9a-fA-F]{2}(\1[0-9a-fA-F]{2}){4}")
_SERIAL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_PORT = re.compile(r"([a-z0-9][a-z0-9-]{0,62}):([A-Za-z0-9/._-]{1,32})")


def parse_mac(text: str) -> str | None:
    """The MAC in canonical form (lower case, ':'), or None: exactly six hex pairs with one
    separator, unicast (the I/G bit clear) and not all zero."""
    if not _MAC.fullmatch(text):
        return None
    mac = text.lower().replace("-", ":")
    first = int(mac[:2], 16)
    return None if first & 1 or mac == "00:00:00:00:00:00" else mac


@dataclass(frozen=True)
class Row:
    """One checked manifest line: which device's NIC on which network has which MAC."""

    network: str
    device: str
    mac: str
    line: int


def import_manifest(plan: Plan, text: str, file: str) -> tuple[list[Row], list[Diagnostic]]:
    """The manifest's rows checked against the plan and the lock's MACs: (rows, problems);
    any problem means nothing is imported."""
    planned = {(switch, port): (network, device)
               for network, device, _r, _p, switch, port in access_positions(plan)}
    ports_of = {(network, device): f"{switch}:{port}"
                for (switch, port), (network, device) in planned.items()}
    known = {device for _n, device in planned.values()}
    lines = text.splitlines()
    problems: list[Diagnostic] = []
    rows: list[Row] = []

    def error(code: str, message: str, line: int, column: int, hint: str) -> None:
        problems.append(Diagnostic(code, message, line=line, column=column, file=file,
                                   excerpt=lines[line - 1] if line <= len(lines) else "",
                                   hint=hint))

    header, records = _records(text)
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        error("MAC-SYNTAX", f"the manifest's header lacks the column(s) {', '.join(missing)}",
              1, 1, f"the first line names the columns: {','.join(COLUMNS)}")
        return [], problems
    seen: dict[str, int] = {}
    held = {entry.value[0]: entry.key[2] for network in ("management", "bmc")
            for entry in plan.lock.of_kind("mac", network)}
    for line, fields in records:
        cell = {name: (fields[i] if i < len(fields) else "", _column(fields, i))
                for name, i in header.items()}
        serial, host, mac_text, port = (cell[c][0].strip() for c in COLUMNS)
        mac = parse_mac(mac_text)
        at = _PORT.fullmatch(port)
        if not _SERIAL.fullmatch(serial):
            error("MAC-SYNTAX", f"serial {serial!r} is not a serial number", line,
                  cell["serial"][1], "letters, digits, '.', '_' and '-', at most 64")
            continue
        if host not in known:
            error("MAC-UNKNOWN-SERIAL", f"serial {serial} is racked as {host or 'nothing'!r}, "
                  "which the plan cables to no access port", line, cell["host"][1],
                  "name the planned device the chassis was racked as (its cables' labels name it: "
                  "cluster-iac labels TREE --rack RACK)")
            continue
        if mac is None:
            error("MAC-SYNTAX", f"{mac_text!r} is not a unicast MAC address", line,
                  cell["mac"][1], "six hex pairs joined by ':' or '-', e.g. 7c:fe:90:12:34:56")
            continue
        if at is None or (at.group(1), at.group(2)) not in planned:
            error("MAC-WRONG-PORT", f"serial {serial} ({host}, {mac}) is on {port!r}, which "
                  "is no planned access port", line, cell["port"][1],
                  "write the port as <access switch>:<port>, as cabling/cables.csv does")
            continue
        network, there = planned[(at.group(1), at.group(2))]
        if there != host:
            expected = ports_of.get((network, host), "no port of that network")
            error("MAC-WRONG-PORT", f"serial {serial} ({host}, {mac}) is seen on {port}, where "
                  f"the plan cables {there}; {host} belongs on {expected}", line,
                  cell["port"][1], f"recable it to {expected}, or correct the manifest's row")
            continue
        if mac in seen:
            error("MAC-DUPLICATE", f"MAC {mac} is listed twice (line {seen[mac]} and here)",
                  line, cell["mac"][1], "each NIC has its own MAC: check the manifest's rows")
            continue
        seen[mac] = line
        if held.get(mac, host) != host:
            error("MAC-DUPLICATE", f"MAC {mac} of {host} is already in the lock for "
                  f"{held[mac]}", line, cell["mac"][1],
                  "remove the old line from the lock if the NIC moved")
            continue
        rows.append(Row(network, host, mac, line))
    return rows, problems


def _column(fields: list[str], index: int) -> int:
    """1-based column of a field in its line (fields joined by ',', as the CSV wrote them)."""
    return 1 + sum(len(f) + 1 for f in fields[:index])


def _records(text: str) -> tuple[dict[str, int], Iterator[tuple[int, list[str]]]]:
    """The header's column -> index and the data lines (line number, fields), blank lines
    skipped. Fields are plain (no quoting): each is then checked strictly."""
    reader = csv.reader(io.StringIO(text), strict=True)
    try:
        first = next(reader)
    except StopIteration:
        return {}, iter(())
    header = {name.strip().lower(): i for i, name in enumerate(first)}

    def rows() -> Iterator[tuple[int, list[str]]]:
        for fields in reader:
            if fields and any(f.strip() for f in fields):
                yield reader.line_num, fields

    return header, rows()
