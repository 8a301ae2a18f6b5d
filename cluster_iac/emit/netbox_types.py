"""NetBox device types with their component templates, one YAML file per type.

A family of its own (emit/__init__.py): the interfaces are the links', and each PSU's type its
last cord's medium (its row of the cable table).

Each file is a devicetype-library document (netbox-community/devicetype-library's schema), the
YAML NetBox's own device type import reads (opened by '---', which the import page's default
'auto' format needs to take the text for YAML: utilities/forms/bulk_import.py
BulkImportForm._detect_format) (dcim/views.py DeviceTypeImportView: the type's
DeviceTypeImportForm fields, then 'interfaces', 'power-ports', 'power-outlets' lists read by
InterfaceTemplateImportForm, PowerPortTemplateImportForm and PowerOutletTemplateImportForm). A
device created from its type gets every component of these templates (Device.save()
instantiates them), so no per-device component file is needed: the cables end on them.

The templates are the components the plan cables: each model's interfaces (type from the
highest line rate seen on that port; a switch model its whole port series), PSUs (type from
the cord, draws from the power plan), and a PDU's inlet and every outlet (each on the inlet
and on the feed leg of the line the PDU profile wires it to). NetBox's draws are whole watts
(PowerPortTemplate maximum_draw and allocated_draw are positive integers): allocated is
rounded, maximum rounded up.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import compress, count
from typing import Any
from weakref import WeakKeyDictionary

from cluster_iac.base.runs import runs
from cluster_iac.base.sorting import natural_key
from cluster_iac.formats.yaml import yaml_text
from cluster_iac.plan import Plan
from cluster_iac.plan.physical import Device
from cluster_iac.plan.power import INLET
from cluster_iac.plan.power_outlets import outlet_lines

# netbox/dcim/choices.py InterfaceTypeChoices, by link layer and line rate (Gb/s). InfiniBand
# ports get the generation's plain slug, which every 4.x release accepts (NetBox labels it by
# lane rate: 'infiniband-ndr' reads "NDR (100 Gbps)"); the 4X slugs ('infiniband-ndr-4x', 400
# Gb/s) exist only since v4.6.9 (#21387), so a file using them would not load into older 4.x.
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
# PowerPortTypeChoices / PowerOutletTypeChoices for the cords the cabling plan chose: the
# device's inlet is the C14/C20 the cord's C13/C19 end plugs into.
POWER_PORT_TYPES = {"power-c13": "iec-60320-c14", "power-c19": "iec-60320-c20",
                    "power-60309-32a": "iec-60309-p-n-e-6h"}
# A PDU's inlet plug (PowerPortTypeChoices), by phases and voltage: IEC 60309's 6 h keying is
# 380-415 V three-phase (3P+N+E, a wye feed) and 200-250 V single-phase (P+N+E). Other
# supplies (208 V delta: NEMA L15-30P, IEC 60309 3P+E 9 h and others; 480 V) have several
# plugs in use: 'other' rather than a guess (the devicetype-library schema and a clean
# import want a type on every port).
INLET_TYPES = {(3, 400.0): "iec-60309-3p-n-e-6h", (3, 415.0): "iec-60309-3p-n-e-6h",
               (1, 230.0): "iec-60309-p-n-e-6h", (1, 240.0): "iec-60309-p-n-e-6h"}
OTHER = "other"  # PowerPortTypeChoices / PowerOutletTypeChoices TYPE_OTHER
GENERIC = "Generic"
BMC = "bmc"  # the out-of-band network: a device's own port on it is mgmt_only
NVIDIA = "NVIDIA"


def render(plan: Plan) -> dict[str, str]:
    """'netbox/device-types/<manufacturer>/<slug>.yaml' -> the type's YAML document."""
    return {f"netbox/device-types/{t.manufacturer}/{slug(t.model)}.yaml":
            yaml_text(t.document(slug(t.model)), start=True)
            for t in sorted(device_types(plan).values(), key=lambda t: t.model)}


def slug(name: str) -> str:
    """NetBox slug: lower-case letters, digits, '-' and '_'."""
    return re.sub(r"[^a-z0-9_-]+", "-", name.lower()).strip("-")


