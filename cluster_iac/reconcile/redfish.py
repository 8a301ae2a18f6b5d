"""Redfish inventory (a BMC's `/redfish/v1/Systems/<id>` and `/Chassis/<id>/Power`, saved as
JSON) against the plan: CPUs and memory of the node's type, and the PSUs its power plan
counts on (how many, and their rating); and, from those and the EthernetInterface resources
of the host and its BMC, the facts of delivered hardware (serial, MACs: redfish_facts.py).

A file is one resource, told by its "@odata.type": '#ComputerSystem.v1_*', '#Power.v1_*' or
'#EthernetInterface.v1_*' (the DMTF's mockups, tests/data/reconcile/, are real payloads).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from cluster_iac.plan import Plan
from cluster_iac.reconcile.finding import Discovery, Finding, ReadError
from cluster_iac.reconcile.places import node_type, place
from cluster_iac.reconcile.redfish_facts import NIC, nic_findings, serial_findings
from cluster_iac.reconcile.redfish_facts import facts as facts

KIND = "redfish"
_TYPES = ("#ComputerSystem.", "#Power.", NIC)


def detect(text: str) -> bool:
    """A Redfish ComputerSystem, Power or EthernetInterface resource."""
    head = text[:4096]
    return '"@odata.type"' in head and any(t in head for t in _TYPES)


def read(text: str) -> dict[str, Any]:
    """The resource; JSON that does not parse is refused at its line."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReadError(exc.lineno, f"not JSON: {exc.msg}") from None
    kind = str(data.get("@odata.type", "")) if isinstance(data, dict) else ""
    if not kind.startswith(_TYPES):
        raise ReadError(1, f"not a Redfish ComputerSystem, Power or EthernetInterface "
                           f"resource: {kind!r}")
    return data


def host(data: dict[str, Any]) -> str:
    """A ComputerSystem's HostName, where it has one."""
    return str(data.get("HostName") or "")


def compare(plan: Plan, found: Sequence[Discovery]) -> Iterator[Finding]:
    """Each resource against its node's type."""
    for item in found:
        nt = node_type(plan, item.host)
        if nt is None:
            yield Finding("RECONCILE-UNKNOWN-HOST", place(plan, item.host), "a Redfish "
                          "resource of a node the plan does not have", "name the file after "
                          "a planned node ('HOST.system.json')", str(item.path))
        elif item.data["@odata.type"].startswith("#Power."):
            yield from _power(plan, item, nt)
        elif item.data["@odata.type"].startswith(NIC):
            yield from nic_findings(plan, item)
        else:
            yield from _system(plan, item, nt)
            yield from serial_findings(plan, item)


def _system(plan: Plan, item: Discovery, nt: Any) -> Iterator[Finding]:
    data, where = item.data, place(plan, item.host)
    sockets = (data.get("ProcessorSummary") or {}).get("Count")
    if isinstance(sockets, int) and sockets != nt.sockets:
        yield Finding("RECONCILE-SERVER-CPUS", where, f"{sockets} CPU sockets where node type "
                      f"{nt.name} has {nt.sockets}", "fit the missing CPU, or change the node "
                      "type and render (slurm.conf's SocketsPerBoard follows it)", str(item.path))
    memory = (data.get("MemorySummary") or {}).get("TotalSystemMemoryGiB")
    if isinstance(memory, (int, float)) and memory != nt.memory_gib:
        yield Finding("RECONCILE-SERVER-MEMORY", where, f"{memory:g} GiB of memory where node "
                      f"type {nt.name} has {nt.memory_gib} GiB", "fit the planned DIMMs, or "
                      "set the node type's memory and render (slurm.conf's RealMemory follows "
                      "it)", str(item.path))


def _power(plan: Plan, item: Discovery, nt: Any) -> Iterator[Finding]:
    supplies = [p for p in item.data.get("PowerSupplies") or []
                if (p.get("Status") or {}).get("State") != "Absent"]
    where = place(plan, item.host)
    if nt.psu_count and len(supplies) != nt.psu_count:
        short = len(supplies) < nt.psu_required
        yield Finding("RECONCILE-PSU-COUNT", where, f"this node has {len(supplies)} PSUs where "
                      f"the power plan needs {nt.psu_count} ({nt.psu_required} to carry the "
                      "load)", ("it cannot carry its load: fit the missing PSUs before powering "
                                "it on" if short else
                                "fit the missing PSUs: until then its rack's A/B feeds are not "
                                "redundant (POWER-REDUNDANCY on that rack)"), str(item.path))
    ratings = sorted({int(p["PowerCapacityWatts"]) for p in supplies
                      if isinstance(p.get("PowerCapacityWatts"), (int, float))})
    low = [r for r in ratings if nt.psu_rating_w and r < nt.psu_rating_w]
    if low:
        yield Finding("RECONCILE-PSU-RATING", where, f"PSUs rated {', '.join(map(str, low))} W "
                      f"where the power plan counts {nt.psu_rating_w} W each",
                      "fit PSUs of the planned rating: the node's PSUs may not carry its "
                      "load with one feed down (POWER-REDUNDANCY)", str(item.path))
