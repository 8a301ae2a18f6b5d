"""LLDP neighbour tables (`lldpcli show neighbors -f json`, one file per switch or host, or an
Arista switch's own `show lldp neighbors detail | json`: formats/eos_lldp.py) against the
plan's Ethernet cables: ethernet.py's verify as a reconcile source.

Whose table a file is: the first dot-separated part of its name where that is a planned
device ('eth-leaf-su1-r1.lldp.json'), else the local chassis' name where the file also holds
`lldpcli -f json show chassis` output, else the name's part (a device the plan does not have
is then reported: RECONCILE-LLDP-DEVICE).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from cluster_iac.formats import eos_lldp, lldpcli
from cluster_iac.formats.lldpcli import LldpError, Table
from cluster_iac.plan import Plan
from cluster_iac.reconcile.ethernet import verify
from cluster_iac.reconcile.finding import Discovery, Finding, ReadError
from cluster_iac.reconcile.infiniband import CABLE_FIXES, Mismatch, describe
from cluster_iac.reconcile.places import device, host_of, place

KIND = "lldp"
CODES = {"missing": "RECONCILE-LLDP-MISSING", "miswired": "RECONCILE-LLDP-MISWIRED",
         "extra": "RECONCILE-LLDP-EXTRA", "unseen": "RECONCILE-LLDP-UNSEEN"}
FIXES = {**CABLE_FIXES,
         "unseen": "power the device on, plug its cables and run lldpd on it (or collect its "
                   "table); every cable of it is then checked again"}


def detect(text: str) -> bool:
    """`lldpcli ... -f json` (or json0) output, or EOS's `show lldp neighbors detail | json`."""
    return lldpcli.detect(text) or eos_lldp.detect(text)


def read(text: str) -> Table:
    """The neighbour table; what is not lldpcli's (or EOS's) JSON is refused at its line."""
    try:
        return eos_lldp.parse(text) if eos_lldp.detect(text) else lldpcli.parse(text)
    except LldpError as exc:
        raise ReadError(exc.line, exc.reason) from None


def host(data: Table) -> str:
    """The local chassis' name, where the file holds `show chassis` output."""
    return data.local


def compare(plan: Plan, found: Sequence[Discovery]) -> Iterator[Finding]:
    """Every table together against the plan's Ethernet cables (a cable is seen from either
    end); each finding is filed under the table of one of its ends."""
    tables: list[tuple[str, Table]] = []
    paths: dict[str, str] = {}
    for item in found:
        if device(plan, item.host) is None:
            yield Finding("RECONCILE-LLDP-DEVICE", place(plan, item.host), "an LLDP table of "
                          "a device the plan does not have", "name the file after a planned "
                          "device ('DEVICE.lldp.json')", str(item.path))
            continue
        tables.append((item.host, item.data))
        paths.setdefault(item.host, str(item.path))
    for mismatch in verify(plan, tables).mismatches:
        yield finding(plan, mismatch, _path(plan, mismatch, paths))


def read_tables(plan: Plan, paths: Sequence[Path]
                ) -> tuple[list[tuple[str, Table]], list[tuple[Path, int, str]]]:
    """Each file's table and the planned device it is of (see the module's docstring), and
    each file not read or not of a planned device: (path, line or 0, why)."""
    tables: list[tuple[str, Table]] = []
    errors: list[tuple[Path, int, str]] = []
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            errors.append((path, 0, f"cannot read: {exc.strerror or exc}"))
            continue
        if not detect(text):
            errors.append((path, 1, "not an LLDP table: `lldpcli show neighbors -f json`, or "
                                    "Arista EOS's `show lldp neighbors detail | json`"))
            continue
        try:
            table = read(text)
        except ReadError as exc:
            errors.append((path, exc.line, exc.reason))
            continue
        owner = host_of(plan, path, table.local)
        if device(plan, owner) is None:
            errors.append((path, 0, f"whose table is this? {owner!r} is not a planned device: "
                                    "name the file DEVICE.lldp.json"))
            continue
        tables.append((owner, table))
    return tables, errors


def _path(plan: Plan, mismatch: Mismatch, paths: dict[str, str]) -> str:
    """The file a finding is filed under: the table of a planned end, else of a found end;
    a device not seen, the table of the first device planned to be cabled to it."""
    names = [mismatch.switch]
    if mismatch.switch:
        names += [c.b_device if c.a_device == mismatch.switch else c.a_device
                  for c in plan.cables.rows() if mismatch.switch in (c.a_device, c.b_device)]
    if mismatch.planned is not None:
        names += [mismatch.planned.a_device, mismatch.planned.b_device]
    names += [end.device for ends in mismatch.found for end in ends]
    return next((paths[name] for name in names if name in paths), "")


def finding(plan: Plan, mismatch: Mismatch, path: str) -> Finding:
    """A mismatch as a finding: its code, the cable's label (or the device) and the fix."""
    where = (mismatch.planned.cable_id if mismatch.planned is not None
             else mismatch.switch or "link")
    fix = FIXES[mismatch.kind]
    if mismatch.kind == "miswired" and mismatch.planned is not None:
        cable = mismatch.planned
        fix = (f"move the cable to {cable.a_device} {cable.a_port} <-> {cable.b_device} "
               f"{cable.b_port} (label {cable.cable_id})")
    return Finding(CODES[mismatch.kind], where, describe(plan, mismatch), fix, path)