@dataclass
class DeviceType:
    """One model's type: where it comes from and the components its devices get."""

    manufacturer: str
    model: str
    u_height: int
    interfaces: dict[str, dict[str, Any]] = field(default_factory=dict)
    power_ports: dict[str, dict[str, Any]] = field(default_factory=dict)
    power_outlets: dict[str, dict[str, Any]] = field(default_factory=dict)

    def document(self, slug: str) -> dict[str, Any]:
        doc: dict[str, Any] = {"manufacturer": self.manufacturer, "model": self.model,
                               "slug": slug, "u_height": self.u_height,
                               "is_full_depth": self.u_height > 0}
        for key, parts in (("interfaces", self.interfaces), ("power-ports", self.power_ports),
                           ("power-outlets", self.power_outlets)):
            if parts:
                doc[key] = [{"name": name, **parts[name]}
                            for name in sorted(parts, key=natural_key)]
        return doc


def manufacturer(plan: Plan, d: Device) -> str:
    """'NVIDIA' for NVIDIA platforms and switches, 'Generic' for the rest."""
    if d.kind == "node":
        name = plan.node_types[d.model].platform_name
    elif d.kind == "switch":
        model = plan.catalog.switches.get(d.model)
        name = model.name if model else ""
    else:
        name = ""
    return NVIDIA if NVIDIA in name else GENERIC


def device_types(plan: Plan) -> dict[str, DeviceType]:
    """Model -> its device type with templates, from the cables and the power plan. Made
    once per plan and kept while the plan lives (_TYPES): NetBox's devices.csv counts each
    type's components to cut its parts (emit/netbox.py device_parts), and the two families
    render in one process (emit/parallel.py TOGETHER).
    The caller must not change what it answers."""
    types = _TYPES.get(plan)
    if types is None:
        types = _TYPES[plan] = _device_types(plan)
    return types


_TYPES: WeakKeyDictionary[Plan, dict[str, DeviceType]] = WeakKeyDictionary()
"""Each plan's device types, by the plan's identity; held by a weak reference, so a plan let
go (the changes command frees its plan before it reads the trees) takes them with it."""


def _device_types(plan: Plan) -> dict[str, DeviceType]:
    types: dict[str, DeviceType] = {}
    for d in plan.devices:
        if d.model not in types:
            types[d.model] = DeviceType(manufacturer(plan, d), d.model, max(d.height_u, 0))
    model_of = {d.name: d.model for d in plan.devices}
    _interfaces(plan, model_of, types)
    _psus(plan, model_of, types)
    _pdus(plan, model_of, types)
    return types


def _interfaces(plan: Plan, model_of: dict[str, str], types: dict[str, DeviceType]) -> None:
    """Every cabled network port (the links': the cable table's data cables are they), both
    ends, its type from the fastest link on that port; a switch model gets its whole numbered
    series ('p1'...'p64') at the switch's port rate, so its type does not change when another
    rack cables one more port. mgmt_only marks a device's own port on the BMC network (a BMC,
    a switch's mgmt0), never the switch port at the other end of that cable."""
    links = plan.links
    seen: set[tuple[str, str, str, int, bool]] = set()
    # by runs of one network, tier, link and rate (the builders append a few), each end's
    # distinct (model, port) pairs
    for start, stop in runs(links.network, links.tier, links.link, links.speed_gbps):
        network, link, speed = links.network[start], links.link[start], links.speed_gbps[start]
        for devices, ports, own in ((links.a_device, links.a_port, network == BMC),
                                    (links.b_device, links.b_port, False)):
            seen.update((model, port, link, speed, own)
                        for model, port in _model_ports(model_of, devices[start:stop],
                                                        ports[start:stop]))
    fastest: dict[tuple[str, str], tuple[int, str, bool]] = {}
    for model, port, link, speed, mgmt in seen:
        best = fastest.get((model, port), (-1, "", False))
        fastest[(model, port)] = max(best, (speed, link, mgmt or best[2]))
    fastest.update(_switch_series(plan, fastest))
    for (model, port), (speed, link, mgmt) in fastest.items():
        types[model].interfaces[port] = {
            "type": INTERFACE_TYPES.get((link, speed), "other"), "mgmt_only": mgmt}


def _model_ports(model_of: dict[str, str], devices: tuple[str, ...],
                 ports: tuple[str, ...]) -> set[tuple[str, str]]:
    """The distinct (model, port) of cable ends: when the devices are all of one model, that
    model with each distinct port (no pair made per cable)."""
    models = set(map(model_of.__getitem__, set(devices)))
    if len(models) == 1:
        model = models.pop()
        return {(model, port) for port in set(ports)}
    return set(zip(map(model_of.__getitem__, devices), ports, strict=True))


