"""NetBox CSV bulk-import files: sites, racks, device types, devices, interfaces, cables, power.

Column names are those of NetBox's bulk-import forms (netbox/dcim/forms/bulk_import.py, NetBox
4.x: e.g. CableImportForm side_a_device/side_a_type/side_a_name/..., DeviceImportForm 'role'),
and choice values are NetBox's slugs from netbox/dcim/choices.py (CableTypeChoices 'dac-passive',
'dac-active', 'aoc', 'mmf-om4', 'smf-os2', 'cat6', 'power'; InterfaceTypeChoices
'infiniband-hdr', 'infiniband-ndr', '1000base-t', '400gbase-x-osfp', ...).
"""

from __future__ import annotations

import re

from cluster_iac.emit.cabling import Cable, plan_cables
from cluster_iac.emit.devices import Device, devices
from cluster_iac.emit.formats import csv_text
from cluster_iac.plan import Plan

# netbox/dcim/choices.py InterfaceTypeChoices, by link layer and line rate (Gb/s).
INTERFACE_TYPES = {
    ("infiniband", 100): "infiniband-edr",
    ("infiniband", 200): "infiniband-hdr",
    ("infiniband", 400): "infiniband-ndr",
    ("infiniband", 800): "infiniband-xdr",
    ("ethernet", 1): "1000base-t",
    ("ethernet", 25): "25gbase-x-sfp28",
    ("ethernet", 100): "100gbase-x-qsfp28",
    ("ethernet", 200): "200gbase-x-qsfp56",
    ("ethernet", 400): "400gbase-x-osfp",
    ("ethernet", 800): "800gbase-x-osfp",
}
# PowerPortTypeChoices / PowerOutletTypeChoices for the cords the cabling plan chose.
POWER_PORT_TYPES = {"power-c13": "iec-60320-c14", "power-c19": "iec-60320-c20",
                    "power-60309-32a": "iec-60309-p-n-e-6h"}  # 230 V single-phase, blue
POWER_OUTLET_TYPES = {"power-c13": "iec-60320-c13", "power-c19": "iec-60320-c19",
                      "power-60309-32a": "iec-60309-p-n-e-6h"}
STATUS = "planned"  # DeviceStatusChoices / RackStatusChoices / LinkStatusChoices 'planned'

COLUMNS = {
    "sites": ("name", "slug", "status"),
    "manufacturers": ("name", "slug"),
    "device_roles": ("name", "slug", "color"),
    "device_types": ("manufacturer", "model", "slug", "u_height", "is_full_depth"),
    "racks": ("site", "name", "status", "width", "u_height"),
    "devices": ("name", "role", "manufacturer", "device_type", "status", "site", "rack",
                "position", "face"),
    "interfaces": ("device", "name", "type", "enabled", "mgmt_only"),
    "cables": ("side_a_device", "side_a_type", "side_a_name", "side_b_device", "side_b_type",
               "side_b_name", "type", "status", "label", "length", "length_unit"),
    "power_panels": ("site", "name"),
    "power_feeds": ("site", "power_panel", "rack", "name", "status", "type", "supply", "phase",
                    "voltage", "amperage", "max_utilization"),
    "power_ports": ("device", "name", "type", "maximum_draw"),
    "power_outlets": ("device", "name", "type", "feed_leg"),
}
ROLE_COLORS = {"compute": "76b900", "controller": "2196f3", "login": "03a9f4",
               "lustre_mds": "9c27b0", "lustre_oss": "673ab7", "service": "607d8b",
               "pdu": "ff9800"}


def render(plan: Plan) -> dict[str, str]:
    devs = devices(plan)
    cables = plan_cables(plan)
    tables = {
        "sites": [[plan.cluster.site, slug(plan.cluster.site), "active"]],
        "racks": [[plan.cluster.site, r.name, STATUS, "19", str(r.height_u)] for r in plan.racks],
        "devices": [_device_row(plan, d) for d in devs],
        "cables": [_cable_row(c) for c in cables],
        **_types(plan, devs),
        **_interfaces_and_power(plan, devs, cables),
        **_feeds(plan),
    }
    return {f"netbox/{name}.csv": csv_text(COLUMNS[name], tables[name]) for name in COLUMNS}


def slug(name: str) -> str:
    """NetBox slug: lower-case letters, digits, '-' and '_'."""
    return re.sub(r"[^a-z0-9_-]+", "-", name.lower()).strip("-")


def _manufacturer(plan: Plan, d: Device) -> str:
    if d.kind == "node":
        name = plan.node_types[d.model].platform_name
    elif d.kind == "switch":
        model = plan.catalog.switches.get(d.model)
        name = model.name if model else ""
    else:
        name = ""
    return "NVIDIA" if "NVIDIA" in name else "Generic"


