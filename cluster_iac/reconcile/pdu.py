"""PDU outlet readings against the plan's power cords: an outlet drawing where the plan has
no cord, a planned cord whose outlet draws nothing, and a device drawing through fewer cords
than planned (the power plan's one-failure case no longer holds for its rack: POWER-REDUNDANCY).

The readings are the ServerTech Sentry4-MIB's st4OutletActivePower (OID
1.3.6.1.4.1.1718.4.1.8.3.1.7, indexed st4UnitIndex.st4InputCordIndex.st4OutletIndex; integer
watts), the outlet column that the monitoring's snmp.yml (module 'sentry4') walks beside the
input cord, line and branch columns. A plan PDU is Sentry4 unit 1 with one input cord
(emit/monitoring/power_rules.py), so planned outlet N is index 1.1.N. Read in any of these
forms, one reading a line, other lines passed over:

- net-snmp's `snmpwalk` with the Sentry4-MIB loaded (its default output):
  ``Sentry4-MIB::st4OutletActivePower.1.1.3 = INTEGER: 412 Watts``
- `snmpwalk` without the MIB: ``SNMPv2-SMI::enterprises.1718.4.1.8.3.1.7.1.1.3 = INTEGER: 412``
- `snmpwalk -On`: ``.1.3.6.1.4.1.1718.4.1.8.3.1.7.1.1.3 = INTEGER: 412``
- Prometheus' exposition format (snmp_exporter's answer for one PDU, or a federated dump whose
  'pdu' label names the PDU): ``st4OutletActivePower{st4InputCordIndex="1",st4OutletIndex="3",
  st4UnitIndex="1"} 412``

An snmpwalk file is one PDU's, named after it (``r01-pdu-a.snmpwalk``). A reading of -1 (the
MIB's 'not available') is no reading. "Draws nothing" is a reading of 0 W: the column's
resolution is 1 W.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator, Sequence

from cluster_iac.plan import Plan
from cluster_iac.plan.power_tables import PowerCord
from cluster_iac.reconcile.finding import Discovery, Finding, ReadError
from cluster_iac.reconcile.places import node_type, place

KIND = "pdu"
METRIC = "st4OutletActivePower"
OID = "1.3.6.1.4.1.1718.4.1.8.3.1.7"
_SNMP = re.compile(
    r"(?:Sentry4-MIB::st4OutletActivePower|SNMPv2-SMI::enterprises\.1718\.4\.1\.8\.3\.1\.7|"
    r"\.?1\.3\.6\.1\.4\.1\.1718\.4\.1\.8\.3\.1\.7)\.(\d+)\.(\d+)\.(\d+) = INTEGER: (-?\d+)"
    r"(?: Watts)?")
_PROM = re.compile(r"st4OutletActivePower\{([^}]*)\} (\S+)(?: \d+)?")
_ROW = re.compile(r"st4OutletActivePower[.{]|1718\.4\.1\.8\.3\.1\.7\.")  # this column's
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')
Index = tuple[str, int, int, int]  # (PDU named in the line or '', unit, input cord, outlet)


def detect(text: str) -> bool:
    """A dump holding Sentry4 outlet power readings."""
    head = text[:65536]
    return METRIC in head or OID in head or "enterprises.1718.4.1.8.3.1.7." in head


def read(text: str) -> dict[Index, int]:
    """(pdu, unit, cord, outlet) -> watts; a line naming the column that is not a reading
    is refused at its number."""
    out: dict[Index, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#") or _ROW.search(line) is None:
            continue  # another column (st4OutletActivePowerStatus ...), a comment
        snmp = _SNMP.fullmatch(line)
        if snmp is not None:
            unit, cord, outlet, watts = map(int, snmp.groups())
            out[("", unit, cord, outlet)] = watts
            continue
        prom = _PROM.fullmatch(line)
        if prom is None:
            raise ReadError(number, f"not an {METRIC} reading (snmpwalk's 'NAME.unit.cord."
                                    "outlet = INTEGER: W' or Prometheus' 'NAME{labels} W')")
        labels = dict(_LABEL.findall(prom.group(1)))
        try:
            index = ("st4UnitIndex", "st4InputCordIndex", "st4OutletIndex")
            unit, cord, outlet = (int(labels[name]) for name in index)
            value = float(prom.group(2))
        except (KeyError, ValueError):
            raise ReadError(number, f"an {METRIC} sample without its three index labels "
                                    "or with a value that is not a number") from None
        if value != value or abs(value) > 1e9:  # NaN, or no PDU's reading
            raise ReadError(number, f"{prom.group(2)!r} is not an outlet's power in W")
        pdu = labels.get("pdu", "")
        out[(pdu if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}", pdu) else "",
             unit, cord, outlet)] = round(value)
    if not out:
        raise ReadError(0, f"no {METRIC} reading")
    return out


def host(data: dict[Index, int]) -> str:
    """The PDU the lines name, when they name one and only one."""
    named = {pdu for pdu, *_ in data}
    return next(iter(named)) if len(named) == 1 else ""


def compare(plan: Plan, found: Sequence[Discovery]) -> Iterator[Finding]:
    """Each PDU's outlets against the cords planned on it; then each device whose every
    cord was read and draws through fewer of them than planned."""
    cords: dict[str, dict[int, PowerCord]] = defaultdict(dict)
    for cord in plan.power_cords:
        cords[cord.pdu][cord.outlet] = cord
    pdus = {d.name for d in plan.power_devices if d.kind == "pdu"}
    drawing: dict[tuple[str, int], tuple[int, str]] = {}  # (device, psu) -> (W, file)
    for item in found:
        readings: dict[str, dict[tuple[int, int, int], int]] = defaultdict(dict)
        for (pdu, unit, cord, outlet), watts in item.data.items():
            readings[pdu or item.host][(unit, cord, outlet)] = watts
        for pdu, table in readings.items():
            if pdu not in pdus:
                yield Finding("RECONCILE-UNKNOWN-HOST", f"{pdu} (not a planned PDU)",
                              "outlet readings of a PDU the plan does not have", "name the "
                              "file after a planned PDU ('r01-pdu-a.snmpwalk') or label its "
                              "samples pdu=\"NAME\"", str(item.path))
                continue
            yield from _outlets(plan, pdu, table, cords[pdu], str(item.path), drawing)
    yield from _psu_counts(plan, drawing)


def _outlets(plan: Plan, pdu: str, table: dict[tuple[int, int, int], int],
             planned: dict[int, PowerCord], file: str,
             drawing: dict[tuple[str, int], tuple[int, str]]) -> Iterator[Finding]:
    rack = next((c.rack for c in planned.values()), "")
    for (unit, inlet, outlet), watts in sorted(table.items()):
        if watts > 0 and ((unit, inlet) != (1, 1) or outlet not in planned):
            at = f"outlet {outlet}" if (unit, inlet) == (1, 1) else \
                f"unit {unit} cord {inlet} outlet {outlet}"
            yield Finding("RECONCILE-PDU-UNPLANNED-DRAW", f"{pdu} {at}{_in(rack)}",
                          f"draws {watts} W where the plan has no cord", "find what is "
                          "plugged there and move it to its planned outlet "
                          "(facility/pdu_breakers.csv), or add it to the spec: its load is "
                          "in no breaker's sum", file)
    for outlet, cord in sorted(planned.items()):
        reading = table.get((1, 1, outlet))
        if reading is None or reading < 0:
            continue  # no reading of that outlet
        drawing[(cord.device, cord.psu)] = (reading, file)
        if reading == 0:
            yield Finding("RECONCILE-PDU-NO-DRAW", f"{cord.device} PSU{cord.psu} "
                          f"({pdu} outlet {outlet}{_in(cord.rack)})", "the planned cord's "
                          "outlet draws 0 W", f"plug {cord.device}'s PSU{cord.psu} into "
                          f"{pdu} outlet {outlet}, or power the device on; check the "
                          "outlet is switched on", file)


def _in(rack: str) -> str:
    return f", rack {rack}" if rack else ""


def _psu_counts(plan: Plan, drawing: dict[tuple[str, int], tuple[int, str]]
                ) -> Iterator[Finding]:
    """A device some of whose cords draw and others not, every cord read."""
    by_device: dict[str, list[PowerCord]] = defaultdict(list)
    for cord in plan.power_cords:
        by_device[cord.device].append(cord)
    for device, cords in by_device.items():
        read = [drawing.get((device, c.psu)) for c in cords]
        if any(r is None for r in read):
            continue
        live = [c for c, r in zip(cords, read, strict=True) if r is not None and r[0] > 0]
        if not live or len(live) == len(cords):
            continue  # off (each cord is a finding of its own) or as planned
        idle = [f"PSU{c.psu} ({c.pdu} outlet {c.outlet})" for c in cords if c not in live]
        nt = node_type(plan, device)
        short = nt is not None and len(live) < nt.psu_required
        rack = cords[0].rack
        yield Finding(
            "RECONCILE-PDU-PSU-COUNT", place(plan, device),
            f"draws through {len(live)} of its {len(cords)} planned cords; idle: "
            f"{', '.join(idle)}",
            ("fewer PSUs than its load needs: plug them before it runs jobs; until then "
             if short else "plug the idle cord(s) or replace the PSU(s): until then ") +
            f"the power plan's one-failure case no longer holds for rack {rack} "
            f"(POWER-REDUNDANCY on rack {rack})",
            next(r[1] for r in read if r is not None))