_SERIES = re.compile(r"^([a-z]+)(\d+)$")


def _switch_series(plan: Plan, fastest: dict[tuple[str, str], tuple[int, str, bool]]
                   ) -> dict[tuple[str, str], tuple[int, str, bool]]:
    """Each switch model's numbered ports 1..ports under each prefix its cables use."""
    size: dict[str, tuple[int, int]] = {}
    for sw in plan.switches:
        size[sw.model] = max(size.get(sw.model, (0, 0)), (sw.ports, sw.port_speed_gbps))
    links: dict[tuple[str, str], str] = {}
    for (model, port), (_speed, link, mgmt) in fastest.items():
        match = _SERIES.match(port)
        if model in size and match and not mgmt and int(match[2]) <= size[model][0]:
            links[(model, match[1])] = max(links.get((model, match[1]), ""), link)
    return {(model, f"{prefix}{n}"): (size[model][1], link, False)
            for (model, prefix), link in links.items() for n in range(1, size[model][0] + 1)}


def _psus(plan: Plan, model_of: dict[str, str], types: dict[str, DeviceType]) -> None:
    """Each model's PSUs with the plan's draws: the type's maximum is the most any of its
    devices draws on that PSU; allocated is the normal draw (the same on every device of a
    model, as the power pass splits a device's draw over its PSUs). A PSU's name and type are
    its last cord's row of the cable table (its medium: the cord the plan chose for its rating
    and length; the cords' rows follow the links'); each distinct draw is compared once."""
    cords = plan.power_cords
    models = list(map(model_of.__getitem__, [c.device for c in cords]))
    numbers = [c.psu for c in cords]
    # (model, PSU number) -> its last cord
    last = dict(zip(zip(models, numbers, strict=True), count(), strict=False))
    cables, first = plan.cables, len(plan.links)
    rows = [first + cord for cord in last.values()]
    a_port = [cables.a_port[row] for row in rows]
    names = dict(zip(last, a_port, strict=True))
    for (model, _number), psu, row in zip(last, a_port, rows, strict=True):
        medium = cables.medium[row]
        types[model].power_ports[psu] = {"type": POWER_PORT_TYPES.get(medium, OTHER)}
    draws: dict[tuple[str, int], list[float]] = defaultdict(lambda: [0.0, 0.0])
    for model, number, allocated, maximum in set(zip(models, numbers,
                                                     [c.allocated_w for c in cords],
                                                     [c.maximum_w for c in cords],
                                                     strict=True)):
        pair = draws[(model, number)]
        pair[0] = max(pair[0], allocated)
        pair[1] = max(pair[1], maximum, allocated)
    for key, (allocated, maximum) in draws.items():
        port = types[key[0]].power_ports[names[key]]
        port["maximum_draw"] = max(1, math.ceil(maximum))
        port["allocated_draw"] = max(1, round(allocated))


def _pdus(plan: Plan, model_of: dict[str, str], types: dict[str, DeviceType]) -> None:
    """Each PDU profile's inlet and every outlet, on the inlet and its line's feed leg. An
    outlet's type is the profile's outlet_type, else 'other': from the spec alone, so that a
    rack added with other cords changes no device type (the cords plugged in so far would)."""
    cords = plan.power_cords
    names = [c.inlet for c in cords]
    pdu_models = map(model_of.__getitem__, [c.pdu for c in cords])
    # each PDU model's last named inlet (a cord names its PDU's inlet, or none)
    inlets = dict(compress(zip(pdu_models, names, strict=True), names))
    profiles = plan.settings.power.pdu_profiles
    for d in plan.devices:
        if d.kind != "pdu" or d.model not in profiles or types[d.model].power_outlets:
            continue
        p = profiles[d.model]
        inlet = inlets.get(d.model, INLET)
        types[d.model].power_ports[inlet] = {
            "type": INLET_TYPES.get((p.phases, float(p.voltage_v)), OTHER)}
        for number, leg in outlet_lines(p.outlets, p.circuits, p.voltage_v, p.phases,
                                        p.outlet_wiring == "banked"):
            outlet: dict[str, Any] = {"type": p.outlet_type or OTHER, "power_port": inlet}
            if leg:
                outlet["feed_leg"] = leg
            types[d.model].power_outlets[f"outlet{number}"] = outlet