def _role(d: Device) -> str:
    return d.role if d.kind != "switch" else f"{d.role}-switch"


def _types(plan: Plan, devs: list[Device]) -> dict[str, list[list[str]]]:
    types = {(_manufacturer(plan, d), d.model): d.height_u for d in devs}
    roles = sorted({_role(d) for d in devs})
    return {
        "manufacturers": [[m, slug(m)] for m in sorted({m for m, _ in types})],
        "device_roles": [[r, slug(r), ROLE_COLORS.get(r, "9e9e9e")] for r in roles],
        "device_types": [[m, model, slug(model), str(h), "true"]
                         for (m, model), h in sorted(types.items())],
    }


def _device_row(plan: Plan, d: Device) -> list[str]:
    racked = d.u is not None and d.u > 0 and d.height_u > 0
    return [d.name, _role(d), _manufacturer(plan, d), d.model, STATUS, plan.cluster.site,
            d.rack, str(d.u) if racked else "", "front" if racked else ""]


def _interface_type(link: str, speed: int) -> str:
    return INTERFACE_TYPES.get((link, speed), "other")


def _cable_row(c: Cable) -> list[str]:
    if c.network == "power":
        a_type, b_type = "dcim.poweroutlet", "dcim.powerport"
    else:
        a_type = b_type = "dcim.interface"
    return [c.a.device, a_type, c.a.port, c.b.device, b_type, c.b.port, c.medium.netbox_type,
            STATUS, c.cable_id, f"{c.length_m:g}", "m"]


def _interfaces_and_power(plan: Plan, devs: list[Device],
                          cables: list[Cable]) -> dict[str, list[list[str]]]:
    """Every cabled port: interfaces for data cables, outlets and inlets for power cords."""
    link_of = {s.name: s for s in plan.switches}
    interfaces, ports, outlets = {}, {}, {}
    for c in cables:
        if c.network == "power":
            outlets[(c.a.device, c.a.port)] = [c.a.device, c.a.port,
                                               POWER_OUTLET_TYPES[c.medium.key], ""]
            ports[(c.b.device, c.b.port)] = [c.b.device, c.b.port,
                                             POWER_PORT_TYPES[c.medium.key], ""]
            continue
        layer = "infiniband" if c.medium.key != "cat6" and _is_ib(plan, c, link_of) else "ethernet"
        for end in (c.a, c.b):
            interfaces[(end.device, end.port)] = [
                end.device, end.port, _interface_type(layer, c.speed_gbps), "true",
                "true" if c.network == "bmc" else "false"]
    return {"interfaces": [interfaces[k] for k in sorted(interfaces)],
            "power_ports": [ports[k] for k in sorted(ports)],
            "power_outlets": [outlets[k] for k in sorted(outlets)]}


def _is_ib(plan: Plan, c: Cable, switches: dict) -> bool:
    """A fabric cable is InfiniBand when the switch at either end is an InfiniBand model."""
    for end in (c.a, c.b):
        switch = switches.get(end.device)
        if switch is not None and switch.model in plan.catalog.switches:
            return plan.catalog.switches[switch.model].link == "infiniband"
    return False


def _feeds(plan: Plan) -> dict[str, list[list[str]]]:
    """Power panels and feeds from the power graph's 'feed' nodes (one panel per row)."""
    graph = plan.graphs.get("power")
    site = plan.cluster.site
    profiles = plan.settings.power.pdu_profiles
    panels: set[str] = set()
    feeds = []
    racks = {r.name: r for r in plan.racks}
    for name, data in sorted((graph.nodes(data=True) if graph is not None else []),
                             key=lambda nd: str(nd[0])):
        if data.get("kind") != "feed":
            continue
        rack = racks.get(str(data.get("rack", "")))
        panel = str(data.get("panel") or f"{rack.row if rack else 'site'}-panel")
        panels.add(panel)
        profile = profiles.get(rack.pdu_profile) if rack else None
        phase = "three-phase" if profile and profile.phases == 3 else "single-phase"
        feeds.append([site, panel, rack.name if rack else "", str(name), STATUS,
                      "primary" if str(data.get("side", "A")) in ("A", "a") else "redundant",
                      "ac", phase, f"{profile.voltage_v:g}" if profile else "",
                      f"{profile.breaker_a:g}" if profile else "",
                      f"{plan.settings.policy.breaker_continuous_percent:g}"])
    return {"power_panels": [[site, p] for p in sorted(panels)], "power_feeds": feeds}
