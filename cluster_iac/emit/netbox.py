"""NetBox CSV bulk-import files: sites, racks, device types, devices, interfaces, cables, power.

Column names are those of NetBox's bulk-import forms (netbox/dcim/forms/bulk_import.py, NetBox
4.x: e.g. CableImportForm side_a_device/side_a_type/side_a_name/..., DeviceImportForm 'role'),
and choice values are NetBox's slugs from netbox/dcim/choices.py (CableTypeChoices 'dac-passive',
'dac-active', 'aoc', 'mmf-om4', 'smf-os2', 'cat6', 'power'; InterfaceTypeChoices
'infiniband-hdr', 'infiniband-ndr', '1000base-t', '400gbase-x-osfp', ...).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import compress

from cluster_iac.catalog.cables import cable_catalog
from cluster_iac.emit.formats import csv_columns, csv_text, text_of
from cluster_iac.plan import Plan
from cluster_iac.plan.physical import Cables, Device, Ports

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
    devs = plan.devices
    tables = {
        "sites": [[plan.cluster.site, slug(plan.cluster.site), "active"]],
        "racks": [[plan.cluster.site, r.name, STATUS, "19", str(r.height_u)] for r in plan.racks],
        "devices": [_device_row(plan, d) for d in devs],
        **_types(plan, devs),
        **_feeds(plan),
    }
    files = {f"netbox/{name}.csv": csv_text(COLUMNS[name], rows) for name, rows in tables.items()}
    files["netbox/cables.csv"] = csv_columns(COLUMNS["cables"], _cable_columns(plan.cables))
    for name, columns in _port_columns(plan.ports).items():
        files[f"netbox/{name}.csv"] = csv_columns(COLUMNS[name], columns)
    return {f"netbox/{name}.csv": files[f"netbox/{name}.csv"] for name in COLUMNS}


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


def _types(plan: Plan, devs: tuple[Device, ...]) -> dict[str, list[list[str]]]:
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


def _cable_columns(c: Cables) -> list[Sequence[object]]:
    netbox = {m.key: m.netbox_type for m in cable_catalog().media}
    a_type = {net: "dcim.powerport" if net == "power" else "dcim.interface"
              for net in set(c.network)}
    b_type = {net: "dcim.poweroutlet" if net == "power" else "dcim.interface"
              for net in set(c.network)}
    n = len(c)
    return [c.a_device, list(map(a_type.__getitem__, c.network)), c.a_port, c.b_device,
            list(map(b_type.__getitem__, c.network)), c.b_port,
            list(map(netbox.__getitem__, c.medium)), (STATUS,) * n, c.cable_id,
            text_of(c.length_m), ("m",) * n]


def _port_columns(p: Ports) -> dict[str, list[Sequence[object]]]:
    """Every cabled port: interfaces for data cables, inlets and outlets for power cords."""
    found: dict[str, list[Sequence[object]]] = {}
    kinds = p.kind
    for table, kind in (("interfaces", "interface"), ("power_ports", "power-port"),
                        ("power_outlets", "power-outlet")):
        mask = [k == kind for k in kinds]
        device, port = list(compress(p.device, mask)), list(compress(p.port, mask))
        n = len(device)
        if kind == "interface":
            layer = list(compress(zip(p.link, p.speed_gbps, strict=True), mask))
            types = {key: INTERFACE_TYPES.get(key, "other") for key in set(layer)}
            mgmt = {net: "true" if net == "bmc" else "false" for net in set(p.network)}
            found[table] = [device, port, list(map(types.__getitem__, layer)), ("true",) * n,
                            list(map(mgmt.__getitem__, compress(p.network, mask)))]
        else:
            names = POWER_PORT_TYPES if kind == "power-port" else POWER_OUTLET_TYPES
            found[table] = [device, port, list(map(names.__getitem__, compress(p.medium, mask))),
                            ("",) * n]
    return found


def _feeds(plan: Plan) -> dict[str, list[list[str]]]:
    """Power panels (one per row and side) and feeds (one per PDU) from plan.power_feeds."""
    site = plan.cluster.site
    feeds = [[site, f.panel, f.rack, f.name, STATUS, "primary" if f.side == "A" else "redundant",
              "ac", "single-phase" if f.phases == 1 else "three-phase", f"{f.voltage_v:g}",
              f"{f.amperage_a:g}", f"{100 * f.limit_a / f.amperage_a:g}"]
             for f in sorted(plan.power_feeds, key=lambda f: f.name)]
    panels = sorted({f.panel for f in plan.power_feeds})
    return {"power_panels": [[site, p] for p in panels], "power_feeds": feeds}
