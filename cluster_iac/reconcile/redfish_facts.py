"""What a BMC's Redfish resources tell that the plan cannot know before delivery: the chassis
serial (ComputerSystem SerialNumber) and the MACs of the NICs on the management and BMC
networks (EthernetInterface resources), offered to the lock by ``reconcile --accept``.

Which network a NIC is on, from the resource alone (DMTF's public-rackmount1 mockup holds
all three kinds):
- under ``/redfish/v1/Managers/``: the BMC's own NIC, on the BMC network, unless it is the
  host interface (Links.HostInterface: the BMC's USB NIC to its own host) or disabled
  (InterfaceEnabled false);
- under ``/redfish/v1/Systems/``: the host's NIC on the management network when one of its
  IPv4Addresses is the host's planned management address; the host's other NICs are not the
  plan's business and are passed over.
The MAC is PermanentMACAddress (the one burned in, which PXE's boot ROM sends), else MACAddress.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from cluster_iac.lock.grammar import SERIAL
from cluster_iac.plan import Plan
from cluster_iac.reconcile.accept import Fact
from cluster_iac.reconcile.finding import Discovery, Finding
from cluster_iac.reconcile.macs import parse_mac
from cluster_iac.reconcile.places import device, place

NIC = "#EthernetInterface."


def nic(plan: Plan, item: Discovery) -> tuple[str, str] | None:
    """(network, MAC as reported) of a NIC resource on a planned network, or None."""
    data = item.data
    path = str(data.get("@odata.id") or "")
    links = data.get("Links") if isinstance(data.get("Links"), dict) else {}
    mac = data.get("PermanentMACAddress") or data.get("MACAddress")
    if not isinstance(mac, str):
        return None
    if path.startswith("/redfish/v1/Managers/"):
        if "HostInterface" in links or data.get("InterfaceEnabled") is False:
            return None
        network = "bmc"
    elif path.startswith("/redfish/v1/Systems/"):
        planned = plan.addresses.get("management", {}).get(item.host)
        found = {a.get("Address") for a in data.get("IPv4Addresses") or []
                 if isinstance(a, dict)}
        if planned is None or planned not in found:
            return None
        network = "management"
    else:
        return None
    if item.host not in plan.addresses.get(network, {}):
        return None
    return network, mac


def _what(network: str, data: dict[str, Any]) -> str:
    return (f"the {'BMC' if network == 'bmc' else 'management'} NIC "
            f"{str(data.get('Id', ''))[:40]!r}")


def nic_findings(plan: Plan, item: Discovery) -> Iterator[Finding]:
    """A planned NIC whose reported MAC is no NIC's (a group address, zero, malformed)."""
    found = nic(plan, item)
    if found is not None and parse_mac(found[1]) is None:
        yield Finding("RECONCILE-FACT-INVALID", place(plan, item.host),
                      f"{_what(found[0], item.data)} reports MAC {found[1][:40]!r}, which is "
                      "no NIC's (a NIC's MAC is six hex pairs, unicast: the first octet even, "
                      "and not zero)", "read the MAC from the NIC's label or the vendor's "
                      "manifest and import it ('cluster-iac macs import')", str(item.path))


def serial_findings(plan: Plan, item: Discovery) -> Iterator[Finding]:
    """A planned server whose reported serial the lock cannot hold."""
    serial = item.data.get("SerialNumber")
    if isinstance(serial, str) and serial and not SERIAL.fullmatch(serial):
        yield Finding("RECONCILE-FACT-INVALID", place(plan, item.host),
                      f"the ComputerSystem reports serial {serial[:70]!r}, which is not a "
                      "serial number the lock holds (letters, digits, '.', '_', '-'; at "
                      "most 64)", "read the serial from the chassis label", str(item.path))


def facts(plan: Plan, found: Sequence[Discovery]) -> Iterator[Fact]:
    """Each planned server's serial and its planned NICs' MACs."""
    for item in found:
        if device(plan, item.host) is None:
            continue
        kind = str(item.data.get("@odata.type", ""))
        if kind.startswith("#ComputerSystem."):
            serial = item.data.get("SerialNumber")
            if isinstance(serial, str) and SERIAL.fullmatch(serial):
                yield Fact("serial", "", item.host, serial, str(item.path),
                           "the ComputerSystem's SerialNumber")
        elif kind.startswith(NIC):
            at = nic(plan, item)
            mac = parse_mac(at[1]) if at is not None else None
            if at is not None and mac is not None:
                yield Fact("mac", at[0], item.host, mac, str(item.path),
                           _what(at[0], item.data))
